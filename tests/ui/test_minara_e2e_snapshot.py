"""An SVG snapshot of the real app on the real gateway: the thread list with the server's search
results. Deterministic: fixed titles and messages (seeded over HTTP), every age "now", no id on
screen; the one thing that differs per run, the gateway's port in its name, is named fixedly."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest
from textual.pilot import Pilot

from talkie_tui.backends.minara import backend as minara_backend
from talkie_tui.config import KnownServers, Settings
from talkie_tui.ui.app import TalkieApp
from talkie_tui.ui.widgets.thread_list import ThreadList
from tests.helpers import AUTH, TEST_TOKEN
from tests.ui.minara_e2e import SIZE, WAIT, chat, until

pytestmark = pytest.mark.slow

SESSIONS = {
    "Weekly budget": [
        "minara-test:echo Rent is paid; groceries stay under 120 USD.",
        "minara-test:echo Put 50 USD into the quokka fund every Friday.",
    ],
    "Travel plans": ["minara-test:echo Rottnest Island in March: ferry, bikes, a quokka selfie."],
    "Tax return": ["minara-test:echo Receipts are in the blue folder."],
}


def seed(gateway_url: str) -> None:
    """The sessions, one after the other, each finished before the next begins."""
    with httpx.Client(base_url=gateway_url, headers=AUTH, timeout=10) as http:
        for title, messages in SESSIONS.items():
            session = http.post("/v1/sessions", json={"title": title}).raise_for_status()
            session_id = session.json()["data"]["id"]
            for count, message in enumerate(messages, start=1):
                body = {"message": message, "session_id": session_id}
                http.post("/v1/chat/stream", json=body).raise_for_status()
                deadline = time.monotonic() + WAIT
                while True:
                    detail = http.get(f"/v1/sessions/{session_id}").json()
                    if not detail["is_streaming"] and len(detail["messages"]) == 2 * count:
                        break
                    assert time.monotonic() < deadline, detail
                    time.sleep(0.05)


def test_server_search_results(
    snap_compare, gateway_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Titles that match none of the words, then the messages found, the matches in bold."""
    monkeypatch.setattr(minara_backend, "gateway_name", lambda origin: "Minara gateway · test")
    seed(gateway_url)
    app = TalkieApp(
        gateway_url.removeprefix("http://"),
        gateway_token=TEST_TOKEN,
        protocol="minara",
        settings=Settings(token_storage="file", downloads_dir=tmp_path / "downloads"),
        known=KnownServers.load(tmp_path / "servers.json"),
    )

    async def run_before(pilot: Pilot[None]) -> None:
        screen = await chat(app, pilot)
        thread_list = screen.query_one(ThreadList)
        await until(pilot, lambda: len(thread_list.visible_thread_ids) == 3, WAIT)
        thread_list.filter_input.focus()
        thread_list.filter_input.cursor_blink = False
        await pilot.press(*"quokka")
        await until(pilot, lambda: len(thread_list.hits) >= 2, WAIT)
        await pilot.pause(0.1)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
