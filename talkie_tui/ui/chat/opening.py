"""Which thread the chat screen shows: a stored one opened, or a new one started.

Opening loads the thread through the session and shows it through the same path as live turns
(scrolled to a message a search found), with its messages the server has not taken yet, its
draft, the actions still open asked for again, and a turn that still runs reattached to. A new
thread is a new session. Either way what belonged to the thread left goes: the failed request
Ctrl+R would retry, the message a reply answered, the dictated audio.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Protocol

from textual.worker import get_current_worker

from talkie_tui.core.errors import TalkieError
from talkie_tui.i18n import _
from talkie_tui.ui.chat.drafts import NEW
from talkie_tui.ui.chat.host import ChatHost, run_answer
from talkie_tui.ui.chat.parts import ChatParts

if TYPE_CHECKING:
    from textual.worker import Worker

    from talkie_tui.backends.base import Backend
    from talkie_tui.chat.conversation import Conversation
    from talkie_tui.ui.chat.live import LiveTurns
    from talkie_tui.ui.chat.sending import Sending

__all__ = ["OpenHost", "ThreadOpening"]


class OpenHost(ChatHost, ChatParts, Protocol):
    """What showing another thread needs of the chat screen; `ChatScreen` is one."""

    # The controllers of the answer, which hold something of the thread on screen too.
    live: LiveTurns
    sending: Sending


class ThreadOpening:
    """Opens the threads of one chat screen, and starts new ones."""

    def __init__(self, host: OpenHost, backend: Backend) -> None:
        self._host = host
        self._backend = backend
        self._opening: Worker[None] | None = None  # the last thread asked to open

    def open(
        self, thread_id: str, message_id: str | None = None, *, then_compose: bool = False
    ) -> Worker[None]:
        """Load a stored thread and show it (scrolled to `message_id`, when a search found it
        there); in the screen's "run" worker, as an answer is. With `then_compose` (the person
        chose it in the list) the cursor goes to the composer once it is shown, so what they
        type next is their message, not the list's keys."""
        work = partial(self._open, thread_id, message_id, then_compose)
        self._opening = run_answer(self._host, work, "open_thread")
        return self._opening

    async def _open(self, thread_id: str, message_id: str | None, then_compose: bool) -> None:
        host = self._host
        try:
            conversation = await host.session.load(thread_id)
        except TalkieError as error:
            if host.sign_in_needed(error):
                return
            host.notify(
                _("The thread could not be opened: {error}").format(error=error.message),
                severity="error",
                markup=False,
            )
            return
        finally:
            if self._opening is get_current_worker():
                self._opening = None  # loaded (what follows is its running turn: an answer)
        self._show(conversation, thread_id, message_id)
        host.threads.seen(thread_id)  # read now (a hub was told so as it loaded)
        if then_compose:
            host.composer.focus()
        await host.decisions.refresh_open(conversation)
        await host.live.reattach()

    def new(self) -> None:
        """Start a new thread (not while a call holds this one, or an answer streams)."""
        host = self._host
        if host.voice.holds_thread():
            return
        opening = self._opening
        if opening is not None and opening.is_running:
            # A thread still loading: the person's new thread comes first, not that thread
            # shown over it when it arrives.
            opening.cancel()
        elif host.answering:
            host.notify(_("Stop the answer first (Esc)."), severity="warning", markup=False)
            return
        host.session = self._backend.new_session()
        self._show(host.session.conversation, NEW)
        host.reach.shown()
        host.composer.focus()

    def _show(self, conversation: Conversation, thread: str, message_id: str | None = None) -> None:
        """Show `conversation` in place of the thread left, with what is kept of it."""
        host = self._host
        # The thread left is followed no more; the one shown is once it is open (a session
        # that loads another thread is the same object, so following must start anew).
        host.live.forget()
        host.sending.request = None
        host.replies.cancel()  # it answered a message of the thread left
        host.outbox.restore(conversation, thread)
        host.transcript.show(conversation)
        host.refresh_bindings()  # Ctrl+R retries what this thread holds
        if message_id is not None:
            host.transcript.reveal(message_id)
        host.drafts.switch(thread)
        host.dictation.forget()
