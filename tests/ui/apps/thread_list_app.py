"""A harness app with one ThreadList at a fixed clock; it records the messages the list posts."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from textual import on
from textual.app import App, ComposeResult
from textual.message import Message

from talkie_tui.protocol.talkie.models import Thread
from talkie_tui.ui.widgets.thread_list import ThreadList
from tests.ui.apps.connect_app import stylesheets

NOW = datetime(2026, 3, 18, 15, 30, tzinfo=UTC)


def sample_threads() -> list[Thread]:
    """A dozen threads of every age and both channels, newest first."""
    rows = [
        ("Invoice for Novák s.r.o.", "chat", timedelta(seconds=20)),
        ("Call with Café Louvre", "voice", timedelta(minutes=3)),
        ("Quarterly pipeline review", "chat", timedelta(hours=2)),
        ("[b]Markup[/b] stays [@click=app.quit]plain[/]", "chat", timedelta(hours=5)),
        (
            "Follow up with Zoë about the renewal of the support contract",
            "chat",
            timedelta(hours=20),
        ),
        ("Voice note: new leads", "voice", timedelta(days=1, hours=3)),
        ("Draft offer for Łódź office", "chat", timedelta(days=3)),
        ("Lost deals last month", "chat", timedelta(days=12)),
        ("Contacts without e-mail", "chat", timedelta(days=60)),
        ("", "chat", timedelta(days=200)),
        ("Import from the old CRM", "chat", timedelta(days=500)),
    ]
    return [
        Thread(id=f"t{index}", title=title, channel=channel, updated_at=NOW - age)
        for index, (title, channel, age) in enumerate(rows)
    ]


class ThreadListApp(App[None]):
    """One ThreadList filling the screen."""

    CSS_PATH = stylesheets("threads")  # type: ignore[assignment]

    def __init__(self, threads: Sequence[Thread] = ()) -> None:
        super().__init__()
        self.initial_threads = list(threads)
        self.posted: list[Message] = []

    def compose(self) -> ComposeResult:
        yield ThreadList(self.initial_threads, now=lambda: NOW, tz=UTC, id="threads")

    @property
    def thread_list(self) -> ThreadList:
        """The list under test."""
        return self.query_one(ThreadList)

    @on(ThreadList.Selected)
    @on(ThreadList.DeleteRequested)
    @on(ThreadList.NewRequested)
    @on(ThreadList.FindAgentsRequested)
    def _record(self, event: Message) -> None:
        self.posted.append(event)
