"""Sound in and out for voice calls: the microphone and the speaker behind one interface.

The WebRTC layer reads 20 ms microphone frames (48 kHz mono int16, 960 samples) with
`AudioSource.read_frame()` and hands the assistant's audio to `AudioSink.write()`. It does not
care where the sound comes from: `DeviceMicrophone`/`DeviceSpeaker` use PortAudio through
sounddevice, `ScriptedMicrophone`/`RecordingSpeaker` are the test doubles. Both kinds share the
queueing, muting, half-duplex, level and drain logic of `Microphone` and `Speaker`, and the doubles
run on their own 20 ms clock thread exactly like a sound card's callback thread, so tests of the
push-to-talk and consent machinery see the same timing as a real call.

Threads: PortAudio (or a double's clock) calls back on its own thread. The microphone copies
each block and posts it to the event loop with `call_soon_threadsafe` into a bounded queue that
drops the oldest frame, so a stalled loop cannot build up latency. The speaker's queue is shared
with the playing thread under a lock, and is bounded the same way. Nothing here blocks the loop:
opening and closing streams run in worker threads.

sounddevice is imported only when devices are opened or listed (DESIGN.md: heavy parts load on
use). Without libportaudio2 its import raises OSError; without a device a stream raises
PortAudioError. Both become `AudioUnavailable(reason)`, so voice is disabled with the reason and
chat goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import math
import threading
import time
import wave
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol, Self, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from talkie_tui.i18n import _

__all__ = [
    "FRAME_SAMPLES",
    "FRAME_SECONDS",
    "SAMPLE_RATE",
    "SILENCE_DBFS",
    "AudioDevice",
    "AudioError",
    "AudioLevel",
    "AudioPair",
    "AudioSink",
    "AudioSource",
    "AudioStopped",
    "AudioUnavailable",
    "DeviceMicrophone",
    "DeviceSpeaker",
    "Microphone",
    "RecordingSpeaker",
    "ScriptedMicrophone",
    "Speaker",
    "device_audio",
    "list_devices",
    "load_wav",
    "portaudio_version",
    "resample",
    "scripted_audio",
]

SAMPLE_RATE = 48_000
"""Opus runs at 48 kHz, so capturing at 48 kHz saves the encoder a resample."""
FRAME_SAMPLES = 960
"""One 20 ms frame: what aiortc's Opus encoder consumes per packet."""
FRAME_SECONDS = FRAME_SAMPLES / SAMPLE_RATE
SILENCE_DBFS = -100.0
"""The level reported for digital silence (log10 of zero has no value)."""

Samples = NDArray[np.int16]
DeviceSpec = int | str | None
"""A device by PortAudio index, by name (exact, or a unique part of it), or None: the default."""

# --- errors ------------------------------------------------------------------------------------


class AudioError(Exception):
    """Something went wrong with sound in or out."""


