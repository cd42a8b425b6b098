"""A chat session: sends messages, folds the answer into the conversation, recovers lost ones."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import ag_ui.core as agui

from talkie_tui.backends.base import Broken, Failure, Recovered
from talkie_tui.backends.talkie.reducer import TalkieConversation, conversation_from_history
from talkie_tui.chat.conversation import Change
from talkie_tui.core.errors import ForbiddenError, NotFoundError, TalkieError, UnauthorizedError
from talkie_tui.i18n import _
from talkie_tui.protocol.talkie.client import RunRequest, TalkieClient
from talkie_tui.protocol.talkie.events import (
    ActionProposed,
    DecodedEvent,
    StreamTruncated,
    event_to_json,
)
from talkie_tui.protocol.talkie.models import ThreadHistory

__all__ = ["SessionUpdate", "TalkieOutgoing", "TalkieSession"]

# The first look is at once: a thread that is gone (404) or not ours (403) ends the wait there.
RECOVERY_DELAYS = (0.0, 0.5, 1.0, 2.0, 3.0, 5.0, 8.0, 10.0, 15.0, 15.0)

# Answers to "GET thread" after which asking again cannot help.
_HOPELESS = (NotFoundError, ForbiddenError, UnauthorizedError)


@dataclass(slots=True)
class _Polled:
    """What the polls of a thread found: the thread with the answer, or why there is none."""

    answered: ThreadHistory | None = None
    reason: str | None = None
    pending: bool = False


class TalkieOutgoing(RunRequest):
    """A message on its way as a talkie/1 run; how its answer ended, in every protocol's terms."""

    @property
    def failure(self) -> Failure | None:
        """The RUN_ERROR the run ended with (the last one, if several), or None."""
        error = self.error
        if error is None:
            return None
        retryable = (error.metadata or {}).get("retryable") is True
        return Failure(error.message, code=error.code, retryable=retryable)


@dataclass(frozen=True, slots=True)
class SessionUpdate:
    """One step of a send: the event received (or a recovery) and what it changed."""

    event: DecodedEvent | Recovered
    change: Change

    @property
    def lost(self) -> bool:
        """The stream broke: the answer is being fetched from the thread ("reconnecting")."""
        return isinstance(self.event, StreamTruncated)

    @property
    def recovered(self) -> Recovered | None:
        """The wait for a broken stream's answer ended (the conversation may be replaced)."""
        return self.event if isinstance(self.event, Recovered) else None

    @property
    def delta(self) -> str | None:
        """Text appended to the answer by this step, when that is all it did."""
        event = self.event
        return event.delta if isinstance(event, agui.TextMessageContentEvent) else None

    @property
    def proposes_action(self) -> bool:
        """This step added an action that waits for the person's decision."""
        return isinstance(self.event, ActionProposed)

    @property
    def broken(self) -> Broken | None:
        """How the stream broke, on the step that is `lost`."""
        event = self.event
        if not isinstance(event, StreamTruncated):
            return None
        return Broken(event.reason, abandoned=event.abandoned)

    @property
    def wire(self) -> str | None:
        """The event as one JSON line: AG-UI in its wire form, talkie events as CUSTOM."""
        event = self.event
        return None if isinstance(event, Recovered) else event_to_json(event)


