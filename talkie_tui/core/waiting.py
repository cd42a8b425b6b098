"""Waiting with a time limit that never loses a cancel.

On Python 3.11, `asyncio.wait_for` returns the result when the awaited thing finishes just as
the waiting task is cancelled: the cancel is lost, and a loop around it runs on after its owner
meant to stop it (a bridge that never ends, a reader that outlives its stream). These wait
under `asyncio.timeout`, which keeps the cancel; the project's lint bans `wait_for`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


async def wait_within(awaitable: Awaitable[T], timeout: float | None) -> T:  # noqa: ASYNC109
    """Await `awaitable` for at most `timeout` seconds (None: no limit); TimeoutError after."""
    async with asyncio.timeout(timeout):
        return await awaitable


async def wait_event(event: asyncio.Event, timeout: float | None) -> bool:  # noqa: ASYNC109
    """Wait up to `timeout` seconds for `event` to be set; whether it is."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(timeout):
            await event.wait()
    return event.is_set()
