"""`talkie doctor`: a plain-words report that works on a bare machine (issue 6, item 4)."""

from __future__ import annotations

import io
import os
import re
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest

from talkie_tui.commands.doctor import doctor
from talkie_tui.config import KnownServers
from talkie_tui.protocol.net.http import make_http_client
from talkie_tui.protocol.talkie.manifest import fetch_manifest
from tests.helpers import TEST_TOKEN


@pytest.fixture(autouse=True)
def _bare_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    """No keyring (the suite's fail backend), no display, no browser, no PortAudio, no proxy."""
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER", "SSH_CONNECTION", "SSH_TTY"):
        monkeypatch.delenv(name, raising=False)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "SSL_CERT_FILE"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    # As on a machine without libportaudio2: sounddevice cannot be imported.
    monkeypatch.setitem(sys.modules, "sounddevice", None)


async def _report() -> str:
    out = io.StringIO()
    assert await doctor(out) == 0
    return out.getvalue()


def _line(report: str, label: str) -> str:
    """The row labelled `label`, its wrapped continuation lines joined."""
    match = re.search(rf"^  (\S)  {re.escape(label)} +(.*(?:\n {{8,}}\S.*)*)", report, re.M)
    assert match is not None, f"no '{label}' row in:\n{report}"
    return f"{match.group(1)} " + " ".join(part.strip() for part in match.group(2).split("\n"))


async def test_a_bare_machine_is_reported_in_plain_words() -> None:
    """No keyring, no browser, no audio: exit 0, and each says what talkie does instead."""
    report = await _report()
    keyring = _line(report, "keyring")
    assert keyring.startswith("✗ not available:")
    assert "a file readable only by you, or this session only" in keyring
    browser = _line(report, "browser")
    assert browser.startswith("– none: no graphical display was found")
    assert "open it in a browser on any computer" in browser
    audio = _line(report, "audio")
    assert audio.startswith("✗ unavailable: the sounddevice package cannot be imported")
    assert audio.endswith("Voice calls are off; chat works as usual.")
    settings = _line(report, "settings")
    assert settings.startswith("– ") and settings.endswith("not found: the defaults are used")
    assert _line(report, "proxy").startswith("– none")
    assert _line(report, "certificates").startswith("✓ ")
    assert _line(report, "none").startswith("– no server yet")


async def test_known_servers_up_and_down(
    devserver: Callable[..., str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server that answers shows ✓ and its time; one that is down shows ✗ and why."""
    url = devserver(test_mode=True, dev_token=TEST_TOKEN)
    async with make_http_client() as http:
        up = await fetch_manifest(http, f"{url}/.well-known/talkie.json")
    known = KnownServers.load()
    known.remember(up, url)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"
    down = SimpleNamespace(
        server_id="gone-1",
        manifest=SimpleNamespace(name="Old CRM"),
        manifest_url=f"{dead}/.well-known/talkie.json",
        origin=dead,
    )
    known.remember(down, dead)  # type: ignore[arg-type]
    # A proxy is set: loopback servers are still checked directly.
    monkeypatch.setenv("HTTPS_PROXY", "http://alice:s3cret@proxy.example:3128")
    report = await _report()
    assert "Servers (2 known)" in report
    assert re.search(
        r"✓ answers, \d+ ms$", _line(report, "Talkie Demo CRM").replace(url + ": ", "")
    )
    old = _line(report, "Old CRM")
    assert old.startswith(f"✗ {dead}: Could not connect to {dead}: connection refused")


async def test_proxies_and_certificates_in_effect(monkeypatch: pytest.MonkeyPatch) -> None:
    """The proxy is shown without its password, with where it came from; NO_PROXY, and an
    SSL_CERT_FILE that cannot be used, are shown too."""
    monkeypatch.setenv("HTTPS_PROXY", "http://alice:s3cret@proxy.example:3128")
    monkeypatch.setenv("no_proxy", ".corp.example,10.0.0.0/8")
    monkeypatch.setenv("SSL_CERT_FILE", "/nonexistent/company.pem")
    report = await _report()
    assert "s3cret" not in report
    assert (
        _line(report, "https proxy") == "✓ http://alice:***@proxy.example:3128 (from HTTPS_PROXY)"
    )
    assert _line(report, "http proxy") == "– none: direct"
    direct = _line(report, "direct to")
    assert "127.0.0.0/8" in direct and ".corp.example, 10.0.0.0/8 (from no_proxy)" in direct
    assert _line(report, "SSL_CERT_FILE") == (
        "✗ /nonexistent/company.pem cannot be used: there is no such file"
    )


async def test_a_broken_config_file_is_reported(talkie_home: Path) -> None:
    """config.toml that does not parse, or has bad values: ✗ and each problem in words."""
    (talkie_home / "config.toml").write_text('theme = 3\nnewline_key = "ctrl+j"\nbogus = 1\n')
    report = await _report()
    assert re.match(r"✗ \S+config\.toml: 2 problems - ", _line(report, "settings"))
    flat = " ".join(report.split())
    assert "- theme must be the name of a theme; the default is used." in flat
    assert "- unknown setting 'bogus' ignored." in flat


def test_the_command_runs_and_exits_0(talkie_home: Path) -> None:
    """`talkie doctor` from the command line, in a clean environment: a report, exit 0."""
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER", "SSH_CONNECTION", "SSH_TTY")
    }
    done = subprocess.run(
        [sys.executable, "-m", "talkie_tui.cli", "doctor"],
        env={**env, "TALKIE_HOME": str(talkie_home), "COLUMNS": "100"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    for title in ("Files", "Sign-in", "Voice", "Network", "Servers (0 known)"):
        assert f"\n{title}\n" in done.stdout
    assert "none: no graphical display was found" in done.stdout


async def test_audio_devices_are_counted_with_their_defaults(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With PortAudio and devices: the version, and how many microphones and speakers."""
    from talkie_tui.voice import audio

    def device(index: int, name: str, inputs: int, outputs: int, default: bool) -> object:
        return audio.AudioDevice(index, name, "ALSA", inputs, outputs, default, default, 48000.0)

    devices = [device(0, "Headset", 1, 2, False), device(1, "Laptop", 2, 2, True)]
    monkeypatch.setattr(audio, "list_devices", lambda: devices)
    monkeypatch.setattr(audio, "portaudio_version", lambda: "PortAudio V19.7.0")
    report = await _report()
    assert _line(report, "PortAudio") == "✓ PortAudio V19.7.0"
    assert _line(report, "microphones") == "✓ 2, default: Laptop"
    assert _line(report, "speakers") == "✓ 2, default: Laptop"


@pytest.mark.parametrize(
    ("environ", "config", "said"),
    [
        ({"LANG": "cs_CZ.UTF-8"}, "", "– Čeština (the system's language)"),
        ({"LANG": "C.UTF-8"}, "", "– the server's, when it is English or Czech; else English"),
        ({"LANG": "cs_CZ.UTF-8"}, 'language = "en"\n', '– English (language = "en" in'),
    ],
)
async def test_the_ui_language_and_why(
    monkeypatch: pytest.MonkeyPatch,
    talkie_home: Path,
    environ: dict[str, str],
    config: str,
    said: str,
) -> None:
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    (talkie_home / "config.toml").write_text(config)
    assert _line(await _report(), "language").startswith(said)


async def test_crash_reports_are_pointed_out() -> None:
    from talkie_tui.logs import write_crash_report

    try:
        raise RuntimeError("for the report")
    except RuntimeError as error:
        path = write_crash_report(error, "test")
    assert path is not None
    assert _line(await _report(), "crash reports").startswith(f"– 1, newest {path}")
