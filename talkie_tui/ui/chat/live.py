"""The thread on the chat screen followed as it happens, where its session can.

A turn that still runs when its thread is opened (a Minara session loaded while streaming) is
reattached to: its events replayed from the start, then as they come, Esc stopping it like an
answer to a message sent here. Between answers a hub's session follows its conversation live (a
reply that came late, a tap or a message from another device, the agent's activity and status),
once per session, until another thread is shown.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from talkie_tui.backends.parts.history import FollowsLive, Reattaches
from talkie_tui.core.errors import TalkieError
from talkie_tui.ui.chat.host import ChatHost
from talkie_tui.ui.chat.parts import ChatParts

if TYPE_CHECKING:
    from textual.worker import Worker

    from talkie_tui.backends.base import Session, Update
    from talkie_tui.ui.chat.header_state import HeaderState

__all__ = ["LiveHost", "LiveTurns"]


class LiveHost(ChatHost, ChatParts, Protocol):
    """What following a thread live needs of the chat screen; `ChatScreen` is one."""

    def show_update(self, update: Update) -> None:
        """Show one step of the turn followed."""


class LiveTurns:
    """The running turn reattached to, and the live follow, of one chat screen."""

    def __init__(self, host: LiveHost, state: HeaderState) -> None:
        self._host = host
        self._state = state  # says "answering" while a reattached turn comes in
        self.reattached: str | None = None  # the session whose running turn is followed
        self._following: object | None = None  # the session followed live between answers
        self._follow_worker: Worker[None] | None = None

    async def reattach(self) -> None:
        """Follow the opened thread's turn live when it still runs: its events replayed from
        the start, then as they come."""
        host = self._host
        session = host.session
        if not isinstance(session, Reattaches) or not session.streaming:
            return
        self.reattached = host.session.thread_id  # what Esc stops: the session's turn
        try:
            with self._state.answer():
                try:
                    async for update in session.reattach():
                        host.show_update(update)
                except TalkieError as error:
                    if not host.sign_in_needed(error):
                        host.notify(error.message, severity="warning", markup=False)
        finally:
            self.reattached = None
        host.steering.answer_ended(host.session.conversation)  # its late interjections

    def follow(self) -> None:
        """Follow the thread on screen live between answers, where its session can; once per
        session, until another thread is shown."""
        session = self._host.session
        if not isinstance(session, FollowsLive):
            return
        if session.thread_id is None or self._following is session:
            return
        self._following = session
        self._follow_worker = self._host.run_worker(
            partial(self._follow, session, session.follow),
            name="_follow",
            group="follow",
            exclusive=True,
            exit_on_error=False,
        )

    def forget(self) -> None:
        """The thread on screen is left: it is followed no more."""
        self._following = None
        if self._follow_worker is not None:
            self._follow_worker.cancel()
            self._follow_worker = None

    async def _follow(
        self, session: Session[Any], follow: Callable[[], AsyncIterator[Update]]
    ) -> None:
        host = self._host
        try:
            async for update in follow():
                if host.session is not session:
                    return
                if update.lost:  # between answers no answer is awaited: it comes back itself
                    host.status.resuming()
                    continue
                if update.recovered is not None:
                    host.status.resumed()
                host.show_update(update)
                host.show_state()
        except TalkieError as error:
            if not host.sign_in_needed(error):
                host.notify(error.message, severity="warning", markup=False)
        finally:
            if self._following is session:
                self._following = None
