"""The sound card through PortAudio (sounddevice): its microphone, its speaker, its devices.

sounddevice is imported only when devices are opened or listed (docs/ARCHITECTURE.md: heavy
parts load on use). Without libportaudio2 its import raises OSError; without a device a stream
raises PortAudioError. Both become `AudioUnavailable(reason)`, so voice is disabled with the
reason and chat goes on. Streams are opened and closed in worker threads, never on the event loop.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from talkie_tui.i18n import _
from talkie_tui.voice.microphone import Microphone
from talkie_tui.voice.sound import FRAME_SAMPLES, SAMPLE_RATE, AudioUnavailable
from talkie_tui.voice.speaker import Speaker

__all__ = [
    "AudioDevice",
    "DeviceMicrophone",
    "DeviceSpeaker",
    "DeviceSpec",
    "list_devices",
    "portaudio_version",
]

DeviceSpec = int | str | None
"""A device by PortAudio index, by name (exact, or a unique part of it), or None: the default."""


def _sounddevice() -> Any:
    """sounddevice, imported on first use; `AudioUnavailable` when PortAudio is missing."""
    try:
        # importlib keeps mypy from looking for stubs sounddevice does not ship; its API is Any.
        return importlib.import_module("sounddevice")
    except OSError as error:  # sounddevice raises this at import when libportaudio2 is missing
        text = _(
            "PortAudio library not found ({error}): install the PortAudio library "
            "(Debian/Ubuntu: apt install libportaudio2; Fedora: dnf install portaudio; "
            "macOS: brew install portaudio)"
        )
        raise AudioUnavailable(text.format(error=error)) from error
    except ImportError as error:
        text = _("the sounddevice package cannot be imported ({error})")
        raise AudioUnavailable(text.format(error=error)) from error


def _device_argument(device: DeviceSpec) -> DeviceSpec:
    # Settings files hold strings: "3" means the device numbered 3 in `talkie devices`.
    if isinstance(device, str):
        device = device.strip()
        if device.isdigit():
            return int(device)
        return device or None
    return device


def _unavailable(sd: Any, kind: str, device: DeviceSpec, error: Exception) -> AudioUnavailable:
    """Words for the user about a device that cannot be opened."""
    is_input = kind == "input"
    try:
        names = [d.name for d in _devices(sd) if (d.is_input if is_input else d.is_output)]
    except Exception:  # the explanation must not fail while explaining
        names = []
    if not names:
        text = (
            _(
                "no audio input device found ({error}); connect one, or start the sound server "
                "(PulseAudio or PipeWire), then run `talkie devices`"
            )
            if is_input
            else _(
                "no audio output device found ({error}); connect one, or start the sound server "
                "(PulseAudio or PipeWire), then run `talkie devices`"
            )
        )
        return AudioUnavailable(text.format(error=error))
    if device is None:
        text = (
            _(
                "cannot use default audio input: {error}; "
                "the input devices are: {names} (see `talkie devices`)"
            )
            if is_input
            else _(
                "cannot use default audio output: {error}; "
                "the output devices are: {names} (see `talkie devices`)"
            )
        )
    else:
        text = (
            _(
                "cannot use audio input device {device}: {error}; "
                "the input devices are: {names} (see `talkie devices`)"
            )
            if is_input
            else _(
                "cannot use audio output device {device}: {error}; "
                "the output devices are: {names} (see `talkie devices`)"
            )
        )
    return AudioUnavailable(text.format(device=repr(device), error=error, names=", ".join(names)))


def _open_stream(
    kind: str, device: DeviceSpec, factory: Callable[[Any, Any], Any]
) -> tuple[Any, str]:
    """Open and start a stream in a worker thread; the stream and its device's name."""
    sd = _sounddevice()
    chosen = _device_argument(device)
    try:
        info = sd.query_devices(chosen, kind)
        stream = factory(sd, info)
    except (sd.PortAudioError, ValueError) as error:
        raise _unavailable(sd, kind, chosen, error) from error
    try:
        stream.start()
    except sd.PortAudioError as error:
        stream.close(ignore_errors=True)
        raise _unavailable(sd, kind, chosen, error) from error
    return stream, str(info["name"])


def _close_stream(stream: Any) -> None:
    try:
        stream.stop(ignore_errors=True)
    finally:
        stream.close(ignore_errors=True)


class _PortAudioStream:
    """A device's PortAudio stream, opened and closed in worker threads."""

    device: DeviceSpec
    device_name: str | None
    _stream: Any

    def _keep_device(self, device: DeviceSpec, latency: float | str) -> None:
        self.device = device
        self.device_name = None
        """The PortAudio name of the opened device (for the UI)."""
        self._latency_request = latency
        self._stream = None

    def _make_stream(self, sd: Any, info: Any) -> Any:
        """The stream for the device `info` describes (a subclass says which)."""
        raise NotImplementedError

    async def _open_stream(self, kind: str) -> float:
        """Open the stream, keeping the device's name; its latency in seconds."""
        self._stream, self.device_name = await asyncio.to_thread(
            _open_stream, kind, self.device, self._make_stream
        )
        return float(self._stream.latency)

    async def _close(self) -> None:
        stream, self._stream = self._stream, None
        if stream is not None:
            await asyncio.to_thread(_close_stream, stream)


