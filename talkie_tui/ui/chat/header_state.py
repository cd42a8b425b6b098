"""The chat screen's header state, derived in one place after every change.

The connection: "reconnecting" while a broken stream's answer is awaited, "streaming" while an
answer comes in (a message sent, or a turn reattached to), else the server's last word
(`ServerStatus.reach`); and the count of what waits for the person: the actions, the agent's
questions and a hub's buttons on screen. The screen's `show_state` asks for it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from textual.css.query import NoMatches

from talkie_tui.ui.chat.host import ChatHost

if TYPE_CHECKING:
    from talkie_tui.ui.chat.model_choice import ThreadModels
    from talkie_tui.ui.chat.status import ServerStatus
    from talkie_tui.ui.chat.waiting import AnswerWait
    from talkie_tui.ui.widgets.activity import ActivityLine

__all__ = ["HeaderState"]


class HeaderState:
    """The header's connection state and count of pending decisions on one chat screen."""

    def __init__(
        self,
        host: ChatHost,
        status: ServerStatus,
        models: ThreadModels,
        waiting: AnswerWait,
        activity: Callable[[], ActivityLine],
    ) -> None:
        self._host = host
        self._status = status
        self._models = models
        self._waiting = waiting
        self._activity = activity
        self.streaming = False  # an answer comes in

    def show(self) -> None:
        """Read what is known into the header (and the activity line under the transcript)."""
        host = self._host
        header = host.header
        conversation = host.session.conversation
        with contextlib.suppress(NoMatches):  # not composed yet
            self._activity().refresh_now()
        header.pending_actions = (
            conversation.pending_actions
            + conversation.pending_questions
            + conversation.pending_taps
        )
        self._models.show()  # the thread on screen may have changed: its model in the title
        if self._waiting.waiting:
            header.state = "reconnecting"
        elif self.streaming:
            header.state = "streaming"
        else:
            header.state = self._status.reach

    @contextlib.contextmanager
    def answer(self) -> Iterator[None]:
        """While an answer comes in, the header says so; when it ended (or broke off), the
        wait for a broken stream's answer is over too."""
        self.streaming = True
        self._host.show_state()
        try:
            yield
        finally:
            self.streaming = False
            self._waiting.end()
            self._host.show_state()
