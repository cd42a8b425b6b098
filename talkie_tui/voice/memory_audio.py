"""A microphone and a speaker without a sound card, keeping real time.

`ScriptedMicrophone` "hears" the speech given to it, `RecordingSpeaker` plays into memory. Each
runs on its own 20 ms clock thread exactly like a sound card's callback thread, so tests of the
push-to-talk and consent machinery see the same timing as a real call. They are in the package,
not the tests, because `benchmarks/voice_call.py` drives a call with them too.
"""

from __future__ import annotations

import asyncio
import threading
import time
import wave
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from talkie_tui.voice.microphone import Microphone
from talkie_tui.voice.sound import (
    FRAME_SAMPLES,
    FRAME_SECONDS,
    SAMPLE_RATE,
    AudioUnavailable,
    Samples,
    as_mono,
)
from talkie_tui.voice.speaker import Speaker

__all__ = ["RecordingSpeaker", "ScriptedMicrophone", "load_wav", "resample"]


class _Clock:
    """Calls `tick` every 20 ms on its own thread, the way a sound card calls back."""

    def __init__(
        self, name: str, tick: Callable[[], None], on_error: Callable[[Exception], None]
    ) -> None:
        self._tick = tick
        self._on_error = on_error
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join()

    def _run(self) -> None:
        due = time.monotonic() + FRAME_SECONDS
        while not self._stopping.is_set():
            now = time.monotonic()
            if now < due:
                self._stopping.wait(due - now)
                continue
            if now - due > 0.2:
                # Stalled (a loaded machine): skip ahead like a card that overran, rather than
                # delivering a burst that would look like audio arriving faster than real time.
                due = now
            try:
                self._tick()
            except Exception as error:  # reported to the owner; the clock stops
                self._on_error(error)
                return
            due += FRAME_SECONDS


def load_wav(path: str | Path) -> Samples:
    """A 16-bit PCM WAV as 48 kHz mono int16 (channels averaged, other rates resampled)."""
    with wave.open(str(path), "rb") as file:
        if file.getsampwidth() != 2:
            raise ValueError(f"{path}: only 16-bit PCM WAV files are supported")
        channels, rate = file.getnchannels(), file.getframerate()
        data = np.frombuffer(file.readframes(file.getnframes()), dtype="<i2")
    mono = as_mono(data.astype(np.int16), channels)
    return resample(mono, rate)


def resample(samples: Samples, rate: int) -> Samples:
    """Mono int16 at `rate` to 48 kHz by linear interpolation (good enough for test speech)."""
    if rate == SAMPLE_RATE or len(samples) == 0:
        return samples
    count = round(len(samples) * SAMPLE_RATE / rate)
    positions = np.arange(count) * (rate / SAMPLE_RATE)
    values = np.interp(positions, np.arange(len(samples)), samples.astype(np.float64))
    result: Samples = np.clip(np.round(values), -32768, 32767).astype(np.int16)
    return result


class ScriptedMicrophone(Microphone):
    """A microphone that "hears" the WAVs or arrays given to `say()`, in real time; else silence."""

    def __init__(
        self,
        *,
        half_duplex: Speaker | None = None,
        max_queue_frames: int = 10,
    ) -> None:
        super().__init__(half_duplex=half_duplex, max_queue_frames=max_queue_frames)
        self._lock = threading.Lock()
        self._script: deque[Samples] = deque()
        self._said = asyncio.Event()
        self._said.set()
        self._clock: _Clock | None = None

    def say(self, audio: NDArray[Any] | str | Path, *, sample_rate: int = SAMPLE_RATE) -> float:
        """Queue speech (a WAV path, or mono int16 at `sample_rate`); returns its length in s."""
        samples = (
            load_wav(audio)
            if isinstance(audio, str | Path)
            else resample(as_mono(audio, 1), sample_rate)
        )
        with self._lock:
            self._script.append(samples)
        self._said.clear()
        return len(samples) / SAMPLE_RATE

    @property
    def speaking(self) -> bool:
        """True while audio given to `say()` has not all been heard yet."""
        return bool(self._script)

    async def said(self) -> None:
        """Wait until everything given to `say()` has been heard (or the microphone stops)."""
        while self.speaking and self._running:
            await self._said.wait()

    async def _open(self) -> None:
        self._clock = _Clock("talkie-scripted-mic", self._tick, self._clock_failed)
        self._clock.start()

    async def _close(self) -> None:
        clock, self._clock = self._clock, None
        if clock is not None:
            await asyncio.to_thread(clock.stop)
        self._said.set()  # wake `said()` waiters: nothing more will be heard

    def _tick(self) -> None:
        block = np.zeros(FRAME_SAMPLES, np.int16)
        filled = 0
        with self._lock:
            while filled < FRAME_SAMPLES and self._script:
                head = self._script[0]
                take = min(FRAME_SAMPLES - filled, len(head))
                block[filled : filled + take] = head[:take]
                filled += take
                if take == len(head):
                    self._script.popleft()
                else:
                    self._script[0] = head[take:]
            finished = filled > 0 and not self._script
        self._capture(block)
        if finished:
            self._post(self._on_said)

    def _on_said(self) -> None:
        if not self._script:
            self._said.set()

    def _clock_failed(self, error: Exception) -> None:
        self._fail_from_thread(AudioUnavailable(f"the scripted microphone failed: {error}"))


class RecordingSpeaker(Speaker):
    """A speaker that plays in real time into memory; `recording()` is what it played."""

    def __init__(
        self,
        *,
        latency: float = 0.0,
        max_queue_seconds: float = 30.0,
        prebuffer_seconds: float = 0.04,
    ) -> None:
        super().__init__(max_queue_seconds=max_queue_seconds, prebuffer_seconds=prebuffer_seconds)
        self._latency = latency
        self._played: list[Samples] = []
        self._played_lock = threading.Lock()
        self._clock: _Clock | None = None

    def recording(self) -> Samples:
        """Every real sample played so far, in order (silence between writes is left out)."""
        with self._played_lock:
            return np.concatenate(self._played) if self._played else np.zeros(0, np.int16)

    async def _open(self) -> None:
        self._clock = _Clock("talkie-recording-speaker", self._tick, lambda _error: None)
        self._clock.start()

    async def _close(self) -> None:
        clock, self._clock = self._clock, None
        if clock is not None:
            await asyncio.to_thread(clock.stop)

    def _tick(self) -> None:
        block, filled = self._render(FRAME_SAMPLES)
        if filled:
            with self._played_lock:
                self._played.append(block[:filled])
