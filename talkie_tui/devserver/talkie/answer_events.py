"""An answer's events as a stored thread gives them back: what a live client saw, in order.

The run's log holds every frame it streamed. A reloaded thread needs the parts and their order,
not the pacing: the run's start and its usage go, and the deltas of one text message are
joined into one.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["answer_events"]

_LEFT_OUT = frozenset({"RUN_STARTED"})
_USAGE = "talkie.usage"


def answer_events(frames: list[str]) -> list[dict[str, Any]]:
    """The events of a run's frames that shape its answer, text deltas joined per message."""
    events: list[dict[str, Any]] = []
    for frame in frames:
        event = json.loads(frame)
        kind = event.get("type")
        if kind in _LEFT_OUT or (kind == "CUSTOM" and event.get("name") == _USAGE):
            continue
        event.pop("timestamp", None)
        last = events[-1] if events else None
        if (
            kind == "TEXT_MESSAGE_CONTENT"
            and last is not None
            and last.get("type") == kind
            and last.get("messageId") == event.get("messageId")
        ):
            last["delta"] += event.get("delta", "")
            continue
        events.append(event)
    return events
