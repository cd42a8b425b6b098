"""What a microphone and a speaker share: a device opened by `start` and closed by `stop`."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod

from talkie_tui.voice.sound import StartedAndStopped

__all__ = ["SoundDevice"]


class SoundDevice(StartedAndStopped, ABC):
    """A sound device; `start` and `stop` are safe to repeat, and a failed open leaves it stopped.

    A subclass opens and closes the device (`_open`, `_close`) and resets what it buffers
    (`_reset_for_start`, `_reset_after_stop`).
    """

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._running = False

    @property
    def running(self) -> bool:
        """True between `start()` and `stop()`."""
        return self._running

    async def start(self) -> None:
        """Open the device. Raises `AudioUnavailable`."""
        if self._running:
            return
        self._loop = asyncio.get_running_loop()
        self._reset_for_start()
        # Running before the device opens: its first callback may come before _open returns.
        self._running = True
        try:
            await self._open()
        except BaseException:
            self._running = False
            raise

    async def stop(self) -> None:
        """Close the device."""
        if not self._running:
            return
        self._running = False
        try:
            await self._close()
        finally:
            self._reset_after_stop()

    @abstractmethod
    async def _open(self) -> None:
        """Open the device; its thread starts calling back."""

    @abstractmethod
    async def _close(self) -> None:
        """Close the device; no callback may follow."""

    @abstractmethod
    def _reset_for_start(self) -> None:
        """Forget what a previous start left behind."""

    @abstractmethod
    def _reset_after_stop(self) -> None:
        """Drop what is buffered and wake whoever waits on the device."""
