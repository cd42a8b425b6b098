"""The live state of one running turn: its stop request, interjection window and SSE frames."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from talkie_tui.core.waiting import wait_event
from talkie_tui.devserver.minara.channels import Event


@dataclass
class TurnRequestInfo:
    """What the turn answers: the user's message and what came with it."""

    message: str
    message_id: str
    attachments: list[dict[str, Any]] = field(default_factory=list)
    model: str | None = None
    reasoning_effort: str | None = None


@dataclass
class LiveTurn:
    """A turn while it runs (and, for the SSE revision, its frames until the stream ended)."""

    turn_id: str
    session_id: str
    request: TurnRequestInfo
    interrupted: asyncio.Event = field(default_factory=asyncio.Event)
    # Interjections are echoed into the turn while the agent can still take them in.
    window_open: bool = False
    interjections: list[str] = field(default_factory=list)
    late_interjections: list[str] = field(default_factory=list)
    task: asyncio.Task[None] | None = None
    # The turn's events as SSE `data:` payloads (`common.sse.EventLog`).
    frames: list[str] = field(default_factory=list)
    done: bool = False
    _changed: asyncio.Event = field(default_factory=asyncio.Event)

    def add_frame(self, event: Event) -> None:
        """Keep one event for SSE followers and wake them."""
        self.frames.append(json.dumps(event, ensure_ascii=False))
        self.wake()

    def finish(self) -> None:
        """The turn ended: followers stop after the last frame."""
        self.done = True
        self.wake()

    def wake(self) -> None:
        """Wake every follower (also to make them notice a server stop)."""
        self._changed.set()
        self._changed = asyncio.Event()

    async def wait_for_more(self, seen: int, patience: float) -> bool:
        """Wait up to `patience` s for more than `seen` frames or the end; False on timeout."""
        if len(self.frames) > seen or self.done:
            return True
        return await wait_event(self._changed, patience)
