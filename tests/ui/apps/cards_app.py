"""A harness app for cards, links, tool status, notices and logos; it records posted messages."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path, PurePath

from textual._compositor import LayoutUpdate
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Input

import talkie_tui.ui
from talkie_tui.protocol.talkie.cards import Card
from talkie_tui.ui.messages import (
    DecisionRequested,
    DownloadRequested,
    OpenLinkRequested,
    RetryRequested,
)

STYLES = Path(talkie_tui.ui.__file__).parent / "styles"
# Text blocks are Markdown; typed as App.CSS_PATH is (a list is invariant: list[Path] fails).
CARDS_TCSS: list[str | PurePath] = [
    STYLES / "cards.tcss",
    STYLES / "markdown.tcss",
    STYLES / "logo.tcss",
]

Factory = Callable[[], Iterable[Widget]]


class HarnessApp(App[None]):
    """Shows the widgets `factory` makes in a scrolling column, optionally under a composer."""

    CSS_PATH = CARDS_TCSS

    def __init__(self, factory: Factory, *, composer: str | None = None) -> None:
        super().__init__()
        self.factory = factory
        self.composer_text = composer
        self.posted: list[Message] = []

    def compose(self) -> ComposeResult:
        """The widgets, and a composer Input when asked for."""
        with VerticalScroll(id="transcript"):
            yield from self.factory()
        if self.composer_text is not None:
            yield Input(self.composer_text, id="composer", select_on_focus=False)

    def on_mount(self) -> None:
        """A composer holding text has the focus, as in the chat screen."""
        if self.composer_text is not None:
            self.query_one("#composer", Input).focus()

    def on_open_link_requested(self, message: OpenLinkRequested) -> None:
        """Record."""
        self.posted.append(message)

    def on_download_requested(self, message: DownloadRequested) -> None:
        """Record."""
        self.posted.append(message)

    def on_decision_requested(self, message: DecisionRequested) -> None:
        """Record."""
        self.posted.append(message)

    def on_retry_requested(self, message: RetryRequested) -> None:
        """Record."""
        self.posted.append(message)

    def of_type(self, kind: type[Message]) -> list[Message]:
        """The recorded messages of one type."""
        return [message for message in self.posted if isinstance(message, kind)]


EVERY_BLOCK = Card.model_validate(
    {
        "id": "c1",
        "title": "Alfa s.r.o.",
        "subtitle": "Klient · Brno",
        "url": "/?record=abc",
        "blocks": [
            {"type": "badge", "text": "Aktivní", "tone": "positive"},
            {"type": "badge", "text": "Dluh", "tone": "negative"},
            {"type": "heading", "text": "Přehled"},
            {"type": "text", "text": "Klient od roku 2019. [b]not bold[/b] [@click=app.quit]x[/]"},
            {
                "type": "fields",
                "fields": [
                    {"label": "IČO", "value": "12345678"},
                    {"label": "Obrat", "value": "1,2 mil. Kč"},
                ],
            },
            {
                "type": "list",
                "items": [
                    {"title": "Schůzka 10:00", "subtitle": "Novák", "url": "/?record=x"},
                    {"title": "Telefonát", "subtitle": "Dvořák"},
                ],
                "more": 3,
            },
            {"type": "link", "label": "Otevřít v CRM", "url": "https://crm.example.com/a"},
            {
                "type": "file",
                "name": "Nabídka N-2026-014.pdf",
                "mime": "application/pdf",
                "size": 48211,
                "url": "/api/files/123.pdf",
            },
            {"type": "chart", "points": [1, 2, 3]},
        ],
        "fallbackText": "Alfa s.r.o. – klient v Brně, aktivní",
        "a11yLabel": "Karta klienta Alfa s.r.o.",
    }
)


def screen_text(app: App[object]) -> str:
    """What the screen shows, as plain text lines (styles dropped)."""
    update = app.screen._compositor.render_update(full=True)
    assert isinstance(update, LayoutUpdate)  # a full update is always a layout
    lines = ["".join(segment.text for strip in line for segment in strip) for line in update.strips]
    return "\n".join(line.rstrip() for line in lines)
