"""Waiting for something a peer does in its own time: ask again every so often, up to a limit."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

__all__ = ["poll"]

T = TypeVar("T")


async def poll(probe: Callable[[], Awaitable[T | None]], wait: float, every: float) -> T | None:
    """`probe()`'s first answer that is not None, asked every `every` s; None after `wait` s."""
    deadline = time.monotonic() + wait
    while True:
        found = await probe()
        if found is not None or time.monotonic() >= deadline:
            return found
        await asyncio.sleep(every)
