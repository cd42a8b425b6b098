"""What every speaker shares: a queue of audio a playing thread empties, and knowing it drained.

The queue is shared with the playing thread (PortAudio's callback, or a double's clock) under a
lock, and bounded: the oldest audio is dropped, so the delay cannot grow.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from abc import abstractmethod
from collections import deque
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from talkie_tui.voice.sound import (
    SAMPLE_RATE,
    AudioError,
    AudioLevel,
    LevelMeter,
    Samples,
    as_mono,
)
from talkie_tui.voice.sound_device import SoundDevice

__all__ = ["Speaker"]


class Speaker(SoundDevice):
    """A queue of audio to play, emptied by a playing thread; knows when playback has drained."""

    def __init__(self, *, max_queue_seconds: float = 2.0, prebuffer_seconds: float = 0.04) -> None:
        super().__init__()
        self.dropped_samples = 0
        """Samples dropped because more than `max_queue_seconds` was queued."""
        self.underruns = 0
        """Blocks the device reported as underflowed."""
        self._max_queued = int(max_queue_seconds * SAMPLE_RATE)
        self._prebuffer = int(prebuffer_seconds * SAMPLE_RATE)
        self._prebuffer_seconds = prebuffer_seconds
        self._lock = threading.Lock()  # guards the fields below, shared with the playing thread
        self._chunks: deque[Samples] = deque()
        self._offset = 0  # samples of _chunks[0] already played
        self._queued = 0
        self._hold_until: float | None = None
        self._tail_until = 0.0  # monotonic time the last played sample leaves the device
        self._latency = 0.0  # seconds from handing a block to the device to hearing it
        self._meter = LevelMeter()
        self._emptied = asyncio.Event()
        self.failure: AudioError | None = None
        """Set when the device stopped on its own; what was queued is dropped."""

    @property
    def level(self) -> AudioLevel:
        """How loud the audio playing now is."""
        return self._meter.level

    @property
    def playing(self) -> bool:
        """True while written audio is queued or still on its way out of the device."""
        # Plain reads of an int and a float: safe from any thread without the lock.
        return self._queued > 0 or time.monotonic() < self._tail_until

    @property
    def queued_seconds(self) -> float:
        """Audio written but not yet handed to the device."""
        return self._queued / SAMPLE_RATE

    @property
    def latency(self) -> float:
        """The device's output latency in seconds (0 for the test double unless set)."""
        return self._latency

    def _reset_for_start(self) -> None:
        self._meter.reset()
        self.failure = None

    def _reset_after_stop(self) -> None:
        # What is queued is dropped, and `drained()` waiters return.
        with self._lock:
            self._chunks.clear()
            self._offset = self._queued = 0
            self._tail_until = 0.0
        self._meter.reset()
        self._emptied.set()

    def write(self, samples: NDArray[Any], channels: int = 1) -> None:
        """Queue 48 kHz int16 audio: mono, (n, channels), or interleaved/packed with `channels`.

        Call it from the event loop thread. aiortc's decoded frames are s16 stereo packed:
        `speaker.write(frame.to_ndarray(), channels=2)`.
        """
        mono = as_mono(samples, channels)
        if len(mono) == 0:
            return
        now = time.monotonic()
        with self._lock:
            if self._queued == 0 and now >= self._tail_until:
                # Starting from silence: hold playback until a little is buffered, so network
                # jitter does not chop the first syllables.
                self._hold_until = now + self._prebuffer_seconds
            self._chunks.append(mono)
            self._queued += len(mono)
            excess = self._queued - self._max_queued
            if excess > 0:
                self._drop_oldest(excess)
        self._emptied.clear()

    def clear(self) -> None:
        """Drop everything queued (barge-in); what the device already has still plays out."""
        with self._lock:
            dropped = self._queued
            self._chunks.clear()
            self._offset = self._queued = 0
            self._hold_until = None
            if dropped:
                self._tail_until = max(self._tail_until, time.monotonic() + self._latency)
        self._emptied.set()

    async def drained(self) -> None:
        """Wait until everything written has been played, including the device's latency."""
        while self._running:
            if self._queued > 0:
                await self._emptied.wait()
                continue
            delay = self._tail_until - time.monotonic()
            if delay <= 0:
                return
            await asyncio.sleep(delay)  # then look again: more audio may have been written

    @abstractmethod
    async def _open(self) -> None:
        """Start playing: the playing thread calls `_render` for every block."""

    @abstractmethod
    async def _close(self) -> None:
        """Stop playing; no `_render` call may follow."""

    def _drop_oldest(self, count: int) -> None:
        # Under the lock. A queue that keeps growing means the device is slower than the sender;
        # dropping the oldest audio keeps the delay bounded instead of growing forever.
        self.dropped_samples += count
        self._queued -= count
        while count > 0:
            head = self._chunks[0]
            left = len(head) - self._offset
            if left > count:
                self._offset += count
                return
            count -= left
            self._chunks.popleft()
            self._offset = 0

    # Playing thread side -----------------------------------------------------------------------

    def _render(self, frames: int) -> tuple[Samples, int]:
        """The next `frames` samples to play, zero-filled; and how many of them are real audio."""
        out = np.zeros(frames, np.int16)
        filled = 0
        emptied = False
        now = time.monotonic()
        with self._lock:
            holding = (
                self._hold_until is not None
                and now < self._hold_until
                and self._queued < self._prebuffer
            )
            if self._queued and not holding:
                self._hold_until = None
                while filled < frames and self._chunks:
                    head = self._chunks[0]
                    take = min(frames - filled, len(head) - self._offset)
                    out[filled : filled + take] = head[self._offset : self._offset + take]
                    filled += take
                    self._offset += take
                    if self._offset == len(head):
                        self._chunks.popleft()
                        self._offset = 0
                self._queued -= filled
                if self._queued == 0:
                    emptied = True
                    # The last real sample sits `filled` samples into this block, and the block
                    # is heard `latency` seconds after we hand it over.
                    self._tail_until = now + filled / SAMPLE_RATE + self._latency
        self._meter.add(out)
        if emptied:
            self._post(self._on_emptied)
        return out, filled

    def _post(self, callback: Callable[[], None]) -> None:
        loop = self._loop
        if loop is None:
            return
        with contextlib.suppress(RuntimeError):  # a late callback after the loop closed
            loop.call_soon_threadsafe(callback)

    def _on_emptied(self) -> None:
        # A write may have slipped in between the thread emptying the queue and this call.
        if self._queued == 0:
            self._emptied.set()

    def _fail_from_thread(self, error: AudioError) -> None:
        """The device stopped on its own: drop the queue so `drained()` does not wait forever."""
        loop = self._loop
        if loop is None:
            return
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(self._set_failure, error)

    def _set_failure(self, error: AudioError) -> None:
        if not self._running:
            return
        self.failure = error
        self.clear()
        self._tail_until = 0.0