class AudioUnavailable(AudioError):
    """Sound cannot be used here; `reason` says why in words for the user (chat is unaffected)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class AudioStopped(AudioError):
    """The microphone was stopped while someone was reading from it."""


# --- levels ------------------------------------------------------------------------------------


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


class _LevelMeter:
    """RMS and peak over the last few blocks; fed by the audio thread, read by the UI."""

    def __init__(self, window_blocks: int = 5) -> None:
        self._lock = threading.Lock()
        # (sum of squares, sample count, peak) per block: a window of ~100 ms smooths the meter
        # without making it lag behind speech.
        self._blocks: deque[tuple[float, int, int]] = deque(maxlen=window_blocks)

    def add(self, samples: Samples) -> None:
        if len(samples) == 0:
            return
        wide = samples.astype(np.float32)
        peak = int(np.max(np.abs(samples.astype(np.int32))))
        with self._lock:
            self._blocks.append((float(np.dot(wide, wide)), len(samples), peak))

    def reset(self) -> None:
        with self._lock:
            self._blocks.clear()

    @property
    def level(self) -> AudioLevel:
        with self._lock:
            blocks = list(self._blocks)
        count = sum(n for _rms, n, _peak in blocks)
        if count == 0:
            return AudioLevel()
        rms = math.sqrt(sum(s for s, _count, _peak in blocks) / count)
        return AudioLevel(_dbfs(rms), _dbfs(max(p for _rms, _count, p in blocks)))


# --- the interface the WebRTC layer uses ---------------------------------------------------------


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


# --- the shared microphone logic ----------------------------------------------------------------


class _StartedAndStopped:
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


class Microphone(_StartedAndStopped, ABC):
    """Turns blocks from a capture thread into paced 20 ms frames for the event loop."""

    def __init__(self, *, half_duplex: Speaker | None = None, max_queue_frames: int = 10) -> None:
        self.muted = False
        self.half_duplex = half_duplex
        """When set, frames captured while this speaker plays are zeros (no echo to the model)."""
        self.dropped_frames = 0
        """Frames dropped because the reader fell more than `max_queue_frames` behind."""
        self.overflows = 0
        """Blocks the device reported as overflowed (audio lost before it reached us)."""
        self._max_queue_frames = max_queue_frames
        self._meter = _LevelMeter()
        self._frames: deque[Samples] = deque()  # event loop thread only
        self._remainder = np.zeros(0, np.int16)  # capture thread only
        self._loop: asyncio.AbstractEventLoop | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._running = False
        self._failure: AudioError | None = None

    @property
    def level(self) -> AudioLevel:
        """What the microphone hears now (even while muted, so the UI can show it works)."""
        return self._meter.level

    @property
    def gated(self) -> bool:
        """True while frames are zeroed: muted, or half-duplex and the speaker is playing."""
        return self.muted or (self.half_duplex is not None and self.half_duplex.playing)

    @property
    def running(self) -> bool:
        """True between `start()` and `stop()`."""
        return self._running

    @property
    def backlog(self) -> int:
        """Frames captured but not read yet (the reader is behind the sound card)."""
        return len(self._frames)

    async def start(self) -> None:
        """Open the device; frames start arriving. Raises `AudioUnavailable`."""
        if self._running:
            return
        self._loop = asyncio.get_running_loop()
        self._frames.clear()
        self._remainder = np.zeros(0, np.int16)
        self._failure = None
        self._meter.reset()
        # Running before the device opens: its first callback may come before _open returns.
        self._running = True
        try:
            await self._open()
        except BaseException:
            self._running = False
            raise

    async def stop(self) -> None:
        """Close the device; a pending `read_frame` raises `AudioStopped`."""
        if not self._running:
            return
        self._running = False
        try:
            await self._close()
        finally:
            self._frames.clear()
            self._meter.reset()
            self._wake()

    async def read_frame(self) -> Samples:
        """The next frame (960 samples), waiting for the capture clock; zeros while muted."""
        while not self._frames:
            if self._failure is not None:
                raise self._failure
            if not self._running:
                raise AudioStopped("the microphone is stopped")
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        frame = self._frames.popleft()
        # Muting also applies to frames captured just before it: the next frame read is silent.
        return np.zeros(FRAME_SAMPLES, np.int16) if self.muted else frame

    @abstractmethod
    async def _open(self) -> None:
        """Start capturing: call `_capture` from the capture thread with each block."""

    @abstractmethod
    async def _close(self) -> None:
        """Stop capturing; no `_capture` call may follow."""

    # Capture thread side -----------------------------------------------------------------------

    def _capture(self, samples: Samples) -> None:
        """Take one block of mono samples (any length) on the capture thread."""
        self._meter.add(samples)
        # Gate at capture time: audio heard while the speaker played (echo) or while muted is
        # never sent, however late the reader picks it up.
        if self.gated:
            samples = np.zeros(len(samples), np.int16)
        joined = np.concatenate((self._remainder, samples)) if len(self._remainder) else samples
        whole = len(joined) // FRAME_SAMPLES * FRAME_SAMPLES
        self._remainder = joined[whole:].copy()
        if whole:
            frames = [joined[i : i + FRAME_SAMPLES].copy() for i in range(0, whole, FRAME_SAMPLES)]
            self._post(self._accept, frames)

    def _fail_from_thread(self, error: AudioError) -> None:
        """The device stopped on its own (unplugged, server gone): readers get `error`."""
        self._post(self._set_failure, error)

    def _post(self, callback: Callable[..., None], *args: Any) -> None:
        loop = self._loop
        if loop is None:
            return
        # A late callback after the loop closed: nobody is listening any more.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(callback, *args)

    # Event loop side ---------------------------------------------------------------------------

    def _accept(self, frames: list[Samples]) -> None:
        if not self._running:
            return
        for frame in frames:
            if len(self._frames) >= self._max_queue_frames:
                # Drop the oldest: a reader that fell behind catches up instead of lagging.
                self._frames.popleft()
                self.dropped_frames += 1
            self._frames.append(frame)
        self._wake()

    def _set_failure(self, error: AudioError) -> None:
        if self._running:
            self._failure = error
            self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)


# --- the shared speaker logic -------------------------------------------------------------------


class Speaker(_StartedAndStopped, ABC):
    """A queue of audio to play, emptied by a playing thread; knows when playback has drained."""

    def __init__(self, *, max_queue_seconds: float = 2.0, prebuffer_seconds: float = 0.04) -> None:
        self.dropped_samples = 0
        """Samples dropped because more than `max_queue_seconds` was queued."""
        self.underruns = 0
        """Blocks the device reported as underflowed."""
        self._max_queued = int(max_queue_seconds * SAMPLE_RATE)
        self._prebuffer = int(prebuffer_seconds * SAMPLE_RATE)
        self._prebuffer_seconds = prebuffer_seconds
        self._lock = threading.Lock()  # guards the fields below, shared with the playing thread
        self._chunks: deque[Samples] = deque()
        self._offset = 0  # samples of _chunks[0] already played
        self._queued = 0
        self._hold_until: float | None = None
        self._tail_until = 0.0  # monotonic time the last played sample leaves the device
        self._latency = 0.0  # seconds from handing a block to the device to hearing it
        self._meter = _LevelMeter()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._emptied = asyncio.Event()
        self._running = False
        self.failure: AudioError | None = None
        """Set when the device stopped on its own; what was queued is dropped."""

    @property
    def level(self) -> AudioLevel:
        """How loud the audio playing now is."""
        return self._meter.level

    @property
    def playing(self) -> bool:
        """True while written audio is queued or still on its way out of the device."""
        # Plain reads of an int and a float: safe from any thread without the lock.
        return self._queued > 0 or time.monotonic() < self._tail_until

    @property
    def queued_seconds(self) -> float:
        """Audio written but not yet handed to the device."""
        return self._queued / SAMPLE_RATE

    @property
    def latency(self) -> float:
        """The device's output latency in seconds (0 for the test double unless set)."""
        return self._latency

    @property
    def running(self) -> bool:
        """True between `start()` and `stop()`."""
        return self._running

    async def start(self) -> None:
        """Open the device; it plays silence until audio is written. Raises `AudioUnavailable`."""
        if self._running:
            return
        self._loop = asyncio.get_running_loop()
        self._meter.reset()
        self.failure = None
        self._running = True
        try:
            await self._open()
        except BaseException:
            self._running = False
            raise

    async def stop(self) -> None:
        """Close the device, dropping what is queued; `drained()` waiters return."""
        if not self._running:
            return
        self._running = False
        try:
            await self._close()
        finally:
            with self._lock:
                self._chunks.clear()
                self._offset = self._queued = 0
                self._tail_until = 0.0
            self._meter.reset()
            self._emptied.set()

    def write(self, samples: NDArray[Any], channels: int = 1) -> None:
        """Queue 48 kHz int16 audio: mono, (n, channels), or interleaved/packed with `channels`.

        Call it from the event loop thread. aiortc's decoded frames are s16 stereo packed:
        `speaker.write(frame.to_ndarray(), channels=2)`.
        """
        mono = _as_mono(samples, channels)
        if len(mono) == 0:
            return
        now = time.monotonic()
        with self._lock:
            if self._queued == 0 and now >= self._tail_until:
                # Starting from silence: hold playback until a little is buffered, so network
                # jitter does not chop the first syllables.
                self._hold_until = now + self._prebuffer_seconds
            self._chunks.append(mono)
            self._queued += len(mono)
            excess = self._queued - self._max_queued
            if excess > 0:
                self._drop_oldest(excess)
        self._emptied.clear()

    def clear(self) -> None:
        """Drop everything queued (barge-in); what the device already has still plays out."""
        with self._lock:
            dropped = self._queued
            self._chunks.clear()
            self._offset = self._queued = 0
            self._hold_until = None
            if dropped:
                self._tail_until = max(self._tail_until, time.monotonic() + self._latency)
        self._emptied.set()

    async def drained(self) -> None:
        """Wait until everything written has been played, including the device's latency."""
        while self._running:
            if self._queued > 0:
                await self._emptied.wait()
                continue
            delay = self._tail_until - time.monotonic()
            if delay <= 0:
                return
            await asyncio.sleep(delay)  # then look again: more audio may have been written

    @abstractmethod
    async def _open(self) -> None:
        """Start playing: the playing thread calls `_render` for every block."""

    @abstractmethod
    async def _close(self) -> None:
        """Stop playing; no `_render` call may follow."""

    def _drop_oldest(self, count: int) -> None:
        # Under the lock. A queue that keeps growing means the device is slower than the sender;
        # dropping the oldest audio keeps the delay bounded instead of growing forever.
        self.dropped_samples += count
        self._queued -= count
        while count > 0:
            head = self._chunks[0]
            left = len(head) - self._offset
            if left > count:
                self._offset += count
                return
            count -= left
            self._chunks.popleft()
            self._offset = 0

    # Playing thread side -----------------------------------------------------------------------

    def _render(self, frames: int) -> tuple[Samples, int]:
        """The next `frames` samples to play, zero-filled; and how many of them are real audio."""
        out = np.zeros(frames, np.int16)
        filled = 0
        emptied = False
        now = time.monotonic()
        with self._lock:
            holding = (
                self._hold_until is not None
                and now < self._hold_until
                and self._queued < self._prebuffer
            )
            if self._queued and not holding:
                self._hold_until = None
                while filled < frames and self._chunks:
                    head = self._chunks[0]
                    take = min(frames - filled, len(head) - self._offset)
                    out[filled : filled + take] = head[self._offset : self._offset + take]
                    filled += take
                    self._offset += take
                    if self._offset == len(head):
                        self._chunks.popleft()
                        self._offset = 0
                self._queued -= filled
                if self._queued == 0:
                    emptied = True
                    # The last real sample sits `filled` samples into this block, and the block
                    # is heard `latency` seconds after we hand it over.
                    self._tail_until = now + filled / SAMPLE_RATE + self._latency
        self._meter.add(out)
        if emptied:
            self._post(self._on_emptied)
        return out, filled

    def _post(self, callback: Callable[[], None]) -> None:
        loop = self._loop
        if loop is None:
            return
        with contextlib.suppress(RuntimeError):  # a late callback after the loop closed
            loop.call_soon_threadsafe(callback)

    def _on_emptied(self) -> None:
        # A write may have slipped in between the thread emptying the queue and this call.
        if self._queued == 0:
            self._emptied.set()

    def _fail_from_thread(self, error: AudioError) -> None:
        """The device stopped on its own: drop the queue so `drained()` does not wait forever."""
        loop = self._loop
        if loop is None:
            return
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(self._set_failure, error)

    def _set_failure(self, error: AudioError) -> None:
        if not self._running:
            return
        self.failure = error
        self.clear()
        self._tail_until = 0.0


