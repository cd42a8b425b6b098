"""The audio backend: real PortAudio devices through PulseAudio, and the test doubles, alike.

Tests that take a `rig` run twice: on the real devices (PortAudio -> ALSA pulse plugin ->
private PulseAudio daemon, speech fed into the mic sink with paplay) and on the doubles
(ScriptedMicrophone, RecordingSpeaker). Pacing is checked by counts and order (reads that had
to wait for the card, samples played before `drained`), never by wall time: the suite runs on
loaded 2-core machines. Latencies are figures of benchmarks/voice_call.py.
"""

from __future__ import annotations

import asyncio
import importlib.abc
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from talkie_tui.cli import main
from talkie_tui.voice import audio
from talkie_tui.voice.audio import (
    AudioPair,
    AudioSink,
    AudioSource,
    AudioUnavailable,
    device_audio,
    list_devices,
)
from talkie_tui.voice.memory_audio import RecordingSpeaker, ScriptedMicrophone, load_wav
from talkie_tui.voice.sound import FRAME_SAMPLES, SAMPLE_RATE, AudioLevel, AudioStopped
from talkie_tui.voice.sound_card import DeviceMicrophone, DeviceSpeaker
from tests.voice.fakes import scripted_audio
from tests.voice.pulse import MIC_DEVICE, SPEAKER_DEVICE, PulseAudio, active_seconds, tone

SENTENCE = "one, two, three, four, five, six, seven, eight"


class Rig:
    """An audio pair plus a way to speak into its microphone, on real devices or doubles."""

    def __init__(self, kind: str, pair: AudioPair, pulse: PulseAudio | None) -> None:
        self.kind = kind
        self.pair = pair
        self.pulse = pulse
        self._player: subprocess.Popen[bytes] | None = None

    @property
    def mic(self) -> Any:
        return self.pair.microphone

    @property
    def speaker(self) -> Any:
        return self.pair.speaker

    def speak(self, wav: Path) -> None:
        """Start "saying" the WAV into the microphone; returns at once."""
        if self.pulse is not None:
            self._player = self.pulse.play_wav_into_mic(wav, wait=False)
        else:
            assert isinstance(self.mic, ScriptedMicrophone)
            self.mic.say(wav)

    @property
    def speaking(self) -> bool:
        if self._player is not None:
            return self._player.poll() is None
        return bool(self.mic.speaking) if isinstance(self.mic, ScriptedMicrophone) else False

    def stop_speaking(self) -> None:
        if self._player is not None and self._player.poll() is None:
            self._player.terminate()
            self._player.wait(timeout=5)


@pytest.fixture(params=[pytest.param("devices", marks=pytest.mark.voice), "doubles"])
async def rig(
    request: pytest.FixtureRequest,
) -> AsyncIterator[Callable[..., Any]]:
    """`await rig(half_duplex=False)`: a started Rig; stopped after the test."""
    made: list[Rig] = []
    pulse: PulseAudio | None = None
    if request.param == "devices":
        pulse = request.getfixturevalue("pulse")

    async def make(*, half_duplex: bool = False) -> Rig:
        if pulse is not None:
            pair = device_audio(MIC_DEVICE, SPEAKER_DEVICE, half_duplex=half_duplex)
        else:
            pair = scripted_audio(half_duplex=half_duplex)
        made.append(Rig(request.param, pair, pulse))
        await pair.start()
        return made[-1]

    yield make
    for one in made:
        one.stop_speaking()
        await one.pair.stop()


async def read_for(mic: AudioSource, seconds: float) -> list[np.ndarray]:
    """Every frame the microphone delivers during `seconds` of its own clock."""
    return [await mic.read_frame() for _ in range(round(seconds / 0.02))]


async def read_paced(mic: Any, count: int) -> tuple[list[np.ndarray], int]:
    """`count` frames, and how many of the reads found none waiting (the reader, faster than
    the card, waited for its clock): paced frames make most reads wait, frames delivered
    faster than real time make none wait. A busy machine puts the reader behind for a while
    (fewer waits), then it catches up."""
    frames, waited = [], 0
    for _ in range(count):
        waited += mic.backlog == 0
        frames.append(await mic.read_frame())
    return frames, waited


# --- both backends ---------------------------------------------------------------------------


async def test_both_sides_implement_the_interface(rig: Callable[..., Any]) -> None:
    one = await rig()
    assert isinstance(one.mic, AudioSource)
    assert isinstance(one.speaker, AudioSink)


async def test_frames_are_20_ms_of_48_khz_mono_paced_by_the_clock(rig: Callable[..., Any]) -> None:
    one = await rig()
    await read_for(one.mic, 0.1)  # whatever queued while starting
    frames, waited = await read_paced(one.mic, 50)
    assert all(f.shape == (FRAME_SAMPLES,) and f.dtype == np.int16 for f in frames)
    assert waited >= 10, f"only {waited} of 50 reads waited for the clock"
    assert one.mic.dropped_frames == 0


