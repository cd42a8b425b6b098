"""A private PulseAudio daemon with null sinks: real audio devices for tests, no sound card needed.

What the daemon offers (notes/voice.md, Appendix):

- `talkie_mic`, a null sink. Whatever is played into it (`speak_into_mic`, `play_wav_into_mic`)
  comes out of its monitor `talkie_mic.monitor`, which is the microphone talkie records from.
- `talkie_speaker`, a null sink where talkie plays; `record_speaker` records its monitor.
- Both are the defaults, and both are also PortAudio devices of their own name: Debian's
  PortAudio talks only ALSA, and ALSA's `pulse` plugin (libasound2-plugins) lists just `pulse`
  and `default`, so `env["ALSA_CONFIG_PATH"]` adds an ALSA config naming the two (input-only
  and output-only) next to the system's.

Everything lives in one temporary directory (runtime socket, cookie, HOME), so nothing touches
the real user's PulseAudio or ~/.config. The daemon dies with this process (PR_SET_PDEATHSIG)
as well as on `stop()`, so no daemon is left behind even when pytest is killed.

A process uses the daemon when `env` is in its environment before PortAudio initialises: for
sounddevice that is at `import sounddevice` (see tests/voice/conftest.py).
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import wave
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

RATE = 48_000
MIC_SINK = "talkie_mic"
MIC_SOURCE = "talkie_mic.monitor"
SPEAKER_SINK = "talkie_speaker"
SPEAKER_MONITOR = "talkie_speaker.monitor"
MIC_DEVICE = "talkie_mic"  # the PortAudio (ALSA) names
SPEAKER_DEVICE = "talkie_speaker"
TOOLS = ("pulseaudio", "pactl", "paplay", "parec", "espeak-ng")
ALSA_MAIN_CONFIG = Path("/usr/share/alsa/alsa.conf")
START_TIMEOUT = 10.0

_ALSA_DEVICES = f"""\
pcm.{MIC_DEVICE} {{
    type asym
    capture.pcm {{ type pulse device "{MIC_SOURCE}" }}
    hint {{ show on description "talkie test microphone (PulseAudio {MIC_SOURCE})" }}
}}
pcm.{SPEAKER_DEVICE} {{
    type asym
    playback.pcm {{ type pulse device "{SPEAKER_SINK}" }}
    hint {{ show on description "talkie test speaker (PulseAudio {SPEAKER_SINK})" }}
}}
"""


class PulseUnavailable(RuntimeError):
    """A part is missing; the message names what to install."""


def missing_parts() -> list[str]:
    """What this machine lacks for the harness, in words naming the Debian package."""
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    problems = [f"{tool} (install pulseaudio pulseaudio-utils espeak-ng)" for tool in missing]
    if not ALSA_MAIN_CONFIG.exists():
        problems.append(f"{ALSA_MAIN_CONFIG} (install libasound2)")
    return problems


def espeak_env(folder: Path) -> dict[str, str]:
    """An environment for espeak-ng that keeps it off every PulseAudio daemon.

    espeak-ng opens an audio output (libpcaudio -> libpulse) even when it only writes a WAV;
    without a daemon libpulse then creates ~/.config/pulse/<machine-id>-runtime and
    /tmp/pulse-*. A server address that does not exist, in a folder of ours, avoids both.
    """
    return {
        **os.environ,
        "PULSE_SERVER": f"unix:{folder / 'no-pulse'}",
        "PULSE_RUNTIME_PATH": str(folder),
        "PULSE_COOKIE": str(folder / "no-pulse-cookie"),
    }


def _die_with_parent() -> None:
    # Runs in the child between fork and exec: ask Linux to SIGTERM the daemon when the thread
    # that started it goes away, so a killed pytest leaves no daemon behind.
    libc = ctypes.CDLL(None, use_errno=True)
    pr_set_pdeathsig = 1
    libc.prctl(pr_set_pdeathsig, signal.SIGTERM)


class PulseAudio:
    """One private PulseAudio daemon; `start()` it, use `env`, and `stop()` it."""

    def __init__(self) -> None:
        self.base = Path(tempfile.mkdtemp(prefix="talkie-pulse-"))
        self.runtime = self.base / "run" / "pulse"
        self.socket = self.runtime / "native"
        self.cookie = self.base / "cookie"
        self.log = self.base / "pulseaudio.log"
        self.alsa_config = self.base / "talkie-alsa.conf"
        self.process: subprocess.Popen[bytes] | None = None
        self._speech: dict[tuple[str, str], Path] = {}
        self.env: dict[str, str] = {
            # Clients find the daemon by these; the cookie path keeps libpulse from creating
            # ~/.config/pulse/cookie in the real home.
            "PULSE_SERVER": f"unix:{self.socket}",
            "PULSE_RUNTIME_PATH": str(self.runtime),
            "PULSE_COOKIE": str(self.cookie),
            # The system's ALSA config, then ours: PortAudio lists talkie_mic and talkie_speaker.
            "ALSA_CONFIG_PATH": f"{ALSA_MAIN_CONFIG}:{self.alsa_config}",
        }

    @property
    def pid(self) -> int | None:
        """The daemon's process id while it runs."""
        return self.process.pid if self.process is not None else None

    def client_env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """An environment for a subprocess that should use this daemon."""
        return {**(os.environ if base is None else base), **self.env}

    def start(self) -> PulseAudio:
        """Start the daemon and its null sinks; `PulseUnavailable` names what is missing."""
        problems = missing_parts()
        if problems:
            raise PulseUnavailable("missing: " + "; ".join(problems))
        home = self.base / "home"
        for folder in (home, self.runtime, self.base / "state"):
            folder.mkdir(parents=True, mode=0o700)
        self.cookie.write_bytes(os.urandom(256))
        self.cookie.chmod(0o600)
        self.alsa_config.write_text(_ALSA_DEVICES)
        daemon_env = {
            key: value
            for key, value in os.environ.items()
            if key not in ("DISPLAY", "WAYLAND_DISPLAY", "PULSE_SERVER", "DBUS_SESSION_BUS_ADDRESS")
        }
        daemon_env.update(
            HOME=str(home),
            XDG_RUNTIME_DIR=str(self.base / "run"),
            XDG_CONFIG_HOME=str(home / ".config"),
            PULSE_RUNTIME_PATH=str(self.runtime),
            PULSE_STATE_PATH=str(self.base / "state"),
            # A bus that does not exist: the daemon must not autolaunch a dbus-daemon (which would
            # outlive it) nor talk to the user's session.
            DBUS_SESSION_BUS_ADDRESS=f"unix:path={self.base / 'no-dbus'}",
        )
        null = "module-null-sink rate=48000"
        modules = [
            # auth-anonymous: the socket sits in a 0700 directory of ours; no cookie dance.
            f"module-native-protocol-unix auth-anonymous=1 socket={self.socket}",
            f"{null} channels=1 sink_name={MIC_SINK} "
            "sink_properties=device.description=talkie-test-microphone",
            f"{null} channels=2 sink_name={SPEAKER_SINK} "
            "sink_properties=device.description=talkie-test-speaker",
            # An idle null sink renders in blocks of up to 2 s, so the first stream on it waits
            # up to 2 s for its first audio. A permanent low-latency client on each keeps the
            # blocks at ~10 ms: silence looped into the mic, the speaker's monitor looped out.
            "module-null-source source_name=talkie_silence rate=48000 channels=1",
            f"module-loopback source=talkie_silence sink={MIC_SINK} latency_msec=30 "
            "source_dont_move=1 sink_dont_move=1",
            f"{null} channels=2 sink_name=talkie_void "
            "sink_properties=device.description=talkie-test-void",
            f"module-loopback source={SPEAKER_MONITOR} sink=talkie_void latency_msec=30 "
            "source_dont_move=1 sink_dont_move=1",
        ]
        command = [
            "pulseaudio",
            "--daemonize=no",  # our child: we hold its pid and reap it
            "--exit-idle-time=-1",
            "-n",  # no default.pa: no hardware probing, only the modules below
            "--use-pid-file=no",
            "--disallow-exit",
            "--log-target=stderr",
            "--log-level=warning",
            *(f"--load={module}" for module in modules),
        ]
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                command,
                env=daemon_env,
                cwd=self.base,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                preexec_fn=_die_with_parent,  # pdeathsig: see _die_with_parent
            )
        try:
            self._wait_ready()
            self.pactl("set-default-sink", SPEAKER_SINK)
            self.pactl("set-default-source", MIC_SOURCE)
            # The null sinks rendered their first block before the loopbacks attached: up to 2 s
            # ahead. Suspending and resuming restarts them with the loopbacks' low latency.
            for sink in (MIC_SINK, SPEAKER_SINK):
                self.pactl("suspend-sink", sink, "1")
                self.pactl("suspend-sink", sink, "0")
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        assert self.process is not None
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise PulseUnavailable(
                    f"pulseaudio exited with {self.process.returncode}: {self._log_tail()}"
                )
            if self.socket.exists():
                done = subprocess.run(
                    ["pactl", "info"], env=self.client_env(), capture_output=True, timeout=5
                )
                if done.returncode == 0:
                    return
            time.sleep(0.05)
        raise PulseUnavailable(f"pulseaudio did not start in {START_TIMEOUT} s: {self._log_tail()}")

    def _log_tail(self) -> str:
        try:
            return self.log.read_text(errors="replace")[-2000:]
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        """Stop the daemon and remove its directory; safe to call twice."""
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)
        shutil.rmtree(self.base, ignore_errors=True)

    def __enter__(self) -> PulseAudio:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # --- helpers for tests ---------------------------------------------------------------------

    def pactl(self, *args: str) -> str:
        """Run pactl against this daemon; its stdout."""
        done = subprocess.run(
            ["pactl", *args],
            env=self.client_env(),
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"pactl {' '.join(args)} failed: {done.stderr.strip()}")
        return done.stdout

    def streams(self, kind: str = "source-outputs") -> list[dict[str, Any]]:
        """Clients' streams (`source-outputs` record, `sink-inputs` play), not the loopbacks'."""
        # The loopbacks belong to a module, not to a client.
        streams = json.loads(self.pactl("--format=json", "list", kind) or "[]")
        return [stream for stream in streams if stream.get("client") is not None]

    def speech_wav(self, text: str, voice: str = "en") -> Path:
        """espeak-ng's 22,050 Hz mono WAV of `text` (cached per text and voice)."""
        key = (text, voice)
        if key not in self._speech:
            path = self.base / f"speech-{len(self._speech)}.wav"
            subprocess.run(
                ["espeak-ng", "-v", voice, "-w", str(path), text],
                env=espeak_env(self.base),
                check=True,
                capture_output=True,
                timeout=30,
            )
            self._speech[key] = path
        return self._speech[key]

    def play_wav_into_mic(self, path: Path, *, wait: bool = True) -> subprocess.Popen[bytes]:
        """Play a WAV into the microphone sink (paplay resamples); waits unless `wait=False`."""
        player = subprocess.Popen(
            ["paplay", "--device", MIC_SINK, "--latency-msec=20", str(path)],
            env=self.client_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        if wait:
            _, err = player.communicate(timeout=60)
            if player.returncode != 0:
                raise RuntimeError(f"paplay failed: {err.decode(errors='replace')}")
        return player

    def speak_into_mic(
        self, text: str, voice: str = "en", *, wait: bool = True
    ) -> subprocess.Popen[bytes]:
        """Say `text` into the microphone with espeak-ng ("cs" for Czech, "en" for English)."""
        return self.play_wav_into_mic(self.speech_wav(text, voice), wait=wait)

    def start_speaker_recording(self) -> SpeakerRecording:
        """Start recording what is played to the speaker; `.stop()` returns the samples."""
        return SpeakerRecording(self)

    def record_speaker(self, seconds: float) -> NDArray[np.int16]:
        """Record `seconds` of the speaker's monitor: (n, 2) int16 at 48 kHz."""
        recording = SpeakerRecording(self)
        return recording.stop(after_frames=round(seconds * RATE))


class SpeakerRecording:
    """parec on the speaker's monitor, read by a thread into memory (raw: no WAV header to lose)."""

    def __init__(self, pulse: PulseAudio) -> None:
        self._process = subprocess.Popen(
            [
                "parec",
                "--device",
                SPEAKER_MONITOR,
                "--raw",
                "--format=s16le",
                f"--rate={RATE}",
                "--channels=2",
                "--latency-msec=20",
            ],
            env=pulse.client_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self._chunks: list[bytes] = []
        self._size = 0
        self._grown = threading.Condition()
        self._reader = threading.Thread(target=self._read, name="parec-reader", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self._process.stdout is not None
        while chunk := self._process.stdout.read1(65536):
            with self._grown:
                self._chunks.append(chunk)
                self._size += len(chunk)
                self._grown.notify_all()
        with self._grown:
            self._grown.notify_all()

    def stop(self, *, after_frames: int | None = None, timeout: float = 30.0) -> NDArray[np.int16]:
        """Stop (after `after_frames` frames have arrived, if given) and return (n, 2) int16."""
        if after_frames is not None:
            wanted = after_frames * 4
            with self._grown:
                self._grown.wait_for(
                    lambda: self._size >= wanted or not self._reader.is_alive(), timeout=timeout
                )
        self._process.terminate()
        self._process.wait(timeout=5)
        self._reader.join(timeout=5)
        data = b"".join(self._chunks)
        data = data[: len(data) // 4 * 4]
        samples = np.frombuffer(data, dtype="<i2").astype(np.int16).reshape(-1, 2)
        return samples[:after_frames] if after_frames is not None else samples


def write_wav(path: Path, samples: NDArray[np.int16], rate: int = RATE) -> Path:
    """Write mono or (n, channels) int16 samples as a WAV file."""
    frames = samples if samples.ndim == 2 else samples[:, np.newaxis]
    with wave.open(str(path), "wb") as file:
        file.setnchannels(frames.shape[1])
        file.setsampwidth(2)
        file.setframerate(rate)
        file.writeframes(frames.astype("<i2").tobytes())
    return path


def tone(seconds: float, frequency: float = 440.0, amplitude: int = 12_000) -> NDArray[np.int16]:
    """A mono sine tone at 48 kHz."""
    t = np.arange(round(seconds * RATE)) / RATE
    return (amplitude * np.sin(2 * np.pi * frequency * t)).astype(np.int16)


def active_seconds(samples: NDArray[np.int16], threshold_dbfs: float = -50.0) -> float:
    """How many seconds of 20 ms blocks are louder than `threshold_dbfs` (RMS)."""
    mono = samples if samples.ndim == 1 else samples.astype(np.int32).mean(axis=1)
    count = len(mono) // 960
    if count == 0:
        return 0.0
    blocks = np.asarray(mono[: count * 960], dtype=np.float64).reshape(count, 960)
    rms = np.sqrt((blocks**2).mean(axis=1))
    threshold = 32768 * 10 ** (threshold_dbfs / 20)
    return float((rms > threshold).sum() * 960 / RATE)
