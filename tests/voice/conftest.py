"""Fixtures for voice tests: a private PulseAudio daemon (real PortAudio devices) and speech WAVs.

Ordering matters. PortAudio lists the devices once, when it initialises, and sounddevice
initialises it at `import sounddevice`; ALSA reads its configuration (our ALSA_CONFIG_PATH)
at the same moment. So the `pulse` fixture puts the daemon's variables into `os.environ` and
then, if sounddevice was already imported by an earlier test, re-initialises PortAudio so it
sees the daemon's devices. Tests must therefore:

- request `pulse` before opening any stream (never keep a stream open across tests: the
  re-initialisation would pull the device from under it);
- pass `pulse.client_env()` to subprocesses (`talkie devices`, probes) that should use it.

When a part is missing the fixtures skip and name the package; with CI=true a skip fails the
run (tests/conftest.py), because `make test` installs everything.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.voice.pulse import (
    MIC_DEVICE,
    SPEAKER_DEVICE,
    PulseAudio,
    PulseUnavailable,
    espeak_env,
)

INSTALL = "(make test installs it: scripts/install-system-deps.sh)"


def reinitialize_portaudio() -> None:
    """Make sounddevice list the devices anew (no stream may be open)."""
    sd = sys.modules.get("sounddevice")
    if sd is not None:
        sd._terminate()
        sd._initialize()


@pytest.fixture(scope="session")
def pulse() -> Iterator[PulseAudio]:
    """A private PulseAudio daemon with the talkie_mic and talkie_speaker null sinks."""
    harness = PulseAudio()
    try:
        harness.start()
    except PulseUnavailable as error:
        pytest.skip(f"PulseAudio harness unavailable: {error} {INSTALL}")
    saved = {key: os.environ.get(key) for key in harness.env}
    # Before PortAudio (and with it ALSA and libpulse) first looks: without these variables
    # ALSA's pulse hook goes looking for the user's daemon and leaves ~/.config/pulse behind.
    os.environ.update(harness.env)
    try:
        try:
            import sounddevice  # noqa: F401 - initialises PortAudio, or fails without it
        except OSError as error:
            pytest.skip(f"PortAudio missing ({error}): install libportaudio2 {INSTALL}")
        reinitialize_portaudio()
        from talkie_tui.voice.audio import list_devices

        names = {device.name for device in list_devices()}
        if not {MIC_DEVICE, SPEAKER_DEVICE} <= names:
            pytest.skip(
                f"PortAudio does not see the PulseAudio devices (it lists {sorted(names)}): "
                f"install libasound2-plugins, the ALSA pulse plugin {INSTALL}"
            )
        yield harness
    finally:
        harness.stop()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        # PortAudio is not re-initialised here: at the end of the session nobody needs it, and
        # doing so without the daemon's variables would send ALSA looking for the user's one.


@pytest.fixture(scope="session")
def speech_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the espeak-ng WAVs of this session are kept."""
    return tmp_path_factory.mktemp("speech")


@pytest.fixture(scope="session")
def speech(speech_dir: Path) -> Callable[..., Path]:
    """`speech(text, voice="en") -> Path`: espeak-ng's WAV of `text` (22,050 Hz mono), cached."""
    if shutil.which("espeak-ng") is None:
        pytest.skip(f"espeak-ng missing: install espeak-ng {INSTALL}")
    made: dict[tuple[str, str], Path] = {}

    def make(text: str, voice: str = "en") -> Path:
        if (text, voice) not in made:
            path = speech_dir / f"speech-{len(made)}.wav"
            subprocess.run(
                ["espeak-ng", "-v", voice, "-w", str(path), text],
                env=espeak_env(speech_dir),
                check=True,
                capture_output=True,
                timeout=30,
            )
            made[(text, voice)] = path
        return made[(text, voice)]

    return make
