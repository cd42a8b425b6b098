"""Answering a message of the transcript, on the chat screen (where `capabilities.replies`).

The transcript's `r` (or the palette's "Reply to this message") asks for a reply to the
selected message, or to the agent's newest when none is selected. The reply bar above the
composer then quotes it, the focus goes to the composer, and the next message carries its id
as `reply_to` through the session's `prepare` (the backend's word for it; the UI knows no wire
form). ✕ or Esc writes an ordinary message again; opening another thread forgets the reply. A
server that takes no replies (a Talkie server, a Minara gateway) says so when asked.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from talkie_tui.backends.parts.replies import Replying
from talkie_tui.i18n import _
from talkie_tui.ui.chat.host import ChatHost
from talkie_tui.ui.widgets.reply_bar import ReplyBar, ReplyTarget, reply_target

if TYPE_CHECKING:
    from talkie_tui.backends.base import Backend, Outgoing
    from talkie_tui.chat.turns import Turn

__all__ = ["Replies"]


class Replies:
    """The message the next one answers, if any."""

    def __init__(self, host: ChatHost, backend: Backend, bar: Callable[[], ReplyBar]) -> None:
        self._host = host
        self._backend = backend
        self._bar = bar
        self.target: ReplyTarget | None = None

    @property
    def offered(self) -> bool:
        """True when this server takes a message that answers an earlier one."""
        return self._backend.info.capabilities.replies

    def start(self, turn: Turn | None) -> bool:
        """Answer `turn` (None: the agent's newest message) with the next message; False, and
        the person told why, when that cannot be."""
        host = self._host
        if not self.offered:
            host.notify(_("This server does not take replies to a message."), markup=False)
            return False
        turn = turn or self._newest_of_agent()
        target = reply_target(turn) if turn is not None else None
        if target is None:
            reason = (
                _("There is no message to reply to here.")
                if turn is None
                else _("This message cannot be answered: it is not on the server.")
            )
            host.notify(reason, severity="warning", markup=False)
            return False
        self._show(target)
        host.transcript.select(None)  # the bar quotes it now
        host.composer.focus()
        return True

    def cancel(self) -> None:
        """The next message answers nothing."""
        if self.target is not None:
            self._show(None)

    def extras(self) -> dict[str, Any]:
        """What the next message carries for its reply (`reply_to`), for `Session.prepare`."""
        return {"reply_to": self.target.message_id} if self.target is not None else {}

    def extras_of(self, request: Outgoing) -> dict[str, Any]:
        """What a message sent before carried for its reply, to send it again the same."""
        if not self.offered or not isinstance(request, Replying):
            return {}
        reply_to = request.reply_to
        return {"reply_to": reply_to} if reply_to is not None else {}

    def _show(self, target: ReplyTarget | None) -> None:
        self.target = target
        self._bar().show_target(target)
        self._host.refresh_bindings()

    def _newest_of_agent(self) -> Turn | None:
        for turn in reversed(self._host.session.conversation.turns):
            if turn.role == "assistant" and reply_target(turn) is not None:
                return turn
        return None
