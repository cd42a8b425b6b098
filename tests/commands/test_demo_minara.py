"""`talkie demo --protocol minara`: the reference gateway on a free 127.0.0.1 port with its demo
agent; without a terminal a scripted conversation through it (text, a tool call's table, chart
and key-value list, Markdown, a newer block's fallback text and a link, todos ticked off);
everything stops at the end, and Ctrl+C stops the gateway that `talkie demo` keeps running for
another terminal."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import pytest

from talkie_tui.commands.demo import DEMO_SCRIPTS, run_demo

pytestmark = pytest.mark.slow

SERVER_LINE = re.compile(r"Reference server: (http://127\.0\.0\.1:\d+)  \(token: (\S+)\)")


def refused(url: str) -> bool:
    """True when nothing answers at `url` any more."""
    try:
        httpx.get(f"{url}/healthz", timeout=2, trust_env=False)
    except httpx.TransportError:
        return True
    return False


def test_without_a_terminal_a_scripted_conversation_runs_and_all_stops(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the gateway's data goes
    before = set(threading.enumerate())
    assert run_demo(protocol="minara", stay=False) == 0
    out = capsys.readouterr().out

    found = SERVER_LINE.search(out)
    assert found is not None, out
    url, token = found.groups()
    assert [line[2:] for line in out.splitlines() if line.startswith("> ")] == list(
        DEMO_SCRIPTS["minara"]
    )
    assert "I'm the Minara demo agent" in out and "“plan my week”" in out  # help
    # portfolio: the text, then the blocks as text (aligned columns, a sparkline, key–value).
    assert "Your portfolio is worth 41,880.50 USD, +1.3 % in 24 hours." in out
    assert re.search(r"Bitcoin \(BTC\) +0\.42 +64,250\.00 USD +26,985\.00 USD +\+1\.8 %", out)
    assert "Portfolio value, last 7 days (USD)" in out and "▁" in out and "█" in out
    assert re.search(r"Largest position +Bitcoin \(BTC\)", out)
    # market summary: Markdown, a block of a kind newer than talkie as its fallback, a link.
    assert "### The week in short" in out and "- **Solana** +9.6 %: led the week" in out
    assert "Heat map of the 7-day change: SOL +9.6 % · BTC +4.1 %" in out
    assert "Solana, the week's top mover: https://solana.com" in out
    # plan my week: the todo list as it ended, every step ticked off.
    assert "All 4 steps are prepared." in out and "To do · 4 of 4 done" in out
    assert out.count("☑") == 4 and "☐" not in out
    assert "\x1b" not in out  # no terminal, no bold

    # Nothing is left: the gateway does not answer, its threads ended, its folder is gone.
    assert refused(url)
    for thread in set(threading.enumerate()) - before:
        thread.join(5)
        assert not thread.is_alive(), thread.name
    assert list(tmp_path.iterdir()) == []
    assert token not in capsys.readouterr().err


def test_talkie_demo_keeps_the_gateway_for_another_terminal_until_ctrl_c(tmp_path: Path) -> None:
    """The command as a person runs it without a terminal: after the script the gateway keeps
    running (and takes `talkie ask` from elsewhere, as the printed hint says); Ctrl+C stops
    it, the process exits 0 and leaves no folder behind."""
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONUNBUFFERED": "1"}
    demo = subprocess.Popen(
        [sys.executable, "-m", "talkie_tui.cli", "demo", "--protocol", "minara"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert demo.stdout is not None
        lines: list[str] = []
        deadline = time.monotonic() + 60
        while not lines or lines[-1] != "Press Ctrl+C to stop.\n":
            line = demo.stdout.readline()
            assert line and time.monotonic() < deadline, "".join(lines)
            lines.append(line)
        out = "".join(lines)
        found = SERVER_LINE.search(out)
        assert found is not None, out
        url, token = found.groups()
        assert f"talkie ask {url} 'help' --token {token}" in out
        [folder] = tmp_path.iterdir()  # the gateway's data, while it runs
        assert folder.name.startswith("talkie-demo-")

        # Another client of the gateway still running: the demo's conversation is there.
        auth = {"Authorization": f"Bearer {token}"}
        sessions = httpx.get(f"{url}/v1/sessions", headers=auth, trust_env=False).json()
        [session] = sessions["sessions"]
        assert session["title"] == "help" and session["message_count"] == 2 * len(
            DEMO_SCRIPTS["minara"]
        )

        demo.send_signal(signal.SIGINT)
        _out, err = demo.communicate(timeout=30)
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.wait()
    assert demo.returncode == 0, err
    assert "Stopped." in err and "Traceback" not in err
    assert refused(url)
    assert list(tmp_path.iterdir()) == []
