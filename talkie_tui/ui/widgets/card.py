"""Result cards (§6): every block type, with fallbackText for what this client cannot draw.

Accessible label: terminals expose no accessibility tree, so the card's `label` (`a11yLabel`,
else the title, else the fallback text) is set as the widget's `name` (for code and tests), as
its `tooltip` (shown on hover), and as its border title when `a11yLabel` says something the
title does not, so a screen reader reading the terminal meets it first. A label that only
wraps the title ("Company card Alfa s.r.o." over "Alfa s.r.o.") is not drawn: the card would
show the title twice.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

from talkie_tui.chat.vocabulary import (
    BadgeBlock,
    Card,
    FieldsBlock,
    FileBlock,
    HeadingBlock,
    LinkBlock,
    ListBlock,
    TextBlock,
    UnknownBlock,
)
from talkie_tui.core.sanitize import clean_text
from talkie_tui.i18n import N_, _, ngettext, pgettext
from talkie_tui.ui.messages import DownloadRequested
from talkie_tui.ui.widgets.link import ActivatableRow, LinkRow, Row
from talkie_tui.ui.widgets.markdown_view import MarkdownView

__all__ = [
    "BadgeView",
    "CardView",
    "FieldsView",
    "FileRow",
    "human_size",
    "render_block",
    "render_text_block",
]

# Wider labels are wrapped, so one long label cannot push every value off screen.
MAX_LABEL_WIDTH = 28


def human_size(size: int) -> str:
    """A byte count for people: `512 B`, `48.2 kB`, `3.1 MB` (powers of 1000).

    The decimal point is the UI language's ("48,2 kB" in Czech).
    """
    if size < 1000:
        return f"{size} B"
    value = float(size)
    for unit in ("kB", "MB", "GB", "TB"):
        value /= 1000
        if value < 1000 or unit == "TB":
            if value >= 100:
                return f"{value:.0f} {unit}"
            number = f"{value:.1f}".replace(".", pgettext("decimal separator", "."))
            return f"{number} {unit}"
    raise AssertionError("unreachable")  # pragma: no cover


def plain(text: str, classes: str) -> Static:
    """A Static showing server text literally (never parsed as markup)."""
    return Static(Content(text), markup=False, classes=classes)


def render_text_block(block: TextBlock) -> Widget:
    """A `text` block in the Markdown subset of §7, drawn like the assistant's text."""
    return MarkdownView(block.text, classes="card--text")


class FieldsView(Widget):
    """Label/value pairs with the labels aligned in one column."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"fields--label", "fields--value"}

    def __init__(self, block: FieldsBlock) -> None:
        super().__init__(classes="card--fields")
        self.block = block

    def render(self) -> Table:
        """A two-column Rich grid built from Text objects (no markup)."""
        # Through the visual style, so translucent theme colours ($text-muted) are blended.
        label_style = self.get_visual_style("fields--label").rich_style
        value_style = self.get_visual_style("fields--value").rich_style
        grid = Table.grid(padding=(0, 2), expand=True)
        grid.add_column(max_width=MAX_LABEL_WIDTH, overflow="fold")
        grid.add_column(ratio=1, overflow="fold")
        for item in self.block.fields:
            grid.add_row(Text(item.label, style=label_style), Text(item.value, style=value_style))
        return grid


class BadgeView(Static):
    """A short status word drawn as a pill coloured by its tone."""

    def __init__(self, block: BadgeBlock) -> None:
        super().__init__(Content(block.text), markup=False, classes=f"badge -{block.tone}")
        self.block = block


class FileRow(ActivatableRow):
    """A downloadable file: name, type and size, and a Download affordance."""

    HELP_GROUP = N_("File row")

    def __init__(self, block: FileBlock) -> None:
        # `mime` is not cleaned by the model (it is not meant for display), so clean it here.
        details = [clean_text(block.mime)] if block.mime else []
        if block.size is not None:
            details.append(human_size(block.size))
        super().__init__(
            block.name,
            marker="⬇",
            detail=" · ".join(details) or None,
            hint=_("Download"),
            classes="card--file",
        )
        self.block = block
        self.tooltip = Content(block.url)

    def activate(self) -> None:
        """Post DownloadRequested; the screen downloads (with the token only same-origin)."""
        self.post_message(DownloadRequested(self.block))


def _heading(block: HeadingBlock, card: Card) -> Iterator[Widget]:
    yield plain(block.text, "card--heading")


def _text(block: TextBlock, card: Card) -> Iterator[Widget]:
    yield render_text_block(block)


def _fields(block: FieldsBlock, card: Card) -> Iterator[Widget]:
    yield FieldsView(block)


def _list(block: ListBlock, card: Card) -> Iterator[Widget]:
    for item in block.items:
        if item.url:
            yield LinkRow(
                item.title,
                item.url,
                marker="›",
                detail=item.subtitle,
                stacked=False,
                classes="card--item",
            )
        else:
            yield Row(item.title, marker="›", detail=item.subtitle, classes="card--item")
    if block.more:
        more = ngettext("+{count} more", "+{count} more", block.more)
        yield plain(more.format(count=block.more), "card--more")


def _link(block: LinkBlock, card: Card) -> Iterator[Widget]:
    yield LinkRow(block.label, block.url, classes="card--link")


def _file(block: FileBlock, card: Card) -> Iterator[Widget]:
    yield FileRow(block)


def _badge(block: BadgeBlock, card: Card) -> Iterator[Widget]:
    yield BadgeView(block)


_RENDERERS: dict[type[Any], Callable[[Any, Card], Iterator[Widget]]] = {
    HeadingBlock: _heading,
    TextBlock: _text,
    FieldsBlock: _fields,
    ListBlock: _list,
    LinkBlock: _link,
    FileBlock: _file,
    BadgeBlock: _badge,
}


def render_block(block: object, card: Card) -> list[Widget] | None:
    """The widgets for one block, or None when this client cannot draw it."""
    renderer = _RENDERERS.get(type(block))
    return list(renderer(block, card)) if renderer is not None else None


def _says_more(label: str, title: str | None) -> bool:
    """Whether the accessible label says something the title does not (neither holds the other)."""

    def words(text: str) -> str:
        return " ".join(text.casefold().split())

    shown = words(title or "")
    return not shown or (shown not in words(label) and words(label) not in shown)


class CardView(Widget):
    """A result card: title (a link when the card has a `url`), subtitle and blocks."""

    def __init__(self, card: Card, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=card.label, id=id, classes=f"card {classes or ''}".strip())
        self.card = card
        self.tooltip = Content(card.label)
        if card.a11y_label and _says_more(card.a11y_label, card.title):
            self.border_title = Content(card.a11y_label)

    def compose(self) -> ComposeResult:
        """Title, subtitle, then each block; the fallback text stands in for unknown blocks."""
        card = self.card
        if card.title and card.url:
            yield LinkRow(card.title, card.url, marker="", stacked=False, classes="card--title")
        elif card.title:
            yield plain(card.title, "card--title")
        if card.subtitle:
            yield plain(card.subtitle, "card--subtitle")
        fallback_shown = False
        for block in card.blocks:
            widgets = None if isinstance(block, UnknownBlock) else render_block(block, card)
            if widgets is not None:
                yield from widgets
            elif not fallback_shown:
                # One fallback says it all; repeating it for each unknown block adds nothing.
                fallback_shown = True
                yield plain(card.fallback_text, "card--fallback")
        if not card.blocks and not card.title:
            yield plain(card.fallback_text, "card--fallback")
