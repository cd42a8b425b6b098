"""Test doubles of voice: a call's audio with no sound card."""

from __future__ import annotations

from talkie_tui.voice.audio import AudioPair
from talkie_tui.voice.memory_audio import RecordingSpeaker, ScriptedMicrophone

__all__ = ["scripted_audio"]


def scripted_audio(*, half_duplex: bool = False, speaker_latency: float = 0.0) -> AudioPair:
    """A `ScriptedMicrophone` and a `RecordingSpeaker`: a call's audio with no sound card."""
    speaker = RecordingSpeaker(latency=speaker_latency)
    microphone = ScriptedMicrophone(half_duplex=speaker if half_duplex else None)
    return AudioPair(microphone, speaker)
