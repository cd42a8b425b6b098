"""Focusable rows that open something on Enter or a click, and the `talkie.open` link view."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.content import Content
from textual.events import Click
from textual.style import Style
from textual.widget import Widget

from talkie_tui.chat.vocabulary import OpenLink
from talkie_tui.i18n import N_
from talkie_tui.ui.messages import OpenLinkRequested

__all__ = ["ActivatableRow", "LinkRow", "LinkView", "Row"]


class Row(Widget):
    """One line (or two) of server text: marker, title, detail, URL and a hint.

    Every piece of text is placed as plain `Content`, never parsed as markup. The parts are
    styled through component classes so the colours live in `cards.tcss`.
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "row--marker",
        "row--title",
        "row--detail",
        "row--url",
        "row--hint",
    }

    def __init__(
        self,
        title: str,
        *,
        marker: str = "",
        detail: str | None = None,
        url: str | None = None,
        hint: str | None = None,
        stacked: bool = False,
        classes: str | None = None,
    ) -> None:
        super().__init__(classes=classes)
        self.title = title
        self.marker = marker
        self.detail = detail
        self.url = url
        self.hint = hint
        # Stacked rows show the URL on a line of its own, so a long label never hides it.
        self.stacked = stacked
        if url:
            self.tooltip = Content(url)

    def render(self) -> Content:
        """The row as styled plain text."""

        def part(text: str, component: str) -> tuple[str, Style]:
            return text, self.get_visual_style(component)

        parts: list[str | tuple[str, Style]] = []
        if self.marker:
            parts.append(part(f"{self.marker} ", "row--marker"))
        parts.append(part(self.title, "row--title"))
        if self.detail:
            parts.append(part(f"  {self.detail}", "row--detail"))
        if self.url:
            # The gap before the URL is not part of it: underlined, it drew a line before it.
            parts.append("\n  " if self.stacked else "  ")
            parts.append(part(self.url, "row--url"))
        if self.hint:
            parts.append(part("  ", "row--detail"))
            parts.append(part(f" {self.hint} ", "row--hint"))
        return Content.assemble(*parts)


class ActivatableRow(Row, can_focus=True):
    """A row that does something on Enter or a click (and only then)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter", "activate", N_("Open"), show=False)]

    def activate(self) -> None:
        """Do what the row stands for (post a message); subclasses decide."""
        raise NotImplementedError

    def action_activate(self) -> None:
        """Enter on the focused row."""
        self.activate()

    def on_click(self, event: Click) -> None:
        """A click is a gesture just like Enter."""
        event.stop()
        self.activate()


class LinkRow(ActivatableRow):
    """A row that asks the screen to open `url` (the screen applies the link policy)."""

    HELP_GROUP = N_("Link row")

    def __init__(
        self,
        label: str,
        url: str,
        *,
        marker: str = "↗",
        detail: str | None = None,
        stacked: bool = True,
        classes: str | None = None,
    ) -> None:
        # Without a label the URL is the title; it is not repeated on a second line.
        super().__init__(
            label or url,
            marker=marker,
            detail=detail,
            url=url if label else None,
            stacked=stacked,
            classes=classes,
        )
        self.label = label
        self.target = url
        self.tooltip = Content(url)

    def activate(self) -> None:
        """Post OpenLinkRequested; the screen checks the URL and opens it."""
        self.post_message(OpenLinkRequested(self.target, self.label))


class LinkView(LinkRow):
    """A `talkie.open` suggestion: label and URL visible; opens only on Enter or a click."""

    HELP_GROUP = N_("Link view")

    def __init__(self, link: OpenLink, *, classes: str | None = None) -> None:
        super().__init__(link.label, link.url, classes=f"link-view {classes or ''}".strip())
        self.link = link
