"""A chat session: sends messages, folds the answer into the conversation, recovers lost ones."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

from talkie_tui.i18n import _
from talkie_tui.protocol.client import RunRequest, TalkieClient
from talkie_tui.protocol.errors import TalkieError
from talkie_tui.protocol.events import DecodedEvent, StreamTruncated
from talkie_tui.protocol.models import ThreadHistory

from .reducer import Change, Conversation, conversation_from_history

__all__ = ["ChatSession", "Recovered", "SessionUpdate"]

RECOVERY_DELAYS = (0.5, 1.0, 2.0, 3.0, 5.0, 8.0, 10.0, 15.0, 15.0)


@dataclass(frozen=True, slots=True)
class Recovered:
    """The answer of a broken stream was loaded from the thread (§5 disconnect is not cancel)."""

    complete: bool


@dataclass(frozen=True, slots=True)
class SessionUpdate:
    """One step of a send: the event received (or a recovery) and what it changed."""

    event: DecodedEvent | Recovered
    change: Change


class ChatSession:
    """One thread of one server: send messages, load history, keep the conversation."""

    def __init__(
        self,
        client: TalkieClient,
        thread_id: str | None = None,
        *,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.client = client
        self.conversation = Conversation(thread_id)
        self._sleep = sleep

    @property
    def thread_id(self) -> str | None:
        """The thread this session writes to (None until the first message)."""
        return self.conversation.thread_id

    async def load(self, thread_id: str) -> Conversation:
        """Replace the conversation with the stored thread."""
        history = await self.client.thread(thread_id)
        self.conversation = conversation_from_history(history)
        return self.conversation

    def prepare(self, text: str) -> RunRequest:
        """A request for `text` in this thread; keep it to retry with the same ids."""
        return RunRequest(text, thread_id=self.conversation.thread_id)

    async def send(self, request: RunRequest) -> AsyncIterator[SessionUpdate]:
        """Send (or re-send) a message and yield each update of the answer.

        Raises a TalkieError when the message could not be delivered; the request can be
        sent again unchanged, and the server ignores a message id it already stored.
        """
        conversation = self.conversation
        if not any(turn.id == request.message_id for turn in conversation.turns):
            conversation.add_user_message(request.message_id, request.text)
            conversation.thread_id = conversation.thread_id or request.thread_id
        turn = conversation.turns[-1] if conversation.turns[-1].role == "user" else None
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
        """Load the thread until the answer to `request` is stored, then show it."""
        history: ThreadHistory | None = None
        for delay in RECOVERY_DELAYS:
            await self._sleep(delay)
            try:
                history = await self.client.thread(request.thread_id)
            except TalkieError:
                continue
            if _answered(history, request.message_id):
                self.conversation = conversation_from_history(history)
                return SessionUpdate(Recovered(complete=True), None)
        if history is not None:
            self.conversation = conversation_from_history(history)
        change = self.conversation.apply(
            StreamTruncated(request.truncated or _("Connection lost."))
        )
        return SessionUpdate(Recovered(complete=False), change)


def _answered(history: ThreadHistory, message_id: str) -> bool:
    """True when an assistant message follows the user message `message_id`."""
    seen = False
    for message in history.messages:
        if message.id == message_id:
            seen = True
        elif seen and message.role == "assistant":
            return True
    return False
