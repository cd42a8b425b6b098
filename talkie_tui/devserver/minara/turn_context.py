"""What an agent script sees during a turn: text, tool cards, UI blocks, todos, questions.

The context offers no way to answer its own questions: answers arrive only through
`POST /v1/interactions/:id/answer`.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, NoReturn

from talkie_tui.core.waiting import wait_event
from talkie_tui.devserver.common import clock
from talkie_tui.devserver.common.ids import new_id
from talkie_tui.devserver.common.pacing import paced
from talkie_tui.devserver.minara.config import GatewayConfig
from talkie_tui.devserver.minara.live_turn import LiveTurn
from talkie_tui.devserver.minara.questions import Answer, QuestionBoard

_WORDS = re.compile(r"\S+\s*|\s+")

Emit = Callable[[str, dict[str, Any]], None]
Agent = Callable[["TurnContext"], Awaitable[None]]


class TurnInterrupted(Exception):
    """The user stopped the turn (`POST /v1/chat/interrupt`); it ends with `done.interrupted`."""


class AgentFailed(Exception):
    """The agent cannot go on; the turn ends with an `error` event."""

    def __init__(self, code: str, message: str, *, retryable: bool = True) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.retryable = retryable


def _given(data: dict[str, Any]) -> dict[str, Any]:
    # The optional fields of an event are left out, not sent as null.
    return {key: value for key, value in data.items() if value is not None}


def split_words(text: str, words_per_piece: int = 3) -> list[str]:
    """Small pieces of text whose concatenation is exactly the text."""
    words = _WORDS.findall(text)
    return [
        "".join(words[index : index + words_per_piece])
        for index in range(0, len(words), words_per_piece)
    ] or [text]


class ToolCall:
    """A running tool call; `fail` ends it with `ok: false`."""

    def __init__(self, call_id: str) -> None:
        self.id = call_id
        self.error: str | None = None
        self.summary: str | None = None

    def fail(self, error: str) -> None:
        """End the call unsuccessfully with this error text."""
        self.error = error


class TurnContext:
    """The event-emitting surface of one turn."""

    def __init__(
        self, turn: LiveTurn, config: GatewayConfig, questions: QuestionBoard, emit: Emit
    ) -> None:
        self.turn = turn
        self.config = config
        self._questions = questions
        self._emit = emit
        self._blocks = 0
        self._tools = 0

    @property
    def message(self) -> str:
        """The user's message this turn answers."""
        return self.turn.request.message

    def emit(self, event_type: str, data: dict[str, Any]) -> None:
        """Send one raw event (used for events the helpers below do not cover)."""
        self._emit(event_type, data)

    def check(self) -> None:
        """Raise TurnInterrupted once the user asked to stop."""
        if self.turn.interrupted.is_set():
            raise TurnInterrupted

    async def sleep(self, seconds: float) -> None:
        """Pause, waking at once (with TurnInterrupted) when the turn is interrupted."""
        self.check()
        if seconds <= 0:
            await asyncio.sleep(0)
        else:
            await wait_event(self.turn.interrupted, seconds)
        self.check()

    def delta(self, text: str) -> None:
        """One `text_delta`."""
        self.check()
        self._emit("text_delta", {"text": text})

    async def say(
        self, text: str, *, pieces: list[str] | None = None, delay: float | None = None
    ) -> None:
        """Text in several deltas (`pieces`, else a few words each), `delay` s apart."""
        pause = self.config.demo_delay if delay is None else delay
        for index, piece in enumerate(pieces if pieces is not None else split_words(text)):
            if index:
                await self.sleep(pause)
            self.delta(piece)

    async def say_paced(self, pieces: list[str], rate: float) -> None:
        """A `text_delta` per piece, piece `i` due `i / rate` s after the first (0: unpaced).

        (See `common.pacing.paced`.)
        """
        async for piece in paced(pieces, rate, self.sleep):
            self.delta(piece)

    def tool_start(
        self,
        name: str,
        *,
        label: str | None = None,
        args: dict[str, Any] | None = None,
        call_id: str | None = None,
    ) -> str:
        """A `tool_call_start`; returns the call id."""
        self.check()
        if call_id is None:
            self._tools += 1
            call_id = f"{self.turn.turn_id}_t{self._tools}"
        self._emit(
            "tool_call_start", _given({"id": call_id, "name": name, "label": label, "args": args})
        )
        return call_id

    def tool_end(
        self, call_id: str, *, ok: bool = True, error: str | None = None, summary: str | None = None
    ) -> None:
        """A `tool_call_end`."""
        self._emit(
            "tool_call_end", _given({"id": call_id, "ok": ok, "error": error, "summary": summary})
        )

    @asynccontextmanager
    async def tool(
        self, name: str, label: str, args: dict[str, Any] | None = None, *, seconds: float = 0.0
    ) -> AsyncIterator[ToolCall]:
        """A tool call around a block: started, `seconds` of work, ended (ok unless it failed)."""
        call = ToolCall(self.tool_start(name, label=label, args=args))
        try:
            await self.sleep(seconds)
            yield call
        except TurnInterrupted:
            # A card left running would spin forever in every client: it ends, unsuccessfully.
            self.tool_end(call.id, ok=False, error="Interrupted")
            raise
        self.tool_end(call.id, ok=call.error is None, error=call.error, summary=call.summary)

    def block(self, block: dict[str, Any]) -> None:
        """A `ui_block` with the next block id of the turn."""
        self.check()
        self._blocks += 1
        self._emit("ui_block", {"id": f"{self.turn.turn_id}_b{self._blocks}", "block": block})

    def todos(self, items: list[tuple[str, bool]]) -> None:
        """The turn's todo list, replaced whole."""
        self.check()
        self._emit("todos", {"items": [{"text": text, "done": done} for text, done in items]})

    def open_interjections(self) -> None:
        """From now on an interjection is echoed into the turn at once."""
        self.turn.window_open = True

    def close_interjections(self) -> None:
        """From now on interjections come back in `done.pending_interjections`."""
        self.turn.window_open = False

    async def ask(
        self,
        kind: str,
        questions: list[dict[str, Any]],
        *,
        asked_by: dict[str, str] | None = None,
        seconds: float | None = None,
        write_endpoint: str | None = None,
    ) -> list[Answer] | None:
        """Ask the user and wait: the answers, or None once the question timed out."""
        self.check()
        wait = self.config.question_seconds if seconds is None else seconds
        payload: dict[str, Any] = {"id": new_id("q"), "kind": kind}
        if asked_by is not None:
            payload["asked_by"] = asked_by
        payload["questions"] = questions
        if write_endpoint is not None:
            payload["writeEndpoint"] = write_endpoint
        payload["expires_at"] = clock.iso(clock.later(wait))
        pending = self._questions.open(self.turn.session_id, payload, self._emit)
        self._emit("pending_question_added", payload)
        stop = asyncio.ensure_future(self.turn.interrupted.wait())
        waiters: set[asyncio.Future[Any]] = {pending.future, stop}
        try:
            await asyncio.wait(waiters, timeout=wait, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.cancel()
        if pending.future.done():
            return pending.future.result()
        if self.turn.interrupted.is_set():
            self._questions.close(pending.id, "cancelled")
            raise TurnInterrupted
        self._questions.close(pending.id, "timeout")
        return None

    def fail(self, code: str, message: str, *, retryable: bool = True) -> NoReturn:
        """End the turn with an `error` event."""
        raise AgentFailed(code, message, retryable=retryable)
