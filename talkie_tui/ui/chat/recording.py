"""A dictation's sound, kept in memory and made into the WAV a server transcribes.

The microphone gives 20 ms frames of 48 kHz mono int16 (`talkie_tui.voice.sound`); speech
recognition wants no more than 16 kHz, so the recording is kept at a third of the rate (each
three samples averaged: a crude low-pass, enough for speech) and a minute is under 2 MB.
Nothing here imports numpy at import time: the frames bring it along when a recording starts.
"""

from __future__ import annotations

import io
import wave
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from talkie_tui.voice.sound import Samples

__all__ = ["MAX_SECONDS", "WAV_RATE", "Recording", "encode_wav"]

WAV_RATE = 16_000
MAX_SECONDS = 120.0  # a longer dictation stops by itself: a message is not a lecture
_MIC_RATE = 48_000


def encode_wav(pcm: bytes, sample_rate: int = WAV_RATE) -> bytes:
    """Mono 16-bit little-endian PCM as a WAV file."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as file:
        file.setnchannels(1)
        file.setsampwidth(2)
        file.setframerate(sample_rate)
        file.writeframes(pcm)
    return buffer.getvalue()


class Recording:
    """The frames heard so far, at `WAV_RATE`, and how long they last."""

    def __init__(self) -> None:
        self._chunks: list[bytes] = []
        self._samples = 0

    def add(self, frame: Samples) -> None:
        """Keep one microphone frame (48 kHz mono int16), a third of its samples."""
        factor = _MIC_RATE // WAV_RATE
        whole = len(frame) // factor * factor
        reduced = frame[:whole].reshape(-1, factor).mean(axis=1).round().astype("<i2")
        self._chunks.append(reduced.tobytes())
        self._samples += len(reduced)

    @property
    def seconds(self) -> float:
        """How long the recording is."""
        return self._samples / WAV_RATE

    def pcm(self) -> bytes:
        """The recording as mono 16-bit PCM at `WAV_RATE`."""
        return b"".join(self._chunks)

    def wav(self) -> bytes:
        """The recording as a WAV file."""
        return encode_wav(self.pcm())
