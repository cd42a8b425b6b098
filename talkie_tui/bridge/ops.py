"""How the bridge's messages reach the hub: the agent socket's ops, or the same over HTTP.

`HubOps` is all that `reply.Reply` and `answers.Answers` ask of the hub: send a message, start,
add to and finish a stream, show activity, and wait when the hub cannot be reached. A bridge on
the agent socket sends them as socket frames (`SocketOps`); a bridge serving a webhook binding,
which the hub refuses a socket, sends them to the REST routes of the agent API (`HttpOps`). Both
raise `OpFailed` with the hub's code when it refuses an op, so the callers read one error.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

from talkie_tui.bridge.render import Button
from talkie_tui.core.errors import RateLimitedError, ServerError, TalkieError, TransportError
from talkie_tui.protocol.cuckoo.agent_client import AgentApi, AgentLink, OpFailed

__all__ = ["HttpOps", "HubOps", "SocketOps"]

logger = logging.getLogger(__name__)

T = TypeVar("T")
Buttons = list[list[Button]]

HTTP_ATTEMPTS = 6
"""Tries of one HTTP op when the hub says slow down, fails (5xx) or cannot be reached; a send or
a stream's start carries its idempotency key, so a second try makes nothing twice."""
HTTP_RETRY_PAUSE = 0.5
"""Seconds before the first retry (doubled each time, at most 5), and before a stream's text is
offered again after the hub could not take it."""


class HubOps(Protocol):
    """What the bridge does on the hub for a reply (see the module docstring)."""

    async def send(self, conversation_id: str, fields: dict[str, Any]) -> dict[str, Any]:
        """A whole message (`text`, `idempotency_key`, `reply_to`, `buttons`): the hub's copy."""
        ...

    async def start_stream(self, conversation_id: str, fields: dict[str, Any]) -> dict[str, Any]:
        """An empty streaming message (`idempotency_key`, `reply_to`): the hub's copy."""
        ...

    async def append(self, message_id: str, text: str) -> bool:
        """Add text to a stream; False when it could not go now (`wait_ready`, then again)."""
        ...

    async def finish(self, message_id: str, buttons: Buttons | None) -> dict[str, Any]:
        """End a stream, with `buttons` at its end: the hub's copy."""
        ...

    async def activity(self, conversation_id: str, state: str, label: str | None = None) -> None:
        """Show thinking, working (with a label) or idle; a failure is not the reply's."""
        ...

    async def wait_ready(self) -> None:
        """Wait until the hub can be tried again."""
        ...


class SocketOps:
    """The ops as frames on the agent socket (`AgentLink`), replies matched by `cid`."""

    def __init__(self, link: AgentLink) -> None:
        self.link = link

    async def send(self, conversation_id: str, fields: dict[str, Any]) -> dict[str, Any]:
        """The `send` op."""
        return await self.link.request({"op": "send", "conversation_id": conversation_id, **fields})

    async def start_stream(self, conversation_id: str, fields: dict[str, Any]) -> dict[str, Any]:
        """The `stream.start` op."""
        frame = {"op": "stream.start", "conversation_id": conversation_id, **fields}
        return await self.link.request(frame)

    async def append(self, message_id: str, text: str) -> bool:
        """The `stream.delta` op (the hub answers only a failure, `on_delta_failed`)."""
        frame = {"op": "stream.delta", "message_id": message_id, "text": text}
        return await self.link.send_frame(frame)

    async def finish(self, message_id: str, buttons: Buttons | None) -> dict[str, Any]:
        """The `stream.end` op."""
        frame: dict[str, Any] = {"op": "stream.end", "message_id": message_id}
        if buttons:
            frame["buttons"] = buttons
        return await self.link.request(frame)

    async def activity(self, conversation_id: str, state: str, label: str | None = None) -> None:
        """The `activity` op, without waiting for its reply."""
        frame: dict[str, Any] = {
            "op": "activity",
            "conversation_id": conversation_id,
            "state": state,
        }
        if label:
            frame["label"] = label
        await self.link.send_frame(frame)

    async def wait_ready(self) -> None:
        """Wait for the socket to be open again."""
        await self.link.wait_up()


class HttpOps:
    """The ops on the agent API's REST routes, for a webhook binding (no socket there).

    A refused append is told to `on_delta_failed`, as the socket tells it. Activity is posted
    in the background, in order per conversation, so that "thinking" does not hold up the run.
    """

    def __init__(self, api: AgentApi, on_delta_failed: Callable[[str, str], None]) -> None:
        self.api = api
        self._on_delta_failed = on_delta_failed
        self._activity: dict[str, asyncio.Task[None]] = {}

    async def _tried(self, call: Callable[[], Awaitable[T]]) -> T:
        """`call()`, tried again after a 429, a 5xx or a network failure; OpFailed otherwise."""
        delay = HTTP_RETRY_PAUSE
        for attempt in range(HTTP_ATTEMPTS):
            last = attempt + 1 == HTTP_ATTEMPTS
            try:
                return await call()
            except ServerError as error:
                if last or not error.retryable:
                    raise OpFailed(error.code, error.message) from None
                wait = error.retry_after if isinstance(error, RateLimitedError) else None
                await asyncio.sleep(min(wait or delay, 30.0))
            except TransportError:
                if last:
                    raise
                await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)
        raise AssertionError("unreachable")  # pragma: no cover

    async def send(self, conversation_id: str, fields: dict[str, Any]) -> dict[str, Any]:
        """`POST …/messages`."""
        return await self._tried(lambda: self.api.send_message(conversation_id, fields))

    async def start_stream(self, conversation_id: str, fields: dict[str, Any]) -> dict[str, Any]:
        """`POST …/messages` with `stream: true`."""
        body = {**fields, "stream": True}
        return await self._tried(lambda: self.api.send_message(conversation_id, body))

    async def append(self, message_id: str, text: str) -> bool:
        """`POST /messages/{id}/append`; not tried again here (a lost answer would double the
        text): False sends the caller to `wait_ready`."""
        try:
            await self.api.append(message_id, text)
        except ServerError as error:
            if error.retryable:
                return False
            self._on_delta_failed(message_id, error.code)
        except TransportError:
            return False
        return True

    async def finish(self, message_id: str, buttons: Buttons | None) -> dict[str, Any]:
        """`POST /messages/{id}/finish`."""
        return await self._tried(lambda: self.api.finish(message_id, buttons))

    async def activity(self, conversation_id: str, state: str, label: str | None = None) -> None:
        """`POST …/activity` in the background, after the conversation's previous one."""
        previous = self._activity.get(conversation_id)

        async def post() -> None:
            if previous is not None:
                await asyncio.wait({previous})  # its outcome is its own
            try:
                await self.api.activity(conversation_id, state, label)
            except TalkieError as error:
                logger.info("activity in %s: %s", conversation_id, error)

        task = asyncio.ensure_future(post())
        self._activity[conversation_id] = task
        task.add_done_callback(lambda done: self._forget(conversation_id, done))

    def _forget(self, conversation_id: str, task: asyncio.Task[None]) -> None:
        if self._activity.get(conversation_id) is task:
            del self._activity[conversation_id]

    async def wait_ready(self) -> None:
        """A pause before the hub is tried again."""
        await asyncio.sleep(HTTP_RETRY_PAUSE)

    async def aclose(self) -> None:
        """Cancel the activity still to be posted."""
        tasks = list(self._activity.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
