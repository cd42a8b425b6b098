"""A voice note through the speaker: its WAV decoded to the speaker's 48 kHz mono, written a
little ahead of what plays (the speaker's queue drops what is more than 2 s ahead), and how far
it has come told as it goes. Cancelling the task stops it; the caller stops the speaker."""

from __future__ import annotations

import asyncio
import io
import wave
from collections.abc import Callable

import numpy as np

from talkie_tui.voice.sound import SAMPLE_RATE, Samples, as_mono
from talkie_tui.voice.speaker import Speaker

__all__ = ["decode_wav", "play_note"]

AHEAD = 0.5  # seconds written ahead of what the speaker plays
CHUNK = SAMPLE_RATE // 10
TICK = 0.05


def decode_wav(data: bytes) -> Samples:
    """A 16-bit PCM WAV as 48 kHz mono int16 (ValueError when it is not one)."""
    try:
        with wave.open(io.BytesIO(data), "rb") as file:
            if file.getsampwidth() != 2:
                raise ValueError("the voice note is not 16-bit PCM")
            rate, channels = file.getframerate(), file.getnchannels()
            frames = file.readframes(file.getnframes())
    except (wave.Error, EOFError) as error:
        raise ValueError(f"the voice note is not a WAV file: {error}") from error
    mono = as_mono(np.frombuffer(frames, dtype="<i2").astype(np.int16), channels)
    if rate == SAMPLE_RATE or len(mono) == 0:
        return mono
    count = round(len(mono) * SAMPLE_RATE / rate)
    times = np.arange(count) * (rate / SAMPLE_RATE)
    resampled: Samples = np.interp(times, np.arange(len(mono)), mono).astype(np.int16)
    return resampled


async def play_note(speaker: Speaker, samples: Samples, progress: Callable[[float], None]) -> None:
    """Play `samples` on a started speaker, calling `progress(0..1)` as they are heard."""
    total = max(1, len(samples))
    written = 0

    def heard() -> float:
        return max(0.0, (written - speaker.queued_seconds * SAMPLE_RATE) / total)

    while written < len(samples):
        while speaker.queued_seconds > AHEAD:
            progress(heard())
            await asyncio.sleep(TICK)
        speaker.write(samples[written : written + CHUNK])
        written += CHUNK
        progress(heard())
    while speaker.playing:
        progress(heard())
        await asyncio.sleep(TICK)
    progress(1.0)
