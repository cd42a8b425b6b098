"""The live state of one running turn: its stop request, interjection window and SSE frames."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from talkie_tui.devserver.common.frame_log import FrameLog
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
    # The turn's events as SSE `data:` payloads, for the older revision's followers.
    log: FrameLog = field(default_factory=FrameLog)

    def add_frame(self, event: Event) -> None:
        """Keep one event for SSE followers and wake them."""
        self.log.append(json.dumps(event, ensure_ascii=False))
