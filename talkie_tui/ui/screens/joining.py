"""The chat drawn first: a known server's chat as far as talkie knows it, while it connects.

`talkie connect URL` to a server in the known-servers file shows this at once, over the
connect screen that does the work (discovery, sign-in): the header with the server's name as
kept from the last time and "connecting…" (never "connected" before it is, issue 20), and the
message box. The keys typed meanwhile are held by the app's `TypeAhead` for the chat's
composer (issue 15); this screen only shows them: the text as it will be in the composer, and
the messages an Enter sends once the server is there. The chat screen takes its place when the
server has answered; a failure, a question of the sign-in or Esc shows the connect screen.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widgets import Static

from talkie_tui.core.sanitize import clean_text
from talkie_tui.i18n import N_, _
from talkie_tui.ui.chat.type_ahead import TypeAhead, TypedAhead
from talkie_tui.ui.support.localized import LocalizedBindings
from talkie_tui.ui.widgets.header import TalkieHeader
from talkie_tui.ui.widgets.split_row import one_line

__all__ = ["JoiningScreen"]


class JoiningScreen(LocalizedBindings[bool]):
    """A known server's chat before it answers: its kept name, the message box."""

    HELP_GROUP = N_("Connecting")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "stop", N_("Stop connecting")),
    ]

    class Drawn(Message):
        """The screen is drawn whole: what it waits for may start."""

    def __init__(self, name: str, address: str, type_ahead: TypeAhead) -> None:
        super().__init__()
        # The file is the user's own, but the name came from the server: cleaned once more.
        self._server_name = one_line(clean_text(name))
        self._server_address = one_line(clean_text(address))
        self._type_ahead = type_ahead

    def compose(self) -> ComposeResult:
        """The chat's frame: header, the messages waiting to go, the message box."""
        yield TalkieHeader(self._server_name, id="header")
        with Horizontal(id="body"), Vertical(id="main"):
            with VerticalScroll(id="transcript"):
                note = _("Connecting to {address}…").format(address=self._server_address)
                yield Static(Content(note), id="joining-note")
                yield Static(Content(""), id="joining-sent")
            box = Static(Content(""), id="composer", classes="-joining")
            box.border_title = _("Message")
            yield box

    def on_mount(self) -> None:
        """Show what was typed before this screen was up, and every key from now on."""
        self._type_ahead.on_change = self.show_typed
        self.show_typed(self._type_ahead.typed())
        header = self.query_one(TalkieHeader)
        self.call_after_refresh(header.watch_state, "connecting")  # once the header is up
        # Drawn whole once more, once the app has started: Textual drops a frame made while
        # it starts (one batch of updates), and sends only what changes after.
        self.app.call_later(self._draw_whole)

    def _draw_whole(self) -> None:
        self.refresh(layout=True)
        self.call_after_refresh(self.post_message, self.Drawn())

    def on_unmount(self) -> None:
        """The chat (or the connect screen) takes the keys from here on."""
        if self._type_ahead.on_change == self.show_typed:
            self._type_ahead.on_change = None

    def show_typed(self, typed: TypedAhead) -> None:
        """The composer's text to come, with a cursor, and the messages waiting to be sent."""
        box = self.query_one("#composer", Static)
        # Plain Content: typed text is never read as markup.
        box.update(Content.assemble(typed.text, (" ", "reverse")))
        later = _("sent once connected")
        waiting = [
            Content.assemble((_("You") + ": ", "bold"), text, "\n", (later, "dim"))
            for text in typed.sent
        ]
        self.query_one("#joining-sent", Static).update(Content("\n").join(waiting))

    def action_stop(self) -> None:
        """Stop connecting: the connect screen shows the address again."""
        self.dismiss(True)
