"""What an agent script sees during a run: emit text, tool status, cards and action proposals.

The context deliberately offers no way to decide an action: decisions arrive only through the
HTTP decision endpoint (§8).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, NoReturn

from ag_ui.core import (
    BaseEvent,
    CustomEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)

from talkie_tui.core.waiting import wait_event
from talkie_tui.devserver.common.clock import epoch_ms
from talkie_tui.devserver.common.ids import new_id
from talkie_tui.devserver.common.pacing import paced
from talkie_tui.devserver.talkie import cards
from talkie_tui.devserver.talkie.actions import ActionService
from talkie_tui.devserver.talkie.config import ServerConfig

# Pieces of text that keep every character: runs of non-space followed by their spacing,
# or leading spacing on its own.
_WORDS = re.compile(r"\S+\s*|\s+")


class RunCancelled(Exception):
    """The client cancelled the run; the agent stops at its next step."""


class AgentError(Exception):
    """The agent cannot answer; the run ends with RUN_ERROR."""

    def __init__(self, message: str, code: str = "upstream_unavailable", *, retryable: bool = True):
        super().__init__(message)
        self.message = message
        self.code = code
        self.retryable = retryable


def split_text(text: str, words_per_piece: int = 3) -> list[str]:
    """Split text into small pieces whose concatenation is exactly the text."""
    words = _WORDS.findall(text)
    pieces = [
        "".join(words[index : index + words_per_piece])
        for index in range(0, len(words), words_per_piece)
    ]
    return pieces or [""]


class ToolCall:
    """A running tool call; `fail` marks it unsuccessful when the block ends."""

    def __init__(self, call_id: str) -> None:
        self.id = call_id
        self.error: str | None = None

    def fail(self, error: str) -> None:
        """End this call with `metadata.ok = false` and this error text."""
        self.error = error


class RunContext:
    """The event-emitting surface of one run, plus what gets stored as the assistant message."""

    def __init__(
        self,
        *,
        run_id: str,
        thread_id: str,
        user_id: str,
        user_text: str,
        config: ServerConfig,
        actions: ActionService,
        emit: Callable[[BaseEvent], None],
        cancelled: asyncio.Event,
    ) -> None:
        self.run_id = run_id
        self.thread_id = thread_id
        self.user_id = user_id
        self.user_text = user_text
        self.config = config
        self.locale = "en"
        self.answer_id = new_id("m")
        self.text_parts: list[str] = []
        self.cards: list[cards.Card] = []
        self._actions = actions
        self._emit = emit
        self._cancelled = cancelled
        self._open_message: str | None = None

    @property
    def czech(self) -> bool:
        """Whether the agent answers in Czech."""
        return self.locale == "cs"

    @property
    def content(self) -> str:
        """The assistant text so far, as it will be stored."""
        return "\n\n".join(part for part in self.text_parts if part)

    def emit(self, event: BaseEvent) -> None:
        """Append an event to the run log, stamped with the current time."""
        event.timestamp = epoch_ms()
        self._emit(event)

    def check_cancelled(self) -> None:
        """Raise RunCancelled when the client asked to stop."""
        if self._cancelled.is_set():
            raise RunCancelled

    async def sleep(self, seconds: float) -> None:
        """Wait, waking early (with RunCancelled) when the run is cancelled."""
        self.check_cancelled()
        if seconds <= 0:
            await asyncio.sleep(0)
        else:
            await wait_event(self._cancelled, seconds)
        self.check_cancelled()

    async def say(
        self, text: str, *, delay: float | None = None, pieces: list[str] | None = None
    ) -> None:
        """Stream one assistant text message in small deltas (`delay` seconds apart)."""
        self.check_cancelled()
        pause = self.config.demo_delay if delay is None else delay
        # The first text message carries the id the stored assistant message will have.
        message_id = self.answer_id if not self.text_parts else new_id("m")
        self.emit(TextMessageStartEvent(message_id=message_id, role="assistant"))
        self._open_message = message_id
        self.text_parts.append("")
        for index, piece in enumerate(pieces if pieces is not None else split_text(text)):
            if index:
                await self.sleep(pause)
            self.check_cancelled()
            self.emit(TextMessageContentEvent(message_id=message_id, delta=piece))
            self.text_parts[-1] += piece
        self.close_open_message()

    async def say_paced(self, pieces: list[str], rate: float) -> None:
        """Stream one text message, piece `i` due `i / rate` s after the first (0: unpaced).

        Pieces are sent on a schedule rather than with a pause between them, so a fast rate
        does not drift by the event loop's wake-up granularity: every piece due is sent.
        """
        self.check_cancelled()
        message_id = self.answer_id if not self.text_parts else new_id("m")
        self.emit(TextMessageStartEvent(message_id=message_id, role="assistant"))
        self._open_message = message_id
        self.text_parts.append("")
        async for piece in paced(pieces, rate, self.sleep):
            self.check_cancelled()
            self.emit(TextMessageContentEvent(message_id=message_id, delta=piece))
            self.text_parts[-1] += piece
        self.close_open_message()

    def close_open_message(self) -> None:
        """End the text message still open (after a cancel, too)."""
        if self._open_message is not None:
            self.emit(TextMessageEndEvent(message_id=self._open_message))
            self._open_message = None

    def card(self, card: cards.Card) -> None:
        """Emit a `talkie.card` and keep it for the stored assistant message."""
        self.check_cancelled()
        self.cards.append(card)
        self.emit(CustomEvent(name="talkie.card", value=card))

    def open_link(self, url: str, label: str) -> None:
        """Emit a `talkie.open` suggestion (the client opens it only on a tap)."""
        self.emit(CustomEvent(name="talkie.open", value={"url": url, "label": label}))

    def new_tool_call_id(self) -> str:
        """The id of the next tool call (a voice tool call reuses the provider's call id)."""
        return new_id("call")

    @asynccontextmanager
    async def tool(
        self, name: str, label: str, *, args: dict[str, Any] | None = None
    ) -> AsyncIterator[ToolCall]:
        """A tool call with a human status label; ends with `metadata.ok` (and `error`)."""
        self.check_cancelled()
        call = ToolCall(self.new_tool_call_id())
        self.emit(
            ToolCallStartEvent(tool_call_id=call.id, tool_call_name=name, metadata={"label": label})
        )
        if args is not None:
            delta = json.dumps(args, ensure_ascii=False)
            self.emit(ToolCallArgsEvent(tool_call_id=call.id, delta=delta))
        try:
            yield call
        except RunCancelled:
            call.fail("Cancelled")
            raise
        except Exception as exc:
            call.fail(str(exc) or type(exc).__name__)
            raise
        finally:
            metadata: dict[str, Any] = {"ok": call.error is None}
            if call.error is not None:
                metadata["error"] = call.error
            self.emit(ToolCallEndEvent(tool_call_id=call.id, metadata=metadata))

    async def propose(
        self,
        *,
        kind: str,
        tool_name: str,
        label: str,
        summary: str,
        params: dict[str, Any],
        voice_keyword: str | None = None,
    ) -> dict[str, Any]:
        """Propose an action for a human decision; emits the tool call and `talkie.action`."""
        async with self.tool(tool_name, label, args=params) as call:
            record = self._actions.propose(
                user_id=self.user_id,
                thread_id=self.thread_id,
                tool_call_id=call.id,
                kind=kind,
                summary=summary,
                params=params,
                locale=self.locale,
                voice_keyword=voice_keyword,
            )
        self.emit(CustomEvent(name="talkie.action", value=record))
        return record

    def fail(
        self, message: str, code: str = "upstream_unavailable", *, retryable: bool = True
    ) -> NoReturn:
        """End the run with RUN_ERROR."""
        raise AgentError(message, code, retryable=retryable)


Agent = Callable[[RunContext], Awaitable[None]]
