"""`talkie bridge cuckoo --webhook`: a webhook binding of the reference hub (development mode,
which posts to 127.0.0.1) served by the bridge in-process: the hub's signed posts received,
checked and answered at once, the replies sent over the agent API's HTTP routes, the work kept
in the state file until it is done, across a restart too."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import time
from typing import Any

import httpx
import pytest

from talkie_tui.bridge.webhook import listen_address, signature_problem
from talkie_tui.devserver.cuckoo.ids import new_id
from talkie_tui.devserver.talkie.testmode import SLOW_TEXT
from tests.bridge.conftest import Agent, Person, StartBridge

SECRET = "bnd_sec_" + "b" * 52


def _signed(secret: str, body: bytes, timestamp: int | None = None) -> dict[str, str]:
    """The headers the hub sends with `body` (as the spec says, not as the bridge computes)."""
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    key = hashlib.sha256(secret.encode()).digest()
    digest = hmac.new(key, stamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    return {"X-Cuckoo-Timestamp": stamp, "X-Cuckoo-Signature": f"sha256={digest}"}


def test_the_signature_is_checked_as_the_spec_says() -> None:
    body = b'{"id": "evt_1"}'
    now = time.time()
    good = _signed(SECRET, body, int(now))
    stamp, signature = good["X-Cuckoo-Timestamp"], good["X-Cuckoo-Signature"]
    assert signature_problem(SECRET, stamp, body, signature, now) is None
    assert "match" in str(signature_problem(SECRET, stamp, body + b" ", signature, now))
    other = _signed("bnd_sec_" + "c" * 52, body, int(now))["X-Cuckoo-Signature"]
    assert "match" in str(signature_problem(SECRET, stamp, body, other, now))
    # A timestamp far from now is refused even when the signature over it is right.
    old = _signed(SECRET, body, int(now) - 3600)
    assert "s from now" in str(
        signature_problem(SECRET, old["X-Cuckoo-Timestamp"], body, old["X-Cuckoo-Signature"], now)
    )
    assert signature_problem(SECRET, None, body, signature, now) is not None
    assert signature_problem(SECRET, "soon", body, signature, now) is not None


@pytest.mark.parametrize(
    ("text", "address"),
    [("127.0.0.1:8787", ("127.0.0.1", 8787)), ("[::1]:0", ("::1", 0)), ("h.lan:80", ("h.lan", 80))],
)
def test_a_listening_address_is_host_and_port(text: str, address: tuple[str, int]) -> None:
    assert listen_address(text) == address


@pytest.mark.parametrize("text", ["8787", "127.0.0.1", "127.0.0.1:http", ":80", "h:70000"])
def test_what_is_not_host_and_port_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="HOST:PORT"):
        listen_address(text)


def _from_agent(frame: dict[str, Any]) -> bool:
    return frame["data"].get("message", {}).get("sender", {}).get("kind") == "agent"


@pytest.mark.slow
async def test_a_question_gets_a_streamed_answer_over_the_webhook(
    agent: Agent, owner: Person, start_bridge: StartBridge
) -> None:
    address = await agent.bind_webhook()
    running = await start_bridge(agent, webhook=address)
    assert any(f"http://127.0.0.1:{address[1]}" in line for line in running.lines)
    feed = await owner.feed()
    try:
        asked = await owner.say(agent.dm, "talkie-test:echo Answered over HTTP, in pieces.")
        completed = await feed.wait(lambda f: f["type"] == "message.completed" and _from_agent(f))
        message = completed["data"]["message"]
        assert message["body"]["text"] == "Answered over HTTP, in pieces."
        assert message["reply_to"]["id"] == asked["id"]
        deltas = [
            f["data"]["text"]
            for f in feed.frames
            if f["type"] == "message.delta" and f["data"]["message_id"] == message["id"]
        ]
        assert "".join(deltas) == message["body"]["text"], "streamed through append"
        states = [f["data"]["state"] for f in feed.frames if f["type"] == "activity"]
        await feed.wait(lambda f: f["type"] == "activity" and f["data"]["state"] == "idle")
        assert "thinking" in states
    finally:
        await feed.close()
    await asyncio.sleep(0.3)
    assert len(await owner.agent_messages(agent.dm)) == 1
    assert running.bridge.state.pending() == []


@pytest.mark.slow
async def test_an_action_offered_over_the_webhook_is_decided_by_a_tap(
    agent: Agent, owner: Person, start_bridge: StartBridge
) -> None:
    await start_bridge(agent, webhook=await agent.bind_webhook())
    await owner.say(agent.dm, "add a note to Alfa: call back on Friday")
    messages = await owner.wait_agent_messages(
        agent.dm, lambda found: any("buttons" in m["body"] for m in found)
    )
    offer = next(m for m in messages if "buttons" in m["body"])
    [[confirm, _cancel]] = offer["body"]["buttons"]
    await owner.tap(agent.dm, offer["id"], confirm["id"])
    after = await owner.wait_agent_messages(
        agent.dm,
        lambda found: any(m["body"].get("text", "").startswith("Confirmed") for m in found),
    )
    said = next(m for m in after if m["body"]["text"].startswith("Confirmed"))
    assert "done" in said["body"]["text"]


@pytest.mark.slow
async def test_only_the_hubs_signed_posts_are_taken(
    agent: Agent, start_bridge: StartBridge
) -> None:
    address = await agent.bind_webhook()
    running = await start_bridge(agent, webhook=address)
    assert running.bridge.receiver is not None and running.bridge.receiver.url is not None
    url = running.bridge.receiver.url + "/cuckoo"
    conversation = new_id("cnv")
    event = {
        "id": new_id("evt"),
        "type": "conversation.joined",
        "created_at": "2026-01-01T00:00:00Z",
        "agent_id": agent.id,
        "data": {"conversation": {"id": conversation, "kind": "dm"}, "participants": []},
    }
    body = json.dumps(event).encode()
    headers = {"Content-Type": "application/json", "X-Cuckoo-Event-Id": event["id"]}
    async with httpx.AsyncClient(timeout=10, trust_env=False) as http:

        async def post(content: bytes, extra: dict[str, str]) -> int:
            answer = await http.post(url, content=content, headers={**headers, **extra})
            return answer.status_code

        assert await post(body, {}) == 401
        assert await post(body, _signed("bnd_sec_" + "c" * 52, body)) == 401
        assert await post(body, _signed(agent.secret, body, int(time.time()) - 3600)) == 401
        assert await post(b"[1, 2]", _signed(agent.secret, b"[1, 2]")) == 422
        assert not any(conversation in line for line in running.lines)
        assert any("refused a POST (401)" in line for line in running.warnings)

        assert await post(body, _signed(agent.secret, body)) == 204
        deadline = time.monotonic() + 10
        while not running.bridge.state.is_handled(event["id"]):
            assert time.monotonic() < deadline
            await asyncio.sleep(0.02)
        handled = running.bridge.handled_count
        # The same post again (a retry after a lost answer) is taken and nothing is redone.
        assert await post(body, _signed(agent.secret, body)) == 204
        await asyncio.sleep(0.2)
    assert running.bridge.handled_count == handled
    assert sum(conversation in line for line in running.lines) == 1


@pytest.mark.slow
async def test_an_event_taken_before_a_restart_is_answered_after_it(
    agent: Agent, owner: Person, start_bridge: StartBridge
) -> None:
    """The hub had its 2xx as soon as the event arrived, so it does not post it again: the
    bridge stopped mid-answer finishes it after its restart, from the state file, in the one
    message the person already sees growing."""
    address = await agent.bind_webhook()
    first = await start_bridge(agent, webhook=address)
    feed = await owner.feed()
    try:
        await owner.say(agent.dm, "talkie-test:slow")
        await feed.wait(lambda f: f["type"] == "message.delta")
    finally:
        await feed.close()
    await first.stop()
    assert len(first.bridge.state.pending()) == 1
    second = await start_bridge(agent, webhook=address)
    assert any("1 event received before a restart" in line for line in second.lines)
    found = await owner.wait_agent_messages(
        agent.dm, lambda found: bool(found) and found[-1]["status"] == "complete", timeout=30
    )
    assert [m["body"]["text"] for m in found] == [SLOW_TEXT]
    assert second.bridge.state.pending() == []