async def test_the_level_rises_with_speech_and_is_silent_otherwise(
    rig: Callable[..., Any], speech: Callable[..., Path]
) -> None:
    one = await rig()
    quiet = await read_for(one.mic, 0.3)
    assert not np.any(quiet)
    assert one.mic.level.silent and one.mic.level.fraction == 0.0

    one.speak(speech("hello, this is the microphone"))
    levels, frames = [], []
    while one.speaking or len(frames) < 10:
        frames.append(await one.mic.read_frame())
        levels.append(one.mic.level)
    frames += await read_for(one.mic, 0.3)

    loudest = max(levels, key=lambda level: level.rms_dbfs)
    assert loudest.rms_dbfs > -35 and loudest.peak_dbfs > -20 and loudest.fraction > 0.4
    assert active_seconds(np.concatenate(frames)) > 0.5
    assert one.mic.level.silent  # quiet again after the speech


async def test_mute_sends_zero_frames_at_the_same_pace(
    rig: Callable[..., Any], speech: Callable[..., Path]
) -> None:
    one = await rig()
    one.mic.muted = True
    assert one.mic.gated
    one.speak(speech(SENTENCE))
    frames, loudest, waited = [], AudioLevel(), 0
    for _ in range(50):
        waited += one.mic.backlog == 0
        frames.append(await one.mic.read_frame())
        loudest = max(loudest, one.mic.level, key=lambda level: level.rms_dbfs)
    assert not np.any(np.concatenate(frames))
    assert waited >= 10  # zeros, but still paced by the card: one frame per 20 ms
    assert not loudest.silent  # the meter still shows that the microphone hears

    one.mic.muted = False
    frames = await read_for(one.mic, 0.4)
    assert np.any(np.concatenate(frames))


async def test_half_duplex_mutes_the_mic_while_the_speaker_plays(
    rig: Callable[..., Any], speech: Callable[..., Path]
) -> None:
    one = await rig(half_duplex=True)
    one.speak(speech(SENTENCE))
    deadline = time.monotonic() + 10  # a wait for the speech (paplay starts), not a measure
    while not (await one.mic.read_frame()).any():  # wait until the speech comes through
        assert time.monotonic() < deadline, "no speech reached the microphone"

    one.speaker.write(tone(0.6))
    assert one.speaker.playing and one.mic.gated
    await read_for(one.mic, 0.06)  # frames captured before the write
    during = []
    while True:
        frame = await one.mic.read_frame()
        if not one.speaker.playing:
            break  # this one may have been captured after playback ended
        during.append(frame)  # captured before now, so while the speaker played
    assert len(during) >= 20
    assert not np.any(np.concatenate(during)), "the mic sent audio while the speaker played"

    after = await read_for(one.mic, 0.6)
    assert not one.mic.gated
    assert np.any(np.concatenate(after)), "the mic stayed muted after the speaker drained"


async def test_the_speaker_drains_only_after_its_audio_has_played(
    rig: Callable[..., Any],
) -> None:
    one = await rig()
    recording = one.pulse.start_speaker_recording() if one.pulse else None
    await asyncio.sleep(0.1)
    assert not one.speaker.playing
    played = tone(1.0)
    one.speaker.write(played)
    assert one.speaker.playing
    await asyncio.sleep(0.5)
    assert one.speaker.playing and one.speaker.level.rms_dbfs > -25  # the meter shows the tone
    await one.speaker.drained()
    assert not one.speaker.playing and one.speaker.queued_seconds == 0
    if recording is None:
        # Never before the audio played: all of it was played by the time `drained` returned
        # (the order, not a time).
        assert len(one.speaker.recording()) == len(played)
    if recording is not None:
        await asyncio.sleep(0.2)
        heard = recording.stop()
        assert 0.9 <= active_seconds(heard) <= 1.1
    else:
        assert np.array_equal(one.speaker.recording(), played)


async def test_clear_drops_what_is_queued(rig: Callable[..., Any]) -> None:
    one = await rig()
    recording = one.pulse.start_speaker_recording() if one.pulse else None
    await asyncio.sleep(0.1)
    played = tone(3.0)
    one.speaker.write(played)
    await asyncio.sleep(0.3)
    one.speaker.clear()
    assert one.speaker.queued_seconds == 0  # dropped at once, not played out
    await one.speaker.drained()
    assert not one.speaker.playing
    # What was heard is the start of the tone, not the 3 s of it (counted in samples).
    if recording is not None:
        await asyncio.sleep(0.2)
        assert active_seconds(recording.stop()) < 2.0
    else:
        assert len(one.speaker.recording()) < len(played) * 2 // 3


