"""What every microphone shares: blocks from a capture thread made into paced 20 ms frames.

The capture thread (PortAudio's callback, or a double's clock) copies each block and posts it to
the event loop with `call_soon_threadsafe` into a bounded queue that drops the oldest frame, so a
stalled loop cannot build up latency. Muting and half-duplex zero the frames at capture time.
"""

from __future__ import annotations

import asyncio
import contextlib
from abc import abstractmethod
from collections import deque
from collections.abc import Callable
from typing import Any

import numpy as np

from talkie_tui.voice.sound import (
    FRAME_SAMPLES,
    AudioError,
    AudioLevel,
    AudioStopped,
    LevelMeter,
    Samples,
)
from talkie_tui.voice.sound_device import SoundDevice
from talkie_tui.voice.speaker import Speaker

__all__ = ["Microphone"]


class Microphone(SoundDevice):
    """Turns blocks from a capture thread into paced 20 ms frames for the event loop."""

    def __init__(self, *, half_duplex: Speaker | None = None, max_queue_frames: int = 10) -> None:
        super().__init__()
        self.muted = False
        self.half_duplex = half_duplex
        """When set, frames captured while this speaker plays are zeros (no echo to the model)."""
        self.dropped_frames = 0
        """Frames dropped because the reader fell more than `max_queue_frames` behind."""
        self.overflows = 0
        """Blocks the device reported as overflowed (audio lost before it reached us)."""
        self._max_queue_frames = max_queue_frames
        self._meter = LevelMeter()
        self._frames: deque[Samples] = deque()  # event loop thread only
        self._remainder = np.zeros(0, np.int16)  # capture thread only
        self._waiter: asyncio.Future[None] | None = None
        self._failure: AudioError | None = None

    @property
    def level(self) -> AudioLevel:
        """What the microphone hears now (even while muted, so the UI can show it works)."""
        return self._meter.level

    @property
    def gated(self) -> bool:
        """True while frames are zeroed: muted, or half-duplex and the speaker is playing."""
        return self.muted or (self.half_duplex is not None and self.half_duplex.playing)

    @property
    def backlog(self) -> int:
        """Frames captured but not read yet (the reader is behind the sound card)."""
        return len(self._frames)

    def _reset_for_start(self) -> None:
        self._frames.clear()
        self._remainder = np.zeros(0, np.int16)
        self._failure = None
        self._meter.reset()

    def _reset_after_stop(self) -> None:
        # A pending `read_frame` wakes to find the microphone stopped (AudioStopped).
        self._frames.clear()
        self._meter.reset()
        self._wake()

    async def read_frame(self) -> Samples:
        """The next frame (960 samples), waiting for the capture clock; zeros while muted."""
        while not self._frames:
            if self._failure is not None:
                raise self._failure
            if not self._running:
                raise AudioStopped("the microphone is stopped")
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        frame = self._frames.popleft()
        # Muting also applies to frames captured just before it: the next frame read is silent.
        return np.zeros(FRAME_SAMPLES, np.int16) if self.muted else frame

    @abstractmethod
    async def _open(self) -> None:
        """Start capturing: call `_capture` from the capture thread with each block."""

    @abstractmethod
    async def _close(self) -> None:
        """Stop capturing; no `_capture` call may follow."""

    # Capture thread side -----------------------------------------------------------------------

    def _capture(self, samples: Samples) -> None:
        """Take one block of mono samples (any length) on the capture thread."""
        self._meter.add(samples)
        # Gate at capture time: audio heard while the speaker played (echo) or while muted is
        # never sent, however late the reader picks it up.
        if self.gated:
            samples = np.zeros(len(samples), np.int16)
        joined = np.concatenate((self._remainder, samples)) if len(self._remainder) else samples
        whole = len(joined) // FRAME_SAMPLES * FRAME_SAMPLES
        self._remainder = joined[whole:].copy()
        if whole:
            frames = [joined[i : i + FRAME_SAMPLES].copy() for i in range(0, whole, FRAME_SAMPLES)]
            self._post(self._accept, frames)

    def _fail_from_thread(self, error: AudioError) -> None:
        """The device stopped on its own (unplugged, server gone): readers get `error`."""
        self._post(self._set_failure, error)

    def _post(self, callback: Callable[..., None], *args: Any) -> None:
        loop = self._loop
        if loop is None:
            return
        # A late callback after the loop closed: nobody is listening any more.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(callback, *args)

    # Event loop side ---------------------------------------------------------------------------

    def _accept(self, frames: list[Samples]) -> None:
        if not self._running:
            return
        for frame in frames:
            if len(self._frames) >= self._max_queue_frames:
                # Drop the oldest: a reader that fell behind catches up instead of lagging.
                self._frames.popleft()
                self.dropped_frames += 1
            self._frames.append(frame)
        self._wake()

    def _set_failure(self, error: AudioError) -> None:
        if self._running:
            self._failure = error
            self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)