class DeviceMicrophone(_PortAudioStream, Microphone):
    """The sound card's microphone through PortAudio, at 48 kHz in 20 ms blocks."""

    def __init__(
        self,
        device: DeviceSpec = None,
        *,
        half_duplex: Speaker | None = None,
        latency: float | str = "low",
        max_queue_frames: int = 10,
    ) -> None:
        super().__init__(half_duplex=half_duplex, max_queue_frames=max_queue_frames)
        self._keep_device(device, latency)
        self.input_latency = 0.0

    async def _open(self) -> None:
        self.input_latency = await self._open_stream("input")

    def _make_stream(self, sd: Any, info: Any) -> Any:
        return sd.InputStream(
            device=info["index"],
            samplerate=SAMPLE_RATE,
            channels=1,
            dtype="int16",
            blocksize=FRAME_SAMPLES,
            latency=self._latency_request,
            callback=self._callback,
            finished_callback=self._finished,
        )

    def _callback(self, indata: Any, frames: int, time_info: Any, status: Any) -> None:
        # PortAudio's thread: copy (the buffer is reused) and hand over; never raise here.
        if status.input_overflow:
            self.overflows += 1
        self._capture(np.array(indata[:, 0], dtype=np.int16))

    def _finished(self) -> None:
        if self._running:
            self._fail_from_thread(AudioUnavailable(_("the audio input device stopped")))


class DeviceSpeaker(_PortAudioStream, Speaker):
    """The sound card's speaker through PortAudio, at 48 kHz in 20 ms blocks."""

    def __init__(
        self,
        device: DeviceSpec = None,
        *,
        latency: float | str = "low",
        max_queue_seconds: float = 2.0,
        prebuffer_seconds: float = 0.04,
    ) -> None:
        super().__init__(max_queue_seconds=max_queue_seconds, prebuffer_seconds=prebuffer_seconds)
        self._keep_device(device, latency)

    async def _open(self) -> None:
        self._latency = await self._open_stream("output")

    def _make_stream(self, sd: Any, info: Any) -> Any:
        # Stereo where the device has it: some hardware refuses mono; mono is copied to both.
        channels = 2 if int(info["max_output_channels"]) >= 2 else 1
        return sd.OutputStream(
            device=info["index"],
            samplerate=SAMPLE_RATE,
            channels=channels,
            dtype="int16",
            blocksize=FRAME_SAMPLES,
            latency=self._latency_request,
            callback=self._callback,
            finished_callback=self._finished,
        )

    def _callback(self, outdata: Any, frames: int, time_info: Any, status: Any) -> None:
        if status.output_underflow:
            self.underruns += 1
        block, _real = self._render(frames)
        outdata[:] = block[:, np.newaxis]

    def _finished(self) -> None:
        if self._running:
            self._fail_from_thread(AudioUnavailable(_("the audio output device stopped")))


@dataclass(frozen=True, slots=True)
class AudioDevice:
    """One PortAudio device, as `talkie devices` lists it."""

    index: int
    name: str
    host_api: str
    input_channels: int
    output_channels: int
    default_input: bool
    default_output: bool
    default_sample_rate: float

    @property
    def is_input(self) -> bool:
        """True when the device can record."""
        return self.input_channels > 0

    @property
    def is_output(self) -> bool:
        """True when the device can play."""
        return self.output_channels > 0


def _devices(sd: Any) -> list[AudioDevice]:
    default_input, default_output = (int(i) for i in sd.default.device)
    host_apis = [str(api["name"]) for api in sd.query_hostapis()]
    return [
        AudioDevice(
            index=int(info["index"]),
            name=str(info["name"]),
            host_api=host_apis[int(info["hostapi"])],
            input_channels=int(info["max_input_channels"]),
            output_channels=int(info["max_output_channels"]),
            default_input=int(info["index"]) == default_input,
            default_output=int(info["index"]) == default_output,
            default_sample_rate=float(info["default_samplerate"]),
        )
        for info in sd.query_devices()
    ]


def list_devices() -> list[AudioDevice]:
    """The devices PortAudio sees (maybe none); `AudioUnavailable` when PortAudio is missing."""
    sd = _sounddevice()
    try:
        return _devices(sd)
    except sd.PortAudioError as error:
        text = _("PortAudio cannot list the audio devices: {error}")
        raise AudioUnavailable(text.format(error=error)) from error


def portaudio_version() -> str:
    """PortAudio's own version text, e.g. "PortAudio V19.6.0-devel, revision …"."""
    return str(_sounddevice().get_portaudio_version()[1])
