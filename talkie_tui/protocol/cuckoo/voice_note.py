"""A hub's voice note: a recording made into the audio the hub takes, with its length and
waveform.

A voice note is an audio file uploaded with `?kind=audio&duration_ms=…&waveform=…`
(`cuckoo-agent.md` "Media"): the hub sniffs the kind from the bytes, takes a recording of up
to 16 MiB and 10 minutes, and keeps the length and a waveform of up to 64 values from 0 to 100
as the recording device gave them (notes/cuckoo.md §3, §5.9): it never decodes the audio.

talkie sends WAV, 16 kHz mono 16-bit PCM: a RIFF/WAVE file every hub sniffs as audio, which
needs no encoder (no codec library to install) and plays back anywhere. At 32,000 bytes a
second, 16 MiB holds 8 min 44 s: a recording stops there (`MAX_SECONDS`), short of the hub's
10 minutes, and the screen says so. numpy is imported when a waveform is drawn, never before.
"""

from __future__ import annotations

import io
import itertools
import math
import wave
from dataclasses import dataclass

__all__ = [
    "MAX_BYTES",
    "MAX_DURATION_MS",
    "MAX_SECONDS",
    "WAVEFORM_MAX",
    "WAVEFORM_VALUES",
    "WAV_RATE",
    "VoiceNote",
    "read_wav",
    "waveform",
]

WAV_RATE = 16_000
_SAMPLE_BYTES = 2
_HEADER_BYTES = 44
MAX_BYTES = 16 * 1024 * 1024  # the hub's ceiling for audio
MAX_DURATION_MS = 600_000  # the hub's ten minutes
WAVEFORM_VALUES = 64
WAVEFORM_MAX = 100
MAX_SECONDS = min(
    MAX_DURATION_MS // 1000, (MAX_BYTES - _HEADER_BYTES) // (WAV_RATE * _SAMPLE_BYTES)
)
"""The longest recording whose WAV fits the hub's 16 MiB: 524 s (8:44)."""


def waveform(pcm: bytes, values: int = WAVEFORM_VALUES) -> list[int]:
    """`values` levels from 0 to 100 of mono 16-bit PCM: each slice's loudness (RMS), scaled
    so that the loudest slice is 100 (a quiet note still shows its shape); silence is zeros."""
    import numpy as np

    samples = np.frombuffer(pcm[: len(pcm) // 2 * 2], dtype="<i2").astype(np.float64)
    if len(samples) == 0:
        return [0] * values
    edges = np.linspace(0, len(samples), values + 1).astype(int)
    levels = [
        math.sqrt(float(np.mean(np.square(samples[a:b])))) if b > a else 0.0
        for a, b in itertools.pairwise(int(edge) for edge in edges)
    ]
    loudest = max(levels)
    if loudest < 1.0:  # digital silence (or all but)
        return [0] * values
    return [min(WAVEFORM_MAX, round(WAVEFORM_MAX * level / loudest)) for level in levels]


def _wav(pcm: bytes, rate: int) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as file:
        file.setnchannels(1)
        file.setsampwidth(_SAMPLE_BYTES)
        file.setframerate(rate)
        file.writeframes(pcm)
    return buffer.getvalue()


def read_wav(data: bytes) -> tuple[bytes, int, int]:
    """The frames, sample rate and channel count of a 16-bit WAV (ValueError if it is not)."""
    try:
        with wave.open(io.BytesIO(data), "rb") as file:
            if file.getsampwidth() != _SAMPLE_BYTES:
                raise ValueError("not 16-bit PCM")
            return file.readframes(file.getnframes()), file.getframerate(), file.getnchannels()
    except (wave.Error, EOFError) as error:
        raise ValueError(f"not a WAV file: {error}") from error


@dataclass(frozen=True, slots=True)
class VoiceNote:
    """A recording ready for the hub: its WAV, its length and its waveform."""

    wav: bytes
    duration_ms: int
    waveform: tuple[int, ...]

    @classmethod
    def from_pcm(cls, pcm: bytes, rate: int = WAV_RATE) -> VoiceNote:
        """Mono 16-bit PCM at `rate`, cut to what the hub takes (`MAX_SECONDS`)."""
        frames = len(pcm) // _SAMPLE_BYTES
        frames = min(frames, MAX_SECONDS * rate)
        pcm = pcm[: frames * _SAMPLE_BYTES]
        duration_ms = min(MAX_DURATION_MS, round(frames * 1000 / rate))
        return cls(_wav(pcm, rate), duration_ms, tuple(waveform(pcm)))

    @classmethod
    def from_wav(cls, data: bytes) -> VoiceNote:
        """A mono 16-bit WAV made elsewhere (a speech synthesizer's), measured the same way."""
        pcm, rate, channels = read_wav(data)
        if channels != 1:
            raise ValueError("a voice note is mono")
        return cls.from_pcm(pcm, rate)

    def upload_params(self) -> dict[str, str]:
        """The upload's query options: the kind claimed, the length, the waveform."""
        return {
            "kind": "audio",
            "duration_ms": str(self.duration_ms),
            "waveform": ",".join(str(value) for value in self.waveform),
        }
