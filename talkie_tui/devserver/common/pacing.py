"""Streaming pieces at a fixed rate, on a schedule (the test modes' `markdown` answers)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

__all__ = ["paced"]


async def paced(
    pieces: Sequence[str], rate: float, sleep: Callable[[float], Awaitable[None]]
) -> AsyncIterator[str]:
    """Each piece when due: piece `i` at `i / rate` s after the first (0: unpaced, yielding to
    the loop every 64). A schedule, not a pause between pieces, so a fast rate does not drift by
    the loop's wake-up granularity: every piece due goes at once."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    for index, piece in enumerate(pieces):
        if rate > 0:
            due = start + index / rate
            if due > loop.time():
                await sleep(due - loop.time())
        elif index % 64 == 0:
            await sleep(0)
        yield piece
