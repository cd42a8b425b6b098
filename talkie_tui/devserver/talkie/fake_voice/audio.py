"""Audio of the fake provider: hearing (energy-based speech detection) and speaking (TTS).

Speech comes from espeak-ng when it is installed, otherwise from tones, one per word. The
outgoing track is paced like a sound card: 48 kHz mono s16 in 20 ms frames, silence between
utterances.
"""

from __future__ import annotations

import asyncio
import contextlib
import fractions
import logging
import math
import shutil
import struct
import time
from collections import deque
from typing import Literal

import av
import numpy as np
from aiortc.mediastreams import MediaStreamError, MediaStreamTrack

from talkie_tui.core.waiting import wait_within

logger = logging.getLogger(__name__)

SAMPLE_RATE = 48_000
FRAME_SAMPLES = 960  # 20 ms, the Opus frame aiortc sends
FRAME_SECONDS = FRAME_SAMPLES / SAMPLE_RATE
TTS_TIMEOUT = 10.0
ESPEAK_VOICES = {"cs": "cs", "en": "en"}
ESPEAK_WORDS_PER_MINUTE = 190  # a little brisker than espeak's 175, closer to a voice assistant

_SILENCE = np.zeros(FRAME_SAMPLES, dtype=np.int16)


def rms(samples: np.ndarray) -> float:
    """Root mean square of s16 samples (any shape; interleaved channels are fine)."""
    if samples.size == 0:
        return 0.0
    values = samples.astype(np.float64)
    return float(np.sqrt(np.mean(values * values)))


def rms_threshold(threshold: float) -> float:
    """The RMS a frame needs to count as speech for a turn-detection `threshold` in 0..1.

    0.5 (the default) is -40 dBFS, 0 is -60 dBFS and 1 is -20 dBFS: higher is less sensitive,
    as with the real server VAD.
    """
    clamped = min(max(threshold, 0.0), 1.0)
    return 32768.0 * 10 ** ((-60.0 + 40.0 * clamped) / 20.0)


class SpeechDetector:
    """Speech start after `min_speech_ms` of loud audio; its end after `silence_ms` of quiet."""

    def __init__(self, silence_ms: float = 500.0, min_speech_ms: float = 60.0) -> None:
        self.silence_ms = silence_ms
        self.min_speech_ms = min_speech_ms
        self.speaking = False
        self._loud_ms = 0.0
        self._quiet_ms = 0.0

    @property
    def loud_ms(self) -> float:
        """Length of the loud stretch that started the current speech."""
        return self._loud_ms

    @property
    def quiet_ms(self) -> float:
        """Quiet since the last loud frame (the hangover so far)."""
        return self._quiet_ms

    def reset(self) -> None:
        """Forget the current state (after a buffer clear)."""
        self.speaking = False
        self._loud_ms = self._quiet_ms = 0.0

    def feed(self, loud: bool, ms: float) -> Literal["started", "stopped"] | None:
        """Account one frame; says when speech starts or stops."""
        if loud:
            self._quiet_ms = 0.0
            if not self.speaking:
                self._loud_ms += ms
                if self._loud_ms >= self.min_speech_ms:
                    self.speaking = True
                    return "started"
            return None
        if not self.speaking:
            self._loud_ms = 0.0  # a start needs one unbroken loud stretch, not scattered clicks
            return None
        self._quiet_ms += ms
        if self._quiet_ms >= self.silence_ms:
            self.speaking = False
            self._loud_ms = 0.0
            return "stopped"
        return None


class Playback:
    """One utterance queued on the output track; `finished` is True when played, False if cut."""

    def __init__(self, frames: int) -> None:
        self.total = frames
        self.sent = 0
        self.finished: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        if frames == 0:
            self.finished.set_result(True)

    @property
    def progress(self) -> float:
        """The share of the utterance already sent, 0..1."""
        return 1.0 if self.total == 0 else self.sent / self.total

    def _resolve(self, played: bool) -> None:
        if not self.finished.done():
            self.finished.set_result(played)


class OutputTrack(MediaStreamTrack):
    """The provider's voice: queued utterances, else silence, paced in real time."""

    kind = "audio"

    def __init__(self) -> None:
        super().__init__()
        self._queue: deque[tuple[Playback, np.ndarray]] = deque()
        self._start: float | None = None
        self._pts = 0

    def play(self, pcm: np.ndarray) -> Playback:
        """Queue 48 kHz mono s16 samples; they go out after what is already queued."""
        frames = math.ceil(len(pcm) / FRAME_SAMPLES)
        padded = np.zeros(frames * FRAME_SAMPLES, dtype=np.int16)
        padded[: len(pcm)] = pcm
        playback = Playback(frames)
        for index in range(frames):
            chunk = padded[index * FRAME_SAMPLES : (index + 1) * FRAME_SAMPLES]
            self._queue.append((playback, chunk))
        return playback

    def clear(self) -> bool:
        """Drop everything queued (barge-in); True when something was still to be played."""
        cut = bool(self._queue)
        for playback, _ in self._queue:
            playback._resolve(False)
        self._queue.clear()
        return cut

    def stop(self) -> None:
        """End the track; queued speech counts as cut."""
        self.clear()
        super().stop()

    async def recv(self) -> av.AudioFrame:
        """The next 20 ms frame, no earlier than its time (aiortc sends as fast as we return)."""
        if self.readyState != "live":
            raise MediaStreamError
        if self._start is None:
            self._start = time.monotonic()
        else:
            self._pts += FRAME_SAMPLES
            wait = self._start + self._pts / SAMPLE_RATE - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
        samples = _SILENCE
        if self._queue:
            playback, samples = self._queue.popleft()
            playback.sent += 1
            if playback.sent >= playback.total:
                playback._resolve(True)
        frame = av.AudioFrame.from_ndarray(samples.reshape(1, -1), format="s16", layout="mono")
        frame.sample_rate = SAMPLE_RATE
        frame.pts = self._pts
        frame.time_base = fractions.Fraction(1, SAMPLE_RATE)
        return frame


