"""Choosing a message in the transcript: Shift+↑ and Shift+↓ (or a click) select one, `r`
answers it.

The transcript is a `MessageCursor`: its keys work while it, or something in it, has the focus
(Tab reaches it; ↑ ↓ PgUp PgDn still scroll). The selected turn is marked with `-selected`
(styled in app.tcss) and scrolled into view. `r` posts `ReplyRequested` with it, or with None
when none is selected; the screen answers it, and says so where the server takes no replies
(it tells the transcript, `replies_offered`, which keeps `r` out of the footer there).
"""

from __future__ import annotations

from typing import ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widget import Widget

from talkie_tui.chat.turns import Turn
from talkie_tui.i18n import N_
from talkie_tui.ui.messages import ReplyRequested

__all__ = ["MessageCursor"]

SELECTED = "-selected"


class MessageCursor(VerticalScroll):
    """A scrolling column of turn views (widgets with a `turn`), one of which may be selected."""

    HELP_GROUP = N_("Conversation")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("shift+up", "select_message(-1)", N_("Select the previous message"), show=False),
        Binding("shift+down", "select_message(1)", N_("Select the next message"), show=False),
        Binding("r", "reply", N_("Reply to the selected message")),
        # Where the server takes no replies the key is out of the footer and help, and still
        # answers: the screen says that replies are not taken here.
        Binding("r", "reply_not_offered", show=False, system=True),
    ]

    replies_offered = True
    """Whether the server takes replies (the screen says): `r` is in the footer only then."""

    _selected: Turn | None = None

    @property
    def selected(self) -> Turn | None:
        """The turn selected, while its view is shown."""
        return self._selected if self._view_of_selected() is not None else None

    def show_earlier(self) -> None:
        """Mount the older turns not shown yet (the transcript has them); selecting above the
        first shown turn asks for them."""

    def select(self, turn: Turn | None, *, scroll: bool = True) -> None:
        """Select `turn` (None: no turn), scrolled into view unless `scroll` is False."""
        old = self._view_of_selected()
        if old is not None:
            old.remove_class(SELECTED)
        self._selected = turn
        view = self._view_of_selected()
        if view is None:
            self._selected = None
            return
        view.add_class(SELECTED)
        if scroll:
            self.release_anchor()  # new text no longer pulls the view away from it
            self.call_after_refresh(self.scroll_to_widget, view, animate=False)

    def action_select_message(self, step: int) -> None:
        """Select the message `step` turns away; from none, the newest."""
        turns = self._turns_shown()
        current = self.selected
        if current is None:
            if turns:
                self.select(turns[-1])
            return
        index = turns.index(current) + step
        if index < 0:
            self.show_earlier()
            turns = self._turns_shown()
            index = turns.index(current) - 1
        if 0 <= index < len(turns):
            self.select(turns[index])

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """One `r`: replying where the server takes replies, else being told it does not."""
        if action in ("reply", "reply_not_offered"):
            return self.replies_offered == (action == "reply")
        return True

    def action_reply(self) -> None:
        """Ask the screen to answer the selected message."""
        self.post_message(ReplyRequested(self.selected))

    action_reply_not_offered = action_reply

    def on_click(self, event: events.Click) -> None:
        """A click in a message selects it (the click still does what it does there)."""
        node = event.widget
        while node is not None and node.parent is not self:
            node = node.parent if isinstance(node.parent, Widget) else None
        turn = _turn_of(node) if node is not None else None
        if turn is not None:
            self.select(turn, scroll=False)

    def _turns_shown(self) -> list[Turn]:
        """The turns shown, oldest first."""
        return [turn for child in self.children if (turn := _turn_of(child)) is not None]

    def _view_of_selected(self) -> Widget | None:
        if self._selected is None:
            return None
        return next((c for c in self.children if _turn_of(c) is self._selected), None)


def _turn_of(widget: Widget) -> Turn | None:
    """The turn a child of the transcript shows (None: the welcome, "Show earlier")."""
    turn = getattr(widget, "turn", None)
    return turn if isinstance(turn, Turn) else None
