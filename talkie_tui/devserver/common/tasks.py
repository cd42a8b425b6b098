"""Running a server's tasks together: a socket's reader, writer and keepalive, which end
together; the live runs a stopping server lets finish for a moment, then cancels."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterable
from typing import Any


async def until_first_ends(*work: Coroutine[Any, Any, object]) -> None:
    """Run the coroutines as tasks until one ends; the others are cancelled and awaited."""
    tasks = [asyncio.create_task(coroutine) for coroutine in work]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def finish_within(tasks: Iterable[asyncio.Task[None]], grace: float) -> None:
    """Wait up to `grace` seconds for the tasks, then cancel and await those still running."""
    running = list(tasks)
    if not running:
        return
    _, pending = await asyncio.wait(running, timeout=grace)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
