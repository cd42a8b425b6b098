"""Sound in and out for voice calls: the microphone and the speaker behind one interface.

The WebRTC layer reads 20 ms microphone frames (48 kHz mono int16, 960 samples) with
`AudioSource.read_frame()` and hands the assistant's audio to `AudioSink.write()`. It does not
care where the sound comes from: the sound card (`sound_card.py`, PortAudio through
sounddevice) or memory (`memory_audio.py`). Both kinds share the queueing, muting, half-duplex,
level and drain logic of `Microphone` (`microphone.py`) and `Speaker` (`speaker.py`); frames,
levels and errors are in `sound.py`. Nothing blocks the event loop: PortAudio (or a double's
clock) calls back on its own thread, and streams open and close in worker threads.

This module holds the interface, the pair of devices a call uses and `device_audio`; it also
names what `talkie devices` and `talkie doctor` ask of the sound card.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from numpy.typing import NDArray

from talkie_tui.voice.microphone import Microphone
from talkie_tui.voice.sound import AudioLevel, AudioUnavailable, Samples, StartedAndStopped
from talkie_tui.voice.sound_card import (
    AudioDevice,
    DeviceMicrophone,
    DeviceSpeaker,
    DeviceSpec,
    list_devices,
    portaudio_version,
)
from talkie_tui.voice.speaker import Speaker

# Besides its own names, what `talkie devices` and `talkie doctor` use of the sound card.
__all__ = [
    "AudioDevice",
    "AudioPair",
    "AudioSink",
    "AudioSource",
    "AudioUnavailable",
    "device_audio",
    "list_devices",
    "portaudio_version",
]


@runtime_checkable
class AudioSource(Protocol):
    """The microphone as the WebRTC layer sees it: 20 ms frames of 48 kHz mono int16."""

    muted: bool
    """While True, frames are zeros at the same pace (push-to-talk idle; aiortc cannot pause)."""

    @property
    def level(self) -> AudioLevel:
        """What the microphone hears now (even while muted, so the UI can show it works)."""
        ...

    @property
    def gated(self) -> bool:
        """True while frames are zeroed: muted, or half-duplex and the speaker is playing."""
        ...

    async def start(self) -> None:
        """Open the device; frames start arriving."""
        ...

    async def read_frame(self) -> Samples:
        """The next frame (960 samples), waiting for the sound card's clock."""
        ...

    @property
    def backlog(self) -> int:
        """Frames captured but not read yet (the reader is behind the sound card)."""
        ...

    async def stop(self) -> None:
        """Close the device; a pending `read_frame` raises `AudioStopped`."""
        ...


@runtime_checkable
class AudioSink(Protocol):
    """The speaker as the WebRTC layer sees it: it plays what it is given, continuously."""

    @property
    def level(self) -> AudioLevel:
        """How loud the audio playing now is."""
        ...

    @property
    def playing(self) -> bool:
        """True while written audio is queued or still on its way out of the device."""
        ...

    async def start(self) -> None:
        """Open the device; it plays silence until audio is written."""
        ...

    def write(self, samples: NDArray[Any], channels: int = 1) -> None:
        """Queue 48 kHz int16 audio: mono, (n, channels), or interleaved/packed with `channels`."""
        ...

    def clear(self) -> None:
        """Drop everything queued (barge-in); what the device already has still plays out."""
        ...

    async def drained(self) -> None:
        """Wait until everything written has been played (the consent window's condition)."""
        ...

    async def stop(self) -> None:
        """Close the device, dropping what is queued."""
        ...


@dataclass(slots=True)
class AudioPair(StartedAndStopped):
    """The microphone and speaker of one call, started and stopped together."""

    microphone: Microphone
    speaker: Speaker

    async def start(self) -> None:
        """Open the speaker, then the microphone; on failure neither stays open."""
        await self.speaker.start()
        try:
            await self.microphone.start()
        except BaseException:
            await self.speaker.stop()
            raise

    async def stop(self) -> None:
        """Close both, the microphone first (nothing more is sent), even if one fails."""
        try:
            await self.microphone.stop()
        finally:
            await self.speaker.stop()


def device_audio(
    input_device: DeviceSpec = None,
    output_device: DeviceSpec = None,
    *,
    half_duplex: bool = False,
) -> AudioPair:
    """The sound card's microphone and speaker (not yet started); devices as in settings."""
    speaker = DeviceSpeaker(output_device)
    microphone = DeviceMicrophone(input_device, half_duplex=speaker if half_duplex else None)
    return AudioPair(microphone, speaker)