class TalkieSession:
    """One thread of one server: send messages, load history, keep the conversation."""

    def __init__(
        self,
        client: TalkieClient,
        thread_id: str | None = None,
        *,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.client = client
        self.conversation: TalkieConversation = TalkieConversation(thread_id)
        self._sleep = sleep
        self._waiting: asyncio.Task[None] | None = None
        self._stop_requested = False

    @property
    def waiting(self) -> bool:
        """True while a broken stream's answer is awaited from the thread."""
        return self._waiting is not None and not self._waiting.done()

    def stop_waiting(self) -> bool:
        """Stop waiting for a broken stream's answer; True when there was a wait to stop.

        The run goes on on the server (disconnect is not cancel): its answer will be in the
        thread. The send ends with `Recovered(complete=False)` and the message stays.
        """
        if not self.waiting or self._waiting is None:
            return False
        self._stop_requested = True
        self._waiting.cancel()
        return True

    @property
    def thread_id(self) -> str | None:
        """The thread this session writes to (None until the first message)."""
        return self.conversation.thread_id

    async def load(self, thread_id: str) -> TalkieConversation:
        """Replace the conversation with the stored thread."""
        history = await self.client.thread(thread_id)
        self.conversation = conversation_from_history(history)
        return self.conversation

    def prepare(self, text: str) -> TalkieOutgoing:
        """A request for `text` in this thread; keep it to retry with the same ids."""
        return TalkieOutgoing(text, thread_id=self.conversation.thread_id)

    def again(self, text: str, message_id: str) -> TalkieOutgoing:
        """The message `message_id` once more: the server ignores an id it already stored (§5)."""
        return TalkieOutgoing(text, thread_id=self.conversation.thread_id, message_id=message_id)

    async def send(self, request: RunRequest) -> AsyncIterator[SessionUpdate]:
        """Send (or re-send) a message and yield each update of the answer.

        Raises a TalkieError when the message could not be delivered; the request can be
        sent again unchanged, and the server ignores a message id it already stored.
        """
        conversation = self.conversation
        conversation.drop_answer_to_redo(request.message_id)  # the server answers it anew (§5)
        if not any(turn.id == request.message_id for turn in conversation.turns):
            conversation.add_user_message(request.message_id, request.text)
            conversation.thread_id = conversation.thread_id or request.thread_id
        turn = conversation.turn(request.message_id)
        try:
            async for event in self.client.run(request):
                if isinstance(event, StreamTruncated):
                    yield SessionUpdate(event, None)  # shown as "reconnecting" while we recover
                    break
                yield SessionUpdate(event, conversation.apply(event))
        except TalkieError:
            if turn is not None:
                turn.state = "failed"
            raise
        if turn is not None:
            turn.state = "done"
        if request.truncated:
            yield await self._recover(request)

    async def _recover(self, request: RunRequest) -> SessionUpdate:
        """Load the thread until the answer to `request` is stored, then show it.

        Ends at once when waiting cannot help: the client abandoned the stream itself, or the
        thread answers 401, 403 or 404; and when `stop_waiting()` is called.
        """
        polled = _Polled()
        if not request.abandoned:
            self._stop_requested = False
            self._waiting = task = asyncio.ensure_future(self._poll(request, polled))
            try:
                await task
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if not self._stop_requested or (current is not None and current.cancelling()):
                    raise  # not stop_waiting(): the send itself is being cancelled
                polled.reason = _("You stopped waiting; the server may still finish the answer.")
                polled.pending = True
            finally:
                self._waiting = None
        if polled.answered is not None:
            self.conversation = conversation_from_history(polled.answered)
            return SessionUpdate(Recovered(complete=True), None)
        # No answer stored: what arrived before the break stays, marked as cut off.
        reason = request.truncated or _("Connection lost.")
        notice = f"{reason} {polled.reason}" if polled.reason else reason
        change = self.conversation.apply(StreamTruncated(notice, abandoned=request.abandoned))
        outcome = Recovered(complete=False, reason=polled.reason, pending=polled.pending)
        return SessionUpdate(outcome, change)

    async def _poll(self, request: RunRequest, polled: _Polled) -> None:
        """Look at the thread until the answer is there, or asking again cannot help."""
        for delay in RECOVERY_DELAYS:
            await self._sleep(delay)
            try:
                history = await self.client.thread(request.thread_id)
            except _HOPELESS as error:
                polled.reason = _("The thread cannot be loaded (HTTP {status}): {error}").format(
                    status=error.status, error=error.message
                )
                return
            except TalkieError:
                continue
            if _answered(history, request.message_id):
                polled.answered = history
                return
        polled.reason = _("The answer is not in the thread yet; the server may still finish it.")
        polled.pending = True


def _answered(history: ThreadHistory, message_id: str) -> bool:
    """True when an assistant message follows the user message `message_id`."""
    seen = False
    for message in history.messages:
        if message.id == message_id:
            seen = True
        elif seen and message.role == "assistant":
            return True
    return False
