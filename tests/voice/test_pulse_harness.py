"""The PulseAudio harness itself: speech reaches real PortAudio, playback is recorded back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
import wave
from pathlib import Path

import numpy as np
import pytest

from tests.voice.pulse import (
    MIC_DEVICE,
    RATE,
    SPEAKER_DEVICE,
    PulseAudio,
    SpeakerRecording,
    active_seconds,
    missing_parts,
    tone,
)

pytestmark = pytest.mark.voice

REPO = Path(__file__).resolve().parents[2]


def wav_seconds(path: Path) -> float:
    with wave.open(str(path)) as file:
        return file.getnframes() / file.getframerate()


def dominant_frequency(samples: np.ndarray) -> float:
    mono = samples.astype(np.float64) if samples.ndim == 1 else samples.mean(axis=1)
    spectrum = np.abs(np.fft.rfft(mono * np.hanning(len(mono))))
    return float(np.fft.rfftfreq(len(mono), 1 / RATE)[int(np.argmax(spectrum))])


def test_speech_into_the_mic_sink_arrives_through_portaudio(pulse: PulseAudio) -> None:
    import sounddevice as sd

    wav = pulse.speech_wav("ano, potvrzuji", "cs")
    blocks: list[np.ndarray] = []

    def callback(indata: np.ndarray, frames: int, time_info: object, status: object) -> None:
        blocks.append(indata[:, 0].copy())

    with sd.InputStream(
        device=MIC_DEVICE,
        samplerate=RATE,
        channels=1,
        dtype="int16",
        blocksize=960,
        callback=callback,
    ):
        time.sleep(0.3)
        before = len(blocks)
        pulse.play_wav_into_mic(wav)
        time.sleep(0.3)
    recorded = np.concatenate(blocks)

    assert before > 0, "no audio callback within 0.3 s"
    assert not np.any(np.concatenate(blocks[:before])), "the idle microphone is not silent"
    speech = wav_seconds(wav)
    heard = active_seconds(recorded)
    # Speech has pauses between words, so a little less than the WAV is loud; never more.
    assert 0.5 * speech <= heard <= speech + 0.1, (heard, speech)
    assert int(np.abs(recorded.astype(np.int32)).max()) > 5000


def test_what_is_played_to_the_speaker_is_recorded_from_its_monitor(pulse: PulseAudio) -> None:
    import sounddevice as sd

    recording = pulse.start_speaker_recording()
    time.sleep(0.2)
    sd.play(tone(1.0, 440), RATE, device=SPEAKER_DEVICE, blocking=True)
    time.sleep(0.3)
    recorded = recording.stop()

    assert recorded.shape[1] == 2
    assert 0.85 <= active_seconds(recorded) <= 1.15
    loud = np.flatnonzero(np.abs(recorded[:, 0].astype(np.int32)) > 1000)
    assert abs(dominant_frequency(recorded[loud[0] : loud[-1]]) - 440) < 5


def test_record_speaker_returns_the_requested_length(pulse: PulseAudio) -> None:
    recording = SpeakerRecording(pulse)
    recorded = recording.stop(after_frames=round(0.5 * RATE))
    assert recorded.shape == (round(0.5 * RATE), 2)
    # Paced by the sink's clock: half a second came in several reads (about 25 of 20 ms; a busy
    # machine joins some), not at once. Counted, not timed.
    assert len(recording._chunks) >= 3, len(recording._chunks)
    assert not recorded.any()  # nothing played: silence


def test_the_daemon_is_private_and_stopped(pulse: PulseAudio) -> None:
    other = PulseAudio().start()
    pid, base = other.pid, other.base
    assert pid is not None and base.exists()
    sinks = other.pactl("list", "short", "sinks")
    assert "talkie_mic" in sinks and "talkie_speaker" in sinks
    assert other.socket != pulse.socket
    other.stop()
    assert not _alive(pid)
    assert not base.exists()
    other.stop()  # twice is fine


def test_the_daemon_dies_with_a_killed_test_process() -> None:
    """Even a SIGKILLed pytest leaves no daemon behind (PR_SET_PDEATHSIG)."""
    if missing_parts():
        pytest.skip(f"missing: {'; '.join(missing_parts())} (make test installs them)")
    # A middle process adopts the orphaned daemon (PR_SET_CHILD_SUBREAPER), so it can wait for
    # it and report how it ended, and no zombie is left for an init that may not reap.
    inner = "from tests.voice.pulse import PulseAudio; import time; " + (
        "p = PulseAudio().start(); print(p.pid, p.base, flush=True); time.sleep(60)"
    )
    outer = textwrap.dedent(
        f"""
        import ctypes, json, os, shutil, subprocess, sys, time
        ctypes.CDLL(None).prctl(36, 1)  # PR_SET_CHILD_SUBREAPER
        child = subprocess.Popen([sys.executable, "-c", {inner!r}], stdout=subprocess.PIPE)
        pid, base = child.stdout.readline().split()
        pid = int(pid)
        child.kill()
        child.wait()
        deadline, ended = time.monotonic() + 5, False
        while time.monotonic() < deadline and not ended:
            ended = os.waitpid(pid, os.WNOHANG)[0] == pid
            time.sleep(0.02)
        if not ended:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        shutil.rmtree(base, ignore_errors=True)
        print(json.dumps({{"ended_with_parent": ended}}))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", outer],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == {"ended_with_parent": True}


def _alive(pid: int) -> bool:
    """True while `pid` runs (a zombie waiting for its reaper counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")
