"""`talkie demo --protocol cuckoo`: the Talkie server, the hub, the demo person and agent, the
bridge; without a terminal a scripted conversation through the hub (a card, an action's
buttons); everything stops at the end."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx
import pytest

from talkie_tui.commands.demo import run_demo
from talkie_tui.commands.demo_cuckoo import AGENT_NAME, DEMO_NAME, cuckoo_demo

pytestmark = pytest.mark.slow


def test_the_demo_person_owns_the_bridged_agent_and_all_stops(tmp_path: Path) -> None:
    before = {t.name for t in threading.enumerate()}
    with cuckoo_demo(tmp_path) as demo:
        auth = {"Authorization": f"Bearer {demo.session_token}"}
        me = httpx.get(f"{demo.hub_url}/v1/client/me", headers=auth, trust_env=False)
        assert me.json()["user"]["display_name"] == DEMO_NAME
        listed = httpx.get(
            f"{demo.hub_url}/v1/client/conversations", headers=auth, trust_env=False
        ).json()["conversations"]
        [conversation] = listed
        assert conversation["id"] == demo.conversation_id
        agents = [p for p in conversation["participants"] if p["kind"] == "agent"]
        assert [a["display_name"] for a in agents] == [AGENT_NAME]
        assert agents[0]["status"] == "connected"  # the bridge holds the agent's socket
        hub, talkie = demo.hub_url, demo.talkie_url
    assert "talkie-demo-bridge" not in {t.name for t in threading.enumerate()} - before
    for url in (hub, talkie):
        with pytest.raises(httpx.TransportError):
            httpx.get(url, timeout=2, trust_env=False)


def test_the_demo_agent_confirms_a_schedule_the_person_asks_for(tmp_path: Path) -> None:
    with cuckoo_demo(tmp_path) as demo:
        auth = {"Authorization": f"Bearer {demo.session_token}"}
        path = f"{demo.hub_url}/v1/client/conversations/{demo.conversation_id}/schedules"
        cadence = {"repeat": "weekdays", "time": "08:00", "timezone": "Europe/Prague"}
        asked = httpx.post(
            path,
            json={"instruction": "What meetings do I have today?", "cadence": cadence},
            headers=auth,
            trust_env=False,
        )
        assert asked.status_code == 201, asked.text
        for _ in range(100):
            listed = httpx.get(path, headers=auth, trust_env=False).json()["schedules"]
            if listed[0]["status"] == "active":
                break
            time.sleep(0.1)
        assert listed[0]["status"] == "active"  # the bridge confirmed it


def test_without_a_terminal_a_scripted_conversation_shows_the_card_and_buttons(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run_demo(protocol="cuckoo", stay=False) == 0
    out = capsys.readouterr().out
    assert f"signed in as {DEMO_NAME}" in out
    assert "> show me Alfa" in out and "IČO: 12345678" in out  # the card, as a message
    assert "**Alfa s.r.o.** is a client" in out  # the streamed answer
    assert "> send the offer to Alfa" in out and "[Confirm] [Cancel]" in out


def test_the_servers_logs_stay_off_the_terminal() -> None:
    """The hub's sign-in code line (and the other server logs) is not written to stderr by
    logging's last resort, where it stayed on the terminal after the TUI quit; a handler of
    talkie's (the debug log) still gets it. In a process of its own: pytest's log capture is a
    handler, which would hide the last resort."""
    import subprocess
    import sys

    code = """
import logging, sys, tempfile
from pathlib import Path
from talkie_tui.commands.demo_cuckoo import cuckoo_demo
with tempfile.TemporaryDirectory() as folder, cuckoo_demo(Path(folder)):
    pass
print("-- now with a debug log --", flush=True)
logging.getLogger("talkie_tui").addHandler(logging.StreamHandler(sys.stdout))
with tempfile.TemporaryDirectory() as folder, cuckoo_demo(Path(folder)):
    pass
"""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "sign-in code" not in done.stderr, done.stderr
    before, after = done.stdout.split("-- now with a debug log --")
    assert "sign-in code" not in before and "sign-in code for" in after
