"""Transcription for `POST /v1/voice/transcribe`: the fake voice provider's speech detection,
and a fixed script of what the "user" said (no network, no model).

A recording in which speech is detected is heard as the next line of the script; silence is
heard as nothing.
"""

from __future__ import annotations

import threading

from talkie_tui.devserver.minara.errors import ApiError

SCRIPT = (
    "show me my portfolio",
    "swap 100 USDC to ETH",
    "plan my week",
    "which account",
)
FRAME_MS = 20.0
# The provider's default turn-detection threshold (0.5, about -40 dBFS).
THRESHOLD = 0.5


class Transcriber:
    """Hears WAV recordings; each one with speech takes the next line of the script."""

    def __init__(self, script: tuple[str, ...] = SCRIPT) -> None:
        self._script = script
        self._next = 0
        self._lock = threading.Lock()

    def transcribe(self, wav: bytes) -> str:
        """The transcript of a 16-bit PCM WAV: a script line, or "" for silence; 400 if not WAV."""
        if not self._has_speech(wav):
            return ""
        with self._lock:
            line = self._script[self._next % len(self._script)]
            self._next += 1
        return line

    @staticmethod
    def _has_speech(wav: bytes) -> bool:
        # Imported here: numpy (and the provider's audio module) only when a recording arrives.
        from talkie_tui.devserver.talkie.fake_voice.audio import (
            SpeechDetector,
            parse_wav,
            rms,
            rms_threshold,
        )

        try:
            rate, samples = parse_wav(wav)
        except (ValueError, IndexError) as exc:
            message = f"The recording is not a 16-bit PCM WAV: {exc}."
            raise ApiError(400, "invalid_audio", message) from exc
        if rate <= 0:
            raise ApiError(400, "invalid_audio", "The recording has no sample rate.")
        frame = max(1, int(rate * FRAME_MS / 1000))
        detector, level = SpeechDetector(), rms_threshold(THRESHOLD)
        for start in range(0, len(samples), frame):
            loud = rms(samples[start : start + frame]) >= level
            if detector.feed(loud, FRAME_MS) == "started":
                return True
        return False
