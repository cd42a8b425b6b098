"""Group commit keeps the hub's promises across a crash: a message answered 201, or confirmed
on an agent's socket, is stored when the hub is killed (SIGKILL, no shutdown at all) right after
the answer; an event that was not acknowledged comes again after the restart."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from websockets.asyncio.client import ClientConnection

from talkie_tui.devserver.cuckoo.storage import Storage
from tests.devserver.cuckoo.wire import Agent, dev, make_agent

REPO = Path(__file__).resolve().parents[3]
# The hub in a process of its own, with the send rates raised so that many sends are in
# flight at once (they then share commits, which is what is under test).
HUB = """
import sys
from pathlib import Path
from talkie_tui.devserver.cuckoo.config import HubConfig
from talkie_tui.devserver.cuckoo.runner import run_forever
fast = (10_000.0, 10_000)
config = HubConfig(dev=True, db_path=Path(sys.argv[1]), person_send_rate=fast, agent_send_rate=fast)
run_forever(config, lambda url: print(url, flush=True))
"""
MESSAGES = 40


@contextmanager
def hub_process(db_path: Path) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """The hub serving `db_path` in a child process: its URL and the process (killed after)."""
    process = subprocess.Popen(
        [sys.executable, "-c", HUB, str(db_path)], cwd=REPO, stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), url
        yield url, process
    finally:
        process.kill()
        process.wait(timeout=10)


async def answer_and_ack_odd_ones(
    socket: ClientConnection, confirmed: dict[str, str], acked: set[str], unacked: set[str]
) -> None:
    """Reply to each person's message; acknowledge every other event only."""
    count = 0
    async for raw in socket:
        frame = json.loads(raw)
        if frame.get("ok"):
            confirmed[frame["reply_to_cid"]] = frame["message"]["id"]
            continue
        if frame.get("type") != "message.created":
            await socket.send(json.dumps({"ack": frame["id"]}))
            continue
        message = frame["data"]["message"]
        await socket.send(
            json.dumps(
                {
                    "op": "send",
                    "cid": message["id"],
                    "conversation_id": frame["data"]["conversation"]["id"],
                    "text": "re: " + message["body"]["text"],
                    "reply_to": message["id"],
                }
            )
        )
        count += 1
        if count % 2:
            await socket.send(json.dumps({"ack": frame["id"]}))
            acked.add(frame["id"])
        else:
            unacked.add(frame["id"])


async def redelivered(agent: Agent, quiet: float = 1.0) -> set[str]:
    """The ids of the events a fresh socket gets until it has been quiet for `quiet` s."""
    seen: set[str] = set()
    async with agent.socket() as socket:
        while True:
            try:
                async with asyncio.timeout(quiet):
                    frame = json.loads(await socket.recv())
            except TimeoutError:
                return seen
            if "type" in frame:
                seen.add(frame["id"])


@pytest.mark.slow
async def test_nothing_answered_is_lost_when_the_hub_is_killed(tmp_path: Path) -> None:
    db_path = tmp_path / "hub.sqlite3"
    confirmed: dict[str, str] = {}  # the person's message id -> the agent's reply id
    acked: set[str] = set()
    unacked: set[str] = set()
    with hub_process(db_path) as (url, process), httpx.Client(trust_env=False) as sync_http:
        agent = make_agent(sync_http, url)
        path = f"/v1/client/conversations/{agent.conversation_id}/messages"
        async with (
            httpx.AsyncClient(base_url=url, headers=dev(agent.owner), trust_env=False) as http,
            agent.socket() as socket,
        ):
            backend = asyncio.create_task(
                answer_and_ack_odd_ones(socket, confirmed, acked, unacked)
            )
            answers = await asyncio.gather(
                *(http.post(path, json={"text": f"m{n}"}) for n in range(MESSAGES))
            )
            assert [answer.status_code for answer in answers] == [201] * MESSAGES
            sent = {answer.json()["message"]["id"] for answer in answers}
            async with asyncio.timeout(20):
                while set(confirmed) != sent:
                    await asyncio.sleep(0.01)
            process.kill()  # at once: nothing gets to shut down or commit late
            process.wait(timeout=10)
            backend.cancel()
    assert len(unacked) == MESSAGES // 2

    with hub_process(db_path) as (url, _process), httpx.Client(trust_env=False) as http:
        agent.url = url
        page = http.get(f"{url}{path}", headers=dev(agent.owner), params={"limit": 100})
        stored = {message["id"] for message in page.json()["messages"]}
        assert sent <= stored  # every message answered 201
        assert set(confirmed.values()) <= stored  # every reply confirmed on the socket
        again = await redelivered(agent)
        assert unacked <= again  # every event not acknowledged comes again


def test_grouped_writes_share_a_commit_and_undo_alone(tmp_path: Path) -> None:
    storage = Storage(tmp_path / "hub.sqlite3")
    done: list[str] = []

    async def turn() -> None:
        with storage.grouped():
            storage.set_meta("kept", "1")
            storage.after_commit(lambda: done.append("kept"))
        with pytest.raises(RuntimeError), storage.grouped():
            storage.set_meta("undone", "1")
            storage.after_commit(lambda: done.append("undone"))
            raise RuntimeError("this block fails")
        assert done == []  # nothing runs before the COMMIT
        await storage.durable()
        assert done == ["kept"]

    asyncio.run(turn())
    assert storage.get_meta("kept") == "1"
    assert storage.get_meta("undone") is None
    storage.close()