def _as_mono(samples: NDArray[Any], channels: int) -> Samples:
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


# --- real devices (PortAudio through sounddevice) ------------------------------------------------


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


class DeviceMicrophone(Microphone):
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
        self.device = device
        self.device_name: str | None = None
        """The PortAudio name of the opened device (for the UI)."""
        self.input_latency = 0.0
        self._latency_request = latency
        self._stream: Any = None

    async def _open(self) -> None:
        self._stream, self.device_name = await asyncio.to_thread(
            _open_stream, "input", self.device, self._make_stream
        )
        self.input_latency = float(self._stream.latency)

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

    async def _close(self) -> None:
        stream, self._stream = self._stream, None
        if stream is not None:
            await asyncio.to_thread(_close_stream, stream)

    def _callback(self, indata: Any, frames: int, time_info: Any, status: Any) -> None:
        # PortAudio's thread: copy (the buffer is reused) and hand over; never raise here.
        if status.input_overflow:
            self.overflows += 1
        self._capture(np.array(indata[:, 0], dtype=np.int16))

    def _finished(self) -> None:
        if self._running:
            self._fail_from_thread(AudioUnavailable(_("the audio input device stopped")))


class DeviceSpeaker(Speaker):
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
        self.device = device
        self.device_name: str | None = None
        """The PortAudio name of the opened device (for the UI)."""
        self._latency_request = latency
        self._stream: Any = None

    async def _open(self) -> None:
        self._stream, self.device_name = await asyncio.to_thread(
            _open_stream, "output", self.device, self._make_stream
        )
        self._latency = float(self._stream.latency)

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

    async def _close(self) -> None:
        stream, self._stream = self._stream, None
        if stream is not None:
            await asyncio.to_thread(_close_stream, stream)

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


# --- test doubles that keep real time -------------------------------------------------------------


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
    mono = _as_mono(data.astype(np.int16), channels)
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
            else resample(_as_mono(audio, 1), sample_rate)
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


# --- a microphone and a speaker together -------------------------------------------------------


@dataclass(slots=True)
class AudioPair(_StartedAndStopped):
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


def scripted_audio(*, half_duplex: bool = False, speaker_latency: float = 0.0) -> AudioPair:
    """A `ScriptedMicrophone` and a `RecordingSpeaker`: a call's audio with no sound card."""
    speaker = RecordingSpeaker(latency=speaker_latency)
    microphone = ScriptedMicrophone(half_duplex=speaker if half_duplex else None)
    return AudioPair(microphone, speaker)