async def test_stop_wakes_a_waiting_reader(rig: Callable[..., Any]) -> None:
    one = await rig()
    await read_for(one.mic, 0.1)
    reader = asyncio.ensure_future(read_for(one.mic, 5.0))
    await asyncio.sleep(0.1)
    await one.pair.stop()
    with pytest.raises(AudioStopped):
        await asyncio.wait_for(reader, 10)  # woken: a wait for it, 5 s of frames untaken
    await one.speaker.drained()  # a stopped speaker has nothing left to play


# --- real devices ----------------------------------------------------------------------------


@pytest.mark.voice
async def test_stop_releases_the_devices(pulse: PulseAudio) -> None:
    def ours(kind: str) -> list[dict[str, Any]]:
        return [
            stream
            for stream in pulse.streams(kind)
            if stream["properties"].get("application.process.id") == str(os.getpid())
        ]

    for _ in range(2):  # and they can be opened again
        pair = device_audio(MIC_DEVICE, SPEAKER_DEVICE)
        await pair.start()
        assert len(ours("source-outputs")) == 1 and len(ours("sink-inputs")) == 1
        await pair.microphone.read_frame()
        await pair.stop()
        assert ours("source-outputs") == [] and ours("sink-inputs") == []


@pytest.mark.voice
async def test_the_default_devices_are_the_pulse_defaults(pulse: PulseAudio) -> None:
    async with device_audio() as pair:
        assert isinstance(pair.microphone, DeviceMicrophone)
        assert pair.microphone.device_name == "default"
        pulse.speak_into_mic("hello", wait=False)
        frames = await read_for(pair.microphone, 1.5)
    assert np.any(np.concatenate(frames)), "the default input is not talkie_mic.monitor"


@pytest.mark.voice
def test_list_devices_shows_the_pulse_devices(pulse: PulseAudio) -> None:
    devices = {device.name: device for device in list_devices()}
    mic, speaker = devices[MIC_DEVICE], devices[SPEAKER_DEVICE]
    assert mic.is_input and not mic.is_output
    assert speaker.is_output and not speaker.is_input
    assert mic.host_api == "ALSA"
    assert devices["default"].default_input and devices["default"].default_output


@pytest.mark.voice
@pytest.mark.parametrize("kind", ["input", "output"])
async def test_an_unknown_device_name_is_unavailable(pulse: PulseAudio, kind: str) -> None:
    name = "no-such-device"
    side = DeviceMicrophone(name) if kind == "input" else DeviceSpeaker(name)
    with pytest.raises(AudioUnavailable) as raised:
        await side.start()
    reason = raised.value.reason
    assert name in reason
    assert (MIC_DEVICE if kind == "input" else SPEAKER_DEVICE) in reason  # what there is instead
    assert not side.running


@pytest.mark.voice
async def test_a_wrong_direction_is_unavailable(pulse: PulseAudio) -> None:
    with pytest.raises(AudioUnavailable, match="talkie_speaker"):
        await DeviceMicrophone(SPEAKER_DEVICE).start()  # an output-only device


