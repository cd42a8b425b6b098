"""The sound of a call: 48 kHz mono int16 in 20 ms frames, its levels, and the audio errors.

Shared by every microphone and speaker (`microphone.py`, `speaker.py`), with the `async with`
contract they all keep (`StartedAndStopped`).
"""

from __future__ import annotations

import math
import threading
from collections import deque
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "FRAME_SAMPLES",
    "FRAME_SECONDS",
    "SAMPLE_RATE",
    "SILENCE_DBFS",
    "AudioError",
    "AudioLevel",
    "AudioStopped",
    "AudioUnavailable",
    "LevelMeter",
    "Samples",
    "StartedAndStopped",
    "as_mono",
]

SAMPLE_RATE = 48_000
"""Opus runs at 48 kHz, so capturing at 48 kHz saves the encoder a resample."""
FRAME_SAMPLES = 960
"""One 20 ms frame: what aiortc's Opus encoder consumes per packet."""
FRAME_SECONDS = FRAME_SAMPLES / SAMPLE_RATE
SILENCE_DBFS = -100.0
"""The level reported for digital silence (log10 of zero has no value)."""

Samples = NDArray[np.int16]


class AudioError(Exception):
    """Something went wrong with sound in or out."""


class AudioUnavailable(AudioError):
    """Sound cannot be used here; `reason` says why in words for the user (chat is unaffected)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class AudioStopped(AudioError):
    """The microphone was stopped while someone was reading from it."""


@dataclass(frozen=True, slots=True)
class AudioLevel:
    """Loudness of the last ~100 ms in dBFS (0 is full scale, `SILENCE_DBFS` digital silence)."""

    rms_dbfs: float = SILENCE_DBFS
    peak_dbfs: float = SILENCE_DBFS

    @property
    def fraction(self) -> float:
        """The RMS level as 0..1 for a meter: -60 dBFS and below is 0, full scale is 1."""
        return min(1.0, max(0.0, (self.rms_dbfs + 60.0) / 60.0))

    @property
    def silent(self) -> bool:
        """True below -60 dBFS RMS: quieter than any voice a microphone would pick up."""
        return self.rms_dbfs < -60.0


def _dbfs(value: float) -> float:
    return SILENCE_DBFS if value <= 0 else max(SILENCE_DBFS, 20.0 * math.log10(value / 32768.0))


class LevelMeter:
    """RMS and peak over the last few blocks; fed by the audio thread, read by the UI."""

    def __init__(self, window_blocks: int = 5) -> None:
        self._lock = threading.Lock()
        # (sum of squares, sample count, peak) per block: a window of ~100 ms smooths the meter
        # without making it lag behind speech.
        self._blocks: deque[tuple[float, int, int]] = deque(maxlen=window_blocks)

    def add(self, samples: Samples) -> None:
        """Count one block of samples (on the audio thread)."""
        if len(samples) == 0:
            return
        wide = samples.astype(np.float32)
        peak = int(np.max(np.abs(samples.astype(np.int32))))
        with self._lock:
            self._blocks.append((float(np.dot(wide, wide)), len(samples), peak))

    def reset(self) -> None:
        """Forget every block: the level is silence again."""
        with self._lock:
            self._blocks.clear()

    @property
    def level(self) -> AudioLevel:
        """RMS and peak over the window."""
        with self._lock:
            blocks = list(self._blocks)
        count = sum(n for _rms, n, _peak in blocks)
        if count == 0:
            return AudioLevel()
        rms = math.sqrt(sum(s for s, _count, _peak in blocks) / count)
        return AudioLevel(_dbfs(rms), _dbfs(max(p for _rms, _count, p in blocks)))


class StartedAndStopped:
    """`async with` for anything with `start()` and `stop()`: stopped even on errors."""

    async def start(self) -> None:
        """Open what this object holds."""
        raise NotImplementedError

    async def stop(self) -> None:
        """Close what this object holds."""
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()


def as_mono(samples: NDArray[Any], channels: int) -> Samples:
    """Mono int16 from mono, (n, channels), or interleaved/packed audio."""
    array = np.asarray(samples)
    if array.dtype != np.int16:
        raise TypeError(f"the speaker plays int16 samples, not {array.dtype}")
    if array.ndim == 1 or (array.ndim == 2 and array.shape[0] == 1):
        # Interleaved, or PyAV's packed layout of shape (1, samples * channels).
        array = array.reshape(-1, channels)
    if array.ndim != 2:
        raise ValueError(f"cannot play audio of shape {np.shape(samples)}")
    if array.shape[1] == 1:
        return array[:, 0].copy()
    # Average the channels: the assistant's voice is mono content carried in stereo.
    mixed: Samples = (array.astype(np.int32).sum(axis=1) // array.shape[1]).astype(np.int16)
    return mixed
