"""SSE framing and the follower that streams a log of event frames to one client."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Protocol

PING = ": ping\n\n"
HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
MEDIA_TYPE = "text/event-stream"


def data_frame(event_json: str) -> str:
    """An SSE frame carrying one event (LF line endings)."""
    return f"data: {event_json}\n\n"


class EventLog(Protocol):
    """The parts of a log of frames (a run's, a turn's) the follower needs."""

    frames: list[str]
    done: bool

    async def wait_for_more(self, seen: int, patience: float) -> bool:
        """Wait up to `patience` s for more than `seen` frames or the end; False on timeout."""
        ...


async def follow(
    log: EventLog, ping_interval: float, stopping: Callable[[], bool]
) -> AsyncIterator[str]:
    """Yield the log's frames from the start, then live ones, pinging while the log is silent."""
    sent = 0
    while True:
        while sent < len(log.frames):
            yield data_frame(log.frames[sent])
            sent += 1
        if log.done or stopping():
            return
        if not await log.wait_for_more(sent, ping_interval):
            yield PING