@pytest.mark.voice
async def test_no_default_device_is_unavailable(
    pulse: PulseAudio, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What PortAudio does on a machine without a sound card: default device -1."""
    import sounddevice as sd

    previous = tuple(sd.default.device)
    sd.default.device = (-1, -1)
    try:
        pair = device_audio()
        with pytest.raises(AudioUnavailable, match="device -1"):
            await pair.start()
        assert not pair.speaker.running and not pair.microphone.running
    finally:
        sd.default.device = previous


@pytest.mark.voice
def test_talkie_devices_lists_the_pulse_devices(
    pulse: PulseAudio, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["devices"]) == 0
    out = capsys.readouterr().out
    inputs, outputs = out.split("Outputs (speakers):")
    assert MIC_DEVICE in inputs and SPEAKER_DEVICE not in inputs
    assert SPEAKER_DEVICE in outputs and MIC_DEVICE not in outputs
    assert any(line.lstrip().startswith("*") and "default" in line for line in inputs.splitlines())
    assert "PortAudio V19" in out


@pytest.mark.voice
def test_talkie_devices_in_a_fresh_process(pulse: PulseAudio) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "talkie_tui.cli", "devices"],
        env=pulse.client_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert MIC_DEVICE in done.stdout and SPEAKER_DEVICE in done.stdout


# --- without PortAudio -------------------------------------------------------------------------


class _NoPortAudio(importlib.abc.MetaPathFinder):
    """Imports of sounddevice fail the way they do without libportaudio2."""

    def find_spec(self, name: str, path: Sequence[str] | None, target: Any = None) -> None:
        if name == "sounddevice":
            raise OSError("PortAudio library not found")
        return None


@pytest.fixture
def no_portaudio(monkeypatch: pytest.MonkeyPatch) -> None:
    """sounddevice cannot be imported: its import raises OSError as without libportaudio2."""
    # monkeypatch puts an already imported sounddevice back afterwards, untouched.
    monkeypatch.delitem(sys.modules, "sounddevice", raising=False)
    monkeypatch.setattr(sys, "meta_path", [_NoPortAudio(), *sys.meta_path])


async def test_missing_portaudio_makes_audio_unavailable(no_portaudio: None) -> None:
    with pytest.raises(AudioUnavailable, match="libportaudio2") as raised:
        list_devices()
    assert "PortAudio library not found" in raised.value.reason
    pair = device_audio()
    with pytest.raises(AudioUnavailable, match="libportaudio2"):
        await pair.start()
    assert not pair.speaker.running


def test_talkie_devices_without_portaudio(
    no_portaudio: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["devices"]) == 1
    err = capsys.readouterr().err
    assert "audio unavailable" in err and "libportaudio2" in err


def test_an_unimportable_sounddevice_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sounddevice", None)  # import raises ImportError
    with pytest.raises(AudioUnavailable, match="sounddevice"):
        list_devices()


def test_talkie_devices_with_no_devices(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(audio, "list_devices", list)
    monkeypatch.setattr(audio, "portaudio_version", lambda: "PortAudio V19")
    assert main(["devices"]) == 1
    captured = capsys.readouterr()
    assert "no audio devices found" in captured.err and captured.out == ""


# --- the pieces the doubles are made of --------------------------------------------------------


def test_load_wav_makes_48_khz_mono(speech: Callable[..., Path]) -> None:
    import wave

    wav = speech("ano, potvrzuji", "cs")
    with wave.open(str(wav)) as file:
        seconds = file.getnframes() / file.getframerate()
        assert file.getframerate() == 22050
    samples = load_wav(wav)
    assert samples.dtype == np.int16 and samples.ndim == 1
    assert abs(len(samples) / SAMPLE_RATE - seconds) < 0.001
    assert active_seconds(samples) > 0.5


async def test_the_speaker_takes_aiortc_s16_stereo_packed_frames() -> None:
    mono = tone(0.2)
    packed = np.repeat(mono, 2).reshape(1, -1)  # PyAV's (1, samples * channels) layout
    async with scripted_audio() as pair:
        for start in range(0, len(mono), FRAME_SAMPLES):
            pair.speaker.write(packed[:, 2 * start : 2 * (start + FRAME_SAMPLES)], channels=2)
        pair.speaker.write(np.stack([mono, mono], axis=1))  # (n, 2) works too
        await pair.speaker.drained()
        assert isinstance(pair.speaker, RecordingSpeaker)
        assert np.array_equal(pair.speaker.recording(), np.concatenate([mono, mono]))


async def test_the_speaker_queue_is_bounded_dropping_the_oldest() -> None:
    speaker = RecordingSpeaker(max_queue_seconds=0.5)
    speaker.write(np.full(SAMPLE_RATE, 1, np.int16))
    speaker.write(np.full(SAMPLE_RATE // 10, 2, np.int16))
    assert speaker.queued_seconds == pytest.approx(0.5)
    assert speaker.dropped_samples == SAMPLE_RATE + SAMPLE_RATE // 10 - SAMPLE_RATE // 2
    async with speaker:
        await speaker.drained()
    assert speaker.recording()[-1] == 2 and len(speaker.recording()) == SAMPLE_RATE // 2


async def test_a_microphone_read_late_drops_the_oldest_frames() -> None:
    mic = ScriptedMicrophone(max_queue_frames=5)
    async with mic:
        async with asyncio.timeout(10):  # a wait for frames to pile up, nobody reading
            while mic.dropped_frames < 10:
                await asyncio.sleep(0.02)
        # The 5 newest are waiting; older ones were dropped, not kept.
        assert mic.backlog == 5
        for _ in range(5):
            await mic.read_frame()
    assert mic.dropped_frames >= 10


async def test_speaker_latency_delays_drained() -> None:
    speaker = RecordingSpeaker(latency=1.0)
    async with speaker:
        played = tone(0.2)
        speaker.write(played)
        draining = asyncio.ensure_future(speaker.drained())
        async with asyncio.timeout(10):
            while len(speaker.recording()) < len(played):
                await asyncio.sleep(0.01)
        # Every sample handed to the device, but the device's second of latency not over:
        # `drained` still waits (the order, not a time; the window is a second wide).
        assert not draining.done()
        await draining
