"""The ordered event frames of a run or a turn, which any number of followers stream."""

from __future__ import annotations

import asyncio
import contextlib


class FrameLog:
    """The ordered event frames of one run or turn; followers wait on it for more."""

    def __init__(self, frames: list[str] | None = None, *, done: bool = False) -> None:
        self.frames: list[str] = list(frames or [])
        self.done = done
        self._changed = asyncio.Event()

    def append(self, frame: str) -> None:
        """Add one encoded event and wake the followers."""
        self.frames.append(frame)
        self.wake()

    def finish(self) -> None:
        """Mark the log complete: followers stop after the last frame."""
        self.done = True
        self.wake()

    def wake(self) -> None:
        """Wake every follower (also used to make them notice a server stop)."""
        self._changed.set()
        self._changed = asyncio.Event()

    async def wait_for_more(self, seen: int, patience: float) -> bool:
        """Wait up to `patience` s for more than `seen` frames or a wake-up; False on timeout."""
        if len(self.frames) > seen or self.done:
            return True
        changed = self._changed  # a wake-up sets this one and puts a new one in its place
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(patience):
                await changed.wait()
        return changed.is_set()
