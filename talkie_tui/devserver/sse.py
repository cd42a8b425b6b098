"""SSE framing of AG-UI events and the follower that streams a run log to one client."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Protocol

from ag_ui.core import BaseEvent

PING = ": ping\n\n"
HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
MEDIA_TYPE = "text/event-stream"


def encode(event: BaseEvent) -> str:
    """One event as camelCase JSON without null fields."""
    return event.model_dump_json(by_alias=True, exclude_none=True)


def data_frame(event_json: str) -> str:
    """An SSE frame carrying one event (LF line endings)."""
    return f"data: {event_json}\n\n"


class EventLog(Protocol):
    """The parts of a run log the follower needs."""

    frames: list[str]
    done: bool

    async def wait_for_more(self, seen: int, patience: float) -> bool:
        """Wait up to `patience` s for more than `seen` frames or the end; False on timeout."""
        ...


async def follow(
    log: EventLog, ping_interval: float, stopping: Callable[[], bool]
) -> AsyncIterator[str]:
    """Yield the log's frames from the start, then live ones, pinging while the run is silent."""
    sent = 0
    while True:
        while sent < len(log.frames):
            yield data_frame(log.frames[sent])
            sent += 1
        if log.done or stopping():
            return
        if not await log.wait_for_more(sent, ping_interval):
            yield PING