# --- speaking --------------------------------------------------------------------------------


def espeak_available() -> bool:
    """Whether espeak-ng is on the PATH."""
    return shutil.which("espeak-ng") is not None


async def synthesize(text: str, locale: str) -> np.ndarray:
    """Speech for `text` as 48 kHz mono s16: espeak-ng when installed, else tones."""
    if espeak_available():
        try:
            rate, samples = await _espeak(text, locale)
            return resample(samples, rate, SAMPLE_RATE)
        except (OSError, ValueError, TimeoutError) as exc:
            logger.warning("espeak-ng failed (%s); speaking in tones", exc)
    return tones(text)


async def _espeak(text: str, locale: str) -> tuple[int, np.ndarray]:
    espeak = shutil.which("espeak-ng") or "espeak-ng"
    # The text goes in on stdin, so nothing in it can be taken for an option.
    process = await asyncio.create_subprocess_exec(
        espeak,
        "--stdout",
        "-s",
        str(ESPEAK_WORDS_PER_MINUTE),
        "-v",
        ESPEAK_VOICES.get(locale, "en"),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        wav, _ = await wait_within(process.communicate(text.encode("utf-8")), TTS_TIMEOUT)
    finally:
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
    if process.returncode != 0:
        raise OSError(f"espeak-ng exited with {process.returncode}")
    return parse_wav(wav)


def parse_wav(data: bytes) -> tuple[int, np.ndarray]:
    """(rate, mono s16 samples) of a 16-bit PCM WAV.

    espeak-ng writes to a pipe, so its header cannot hold the real sizes: the data chunk is
    taken to run to the end of the bytes.
    """
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise ValueError("not a WAV file")
    offset, rate, channels = 12, 0, 0
    while offset + 8 <= len(data):
        chunk, size = (
            data[offset : offset + 4],
            struct.unpack("<I", data[offset + 4 : offset + 8])[0],
        )
        body = offset + 8
        if chunk == b"fmt ":
            audio_format, channels, rate = struct.unpack("<HHI", data[body : body + 8])
            bits = struct.unpack("<H", data[body + 14 : body + 16])[0]
            if audio_format != 1 or bits != 16:
                raise ValueError("only 16-bit PCM WAV is supported")
        elif chunk == b"data":
            if not rate or not channels:
                raise ValueError("WAV data before its format")
            payload = data[body:]
            payload = payload[: len(payload) - len(payload) % (2 * channels)]
            samples = np.frombuffer(payload, dtype="<i2").reshape(-1, channels)
            return rate, samples.mean(axis=1).astype(np.int16)
        offset = body + size + (size % 2)
    raise ValueError("WAV without a data chunk")


def resample(samples: np.ndarray, rate: int, target: int) -> np.ndarray:
    """Linear-interpolation resampling (plenty for synthetic speech)."""
    if rate == target or samples.size == 0:
        return samples.astype(np.int16)
    count = round(len(samples) * target / rate)
    positions = np.arange(count) * (rate / target)
    resampled = np.interp(positions, np.arange(len(samples)), samples.astype(np.float64))
    clipped: np.ndarray = np.clip(resampled, -32768, 32767).astype(np.int16)
    return clipped


def tones(text: str, *, amplitude: float = 0.25) -> np.ndarray:
    """A short beep per word (pitch varies with the word), with gaps: speech without a TTS."""
    words = text.split() or ["…"]
    beep, gap = int(0.16 * SAMPLE_RATE), int(0.06 * SAMPLE_RATE)
    ramp = int(0.005 * SAMPLE_RATE)
    envelope = np.ones(beep)
    envelope[:ramp] = np.linspace(0, 1, ramp)
    envelope[-ramp:] = np.linspace(1, 0, ramp)
    t = np.arange(beep) / SAMPLE_RATE
    parts = []
    for word in words:
        pitch = 220.0 + 40.0 * (sum(word.encode("utf-8")) % 6)
        wave = np.sin(2 * np.pi * pitch * t) * envelope * amplitude * 32767
        parts.extend([wave, np.zeros(gap)])
    return np.concatenate(parts).astype(np.int16)
