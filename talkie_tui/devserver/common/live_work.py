"""The live runs (talkie/1) or turns (Minara) of a server, by key: their followers read each
one's log, and a stopping server ends the followers and stops the work."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import Generic, Protocol, TypeVar

from talkie_tui.devserver.common.frame_log import FrameLog
from talkie_tui.devserver.common.tasks import finish_within


class LiveWork(Protocol):
    """A run or turn under way: the log its followers read, and its task."""

    @property
    def log(self) -> FrameLog: ...

    @property
    def task(self) -> asyncio.Task[None] | None: ...


Live = TypeVar("Live", bound=LiveWork)


class LiveWorks(Generic[Live]):
    """The live work of a server by key. Create it inside the server's event loop."""

    def __init__(self) -> None:
        self._live: dict[str, Live] = {}
        self._loop = asyncio.get_running_loop()
        self._stopping = threading.Event()

    def stopping(self) -> bool:
        """True once the server is shutting down (followers end their streams)."""
        return self._stopping.is_set()

    def request_stop(self) -> None:
        """Make followers end their streams; safe to call from any thread."""
        self._stopping.set()
        # A closed loop raises RuntimeError: then nobody is following anyway.
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(self._wake_all)

    def _wake_all(self) -> None:
        for live in self._live.values():
            live.log.wake()

    def _stop(self, key: str) -> None:
        """Ask the work under `key` to stop (each server's way)."""
        raise NotImplementedError

    async def shutdown(self, grace: float = 2.0) -> None:
        """Stop the live work, let it store what it has, and wait for the tasks."""
        self._stopping.set()
        for key in list(self._live):
            self._stop(key)
        self._wake_all()
        await finish_within(
            (live.task for live in self._live.values() if live.task is not None), grace
        )
