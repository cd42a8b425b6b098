"""`talkie serve --protocol cuckoo --dev`: the same peer against the hub in its own process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.cuckoo_peer.agent import AgentBackend, echo, is_person_message
from tests.cuckoo_peer.conftest import handle, open_conversation
from tests.cuckoo_peer.person import Person


def _serves_cuckoo() -> bool:
    shown = subprocess.run(
        [sys.executable, "-m", "talkie_tui.cli", "serve", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return "cuckoo" in shown.stdout and "--dev" in shown.stdout


@pytest.mark.slow
async def test_echo_against_talkie_serve(tmp_path: Path) -> None:
    if not _serves_cuckoo():
        pytest.skip("this talkie serve has no --protocol cuckoo --dev yet")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "talkie_tui.cli",
            "serve",
            "--protocol",
            "cuckoo",
            "--dev",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--db",
            str(tmp_path / "hub.sqlite3"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), url
        owner, person = Person(url), Person(url)
        agent = await owner.create_agent(handle(), "Served")
        _binding, secret = await owner.bind(agent["id"], "socket")
        conversation_id = await open_conversation(person, owner, agent["id"])
        backend = AgentBackend(url, secret, handler=echo)
        try:
            await backend.connect()
            sent = await person.say(conversation_id, "over a real process")
            await backend.wait_event(
                lambda e: is_person_message(e) and e["data"]["message"]["id"] == sent["id"]
            )
            await backend.wait_until(lambda: len(backend.acked) >= 3)
            page = await person.history(conversation_id)
            texts = [m["body"].get("text") for m in page["messages"]]
            assert "echo: over a real process" in texts
        finally:
            await backend.close()
            await owner.aclose()
            await person.aclose()
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
