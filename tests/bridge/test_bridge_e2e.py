"""`talkie bridge cuckoo` end to end: the reference hub, the reference Talkie server (demo agent)
and the bridge in-process; the person speaks plain HTTP and watches the client socket."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect

from talkie_tui.bridge.greeting import Greeting
from talkie_tui.devserver.talkie.testmode import SLOW_TEXT
from talkie_tui.protocol.cuckoo.agent_client import LinkEnded
from tests.bridge.conftest import Agent, Person, ServedBy, StartBridge
from tests.helpers import AUTH, TEST_TOKEN

pytestmark = pytest.mark.slow


def _texts(messages: list[dict[str, Any]]) -> list[str]:
    return [m["body"].get("text", "") for m in messages]


def _complete(messages: list[dict[str, Any]]) -> bool:
    return bool(messages) and all(m["status"] == "complete" for m in messages)


async def test_a_question_gets_a_streamed_answer_and_the_card(
    agent: Agent, owner: Person, start_bridge: StartBridge, served_by: ServedBy
) -> None:
    running = await start_bridge(agent, **await served_by(agent))
    feed = await owner.feed()
    try:
        asked = await owner.say(agent.dm, "show me Alfa")
        completed = await feed.wait(
            lambda f: (
                f["type"] == "message.completed"
                and f["data"]["message"]["sender"]["kind"] == "agent"
                and "Alfa" in f["data"]["message"]["body"].get("text", "")
                and f["data"]["message"]["id"] != ""
                and any(
                    g["type"] == "message.started"
                    and g["data"]["message"]["id"] == f["data"]["message"]["id"]
                    for g in feed.frames
                )
            )
        )
        streamed_id = completed["data"]["message"]["id"]
        deltas = [
            f
            for f in feed.frames
            if f["type"] == "message.delta" and f["data"]["message_id"] == streamed_id
        ]
        assert deltas, "the answer came as stream deltas"
        assert (
            "".join(d["data"]["text"] for d in deltas)
            == completed["data"]["message"]["body"]["text"]
        )
        working = [f for f in feed.frames if f["type"] == "activity"]
        assert any(
            f["data"]["state"] == "working" and f["data"].get("label") == "Searching contacts…"
            for f in working
        ), working
    finally:
        await feed.close()
    messages = await owner.agent_messages(agent.dm)
    card, answer = messages[0], messages[1]
    assert card["body"]["text"].startswith("Alfa s.r.o. – ")
    assert "IČO: " in card["body"]["text"]
    assert card["reply_to"]["id"] == asked["id"]
    assert "**Alfa s.r.o.**" in answer["body"]["text"]
    assert answer["status"] == "complete" and not answer["truncated"]
    # The Talkie server's links are plain http on 127.0.0.1: no URL button is made of them.
    assert "buttons" not in card["body"]
    assert any("show me Alfa" in line and "1 card" in line for line in running.lines)


async def test_a_confirm_tap_decides_the_action_on_the_talkie_server(
    agent: Agent, owner: Person, start_bridge: StartBridge, server_url: str
) -> None:
    await start_bridge(agent)
    await owner.say(agent.dm, "add a note to Alfa: call back on Friday")
    messages = await owner.wait_agent_messages(
        agent.dm, lambda found: any("buttons" in m["body"] for m in found) and _complete(found)
    )
    offer = next(m for m in messages if "buttons" in m["body"])
    assert "Add a note to Alfa" in offer["body"]["text"]
    [[confirm, cancel]] = offer["body"]["buttons"]
    assert confirm["label"] == "Confirm" and confirm["id"].endswith(":confirm")
    assert cancel["label"] == "Cancel" and cancel["style"] == "default"  # low risk
    action_id = confirm["id"].split(":")[1]
    await owner.tap(agent.dm, offer["id"], confirm["id"])
    after = await owner.wait_agent_messages(
        agent.dm,
        lambda found: any(m["body"].get("text", "").startswith("Confirmed") for m in found),
    )
    said = next(m for m in after if m["body"]["text"].startswith("Confirmed"))
    assert "done" in said["body"]["text"]
    async with httpx.AsyncClient(timeout=10) as http:
        answer = await http.get(f"{server_url}/api/talkie/actions/{action_id}", headers=AUTH)
    assert answer.status_code == 200, answer.text
    assert answer.json()["status"] == "done"
    # The result card follows as a message of its own.
    result = await owner.wait_agent_messages(
        agent.dm, lambda found: any("Note added to" in t for t in _texts(found))
    )
    assert result


async def test_people_get_the_bridges_words_in_the_agents_language(
    agent: Agent, owner: Person, start_bridge: StartBridge, devserver: Callable[..., str]
) -> None:
    czech = devserver(test_mode=True, dev_token=TEST_TOKEN, demo_agent=True, locale="cs")
    await start_bridge(agent, server=czech)
    await owner.say(agent.dm, "přidej poznámku k Alfě: zavolat v pátek")
    messages = await owner.wait_agent_messages(
        agent.dm, lambda found: any("buttons" in m["body"] for m in found) and _complete(found)
    )
    offer = next(m for m in messages if "buttons" in m["body"])
    assert offer["body"]["text"].startswith("Agent žádá o souhlas: ")
    [[confirm, cancel]] = offer["body"]["buttons"]
    assert (confirm["label"], cancel["label"]) == ("Potvrdit", "Zrušit")


async def _second_step(owner: Person, agent: Agent) -> tuple[str, dict[str, Any]]:
    """Ask to delete a contact and tap its Confirm once: the action's id, and the message of
    the second step the hub then shows."""
    await owner.say(agent.dm, "delete contact Tomáš Dvořák")
    messages = await owner.wait_agent_messages(
        agent.dm, lambda found: any("buttons" in m["body"] for m in found) and _complete(found)
    )
    offer = next(m for m in messages if "buttons" in m["body"])
    [[confirm, cancel]] = offer["body"]["buttons"]
    assert confirm["style"] == "primary" and cancel["style"] == "default"
    await owner.tap(agent.dm, offer["id"], confirm["id"])
    asked = await owner.wait_agent_messages(
        agent.dm, lambda found: any("high-risk" in t for t in _texts(found))
    )
    assert not any(t.startswith("Confirmed") for t in _texts(asked))
    second = next(m for m in asked if "high-risk" in m["body"].get("text", ""))
    return confirm["id"].split(":")[1], second


async def test_a_high_risk_action_takes_a_second_step_in_the_hub(
    agent: Agent, owner: Person, start_bridge: StartBridge, server_url: str
) -> None:
    """A person on a plain hub client taps Confirm once: the hub asks again, nothing is done;
    only "Yes, do it" deletes the contact."""
    await start_bridge(agent)
    action_id, second = await _second_step(owner, agent)
    assert second["body"]["text"].startswith("Delete contact Tomáš Dvořák (Gamma Foods s.r.o.)?")
    [[sure, keep]] = second["body"]["buttons"]
    assert (sure["label"], sure["style"]) == ("Yes, do it", "danger")
    assert (keep["label"], keep["style"]) == ("No, cancel it", "default")
    async with httpx.AsyncClient(timeout=10) as http:
        waiting = await http.get(f"{server_url}/api/talkie/actions/{action_id}", headers=AUTH)
    assert waiting.json()["status"] == "pending"  # one tap decided nothing
    await owner.tap(agent.dm, second["id"], sure["id"])
    await owner.wait_agent_messages(
        agent.dm, lambda found: any(t.startswith("Confirmed") for t in _texts(found))
    )
    async with httpx.AsyncClient(timeout=10) as http:
        done = await http.get(f"{server_url}/api/talkie/actions/{action_id}", headers=AUTH)
    assert done.json()["status"] in ("running", "done")


async def test_the_second_step_can_cancel(
    agent: Agent, owner: Person, start_bridge: StartBridge
) -> None:
    await start_bridge(agent)
    _action_id, second = await _second_step(owner, agent)
    [[_sure, keep]] = second["body"]["buttons"]
    await owner.tap(agent.dm, second["id"], keep["id"])
    await owner.wait_agent_messages(
        agent.dm, lambda found: any(t.startswith("Cancelled") for t in _texts(found))
    )


async def test_a_redelivered_event_gives_no_second_reply(
    agent: Agent, owner: Person, start_bridge: StartBridge
) -> None:
    """The bridge is killed after its reply and before the acknowledgement (and before it
    recorded the event as handled): the hub sends the event again to the next bridge, whose
    sends carry the same idempotency keys, so the person sees the one reply."""
    worked = asyncio.Event()

    async def die_before_ack(event: dict[str, Any]) -> None:
        if event["type"] == "message.created":
            worked.set()
            await asyncio.Event().wait()  # killed here

    first = await start_bridge(agent, before_ack=die_before_ack)
    await owner.say(agent.dm, "talkie-test:echo once only")
    await asyncio.wait_for(worked.wait(), 15)
    await first.stop()
    before = await owner.agent_messages(agent.dm)
    assert _texts(before) == ["once only"]

    second = await start_bridge(agent)
    deadline = asyncio.get_running_loop().time() + 15
    while second.bridge.handled_count < 1:
        assert asyncio.get_running_loop().time() < deadline, second.warnings
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.5)
    after = await owner.agent_messages(agent.dm)
    assert [m["id"] for m in after] == [m["id"] for m in before]
    # And once recorded, a third bridge acknowledges it without any work.
    await second.stop()
    events = await _agent_events(agent)
    assert events[-1]["type"] == "message.created"


async def _agent_events(agent: Agent) -> list[dict[str, Any]]:
    async with httpx.AsyncClient(base_url=agent.hub, timeout=10) as http:
        answer = await http.get(
            "/v1/agent/events", headers={"Authorization": f"Bearer {agent.secret}"}
        )
    assert answer.status_code == 200, answer.text
    return list(answer.json()["events"])


async def test_a_stranger_is_told_once_that_the_agent_is_private(
    hub: str, agent: Agent, owner: Person, start_bridge: StartBridge, served_by: ServedBy
) -> None:
    running = await start_bridge(agent, **await served_by(agent))
    stranger = Person(hub)
    try:
        conversation = await agent.pair(stranger)
        await stranger.say(conversation, "show me Alfa")
        await stranger.say(conversation, "and now?")
        found = await stranger.wait_agent_messages(conversation, lambda found: bool(found))
        await asyncio.sleep(1.0)
        found = await stranger.agent_messages(conversation)
        assert len(found) == 1
        assert "this agent is private" in found[0]["body"]["text"]
        assert any(stranger.id in line and "private" in line for line in running.lines)
        assert any("joined" in line and conversation in line for line in running.lines)
    finally:
        await stranger.aclose()
    # The owner is still served.
    await owner.say(agent.dm, "talkie-test:echo still here")
    await owner.wait_agent_messages(agent.dm, lambda found: "still here" in _texts(found))


async def test_replacing_the_binding_ends_the_bridge_with_4002(
    agent: Agent, start_bridge: StartBridge
) -> None:
    running = await start_bridge(agent)
    await agent.rebind()
    ended = await running.ended(timeout=10)
    assert isinstance(ended, LinkEnded)
    assert "4002" in ended.message and "revoked or replaced" in ended.message


async def test_a_binding_secret_the_hub_does_not_know_is_refused(
    agent: Agent, start_bridge: StartBridge
) -> None:
    old = agent.secret
    await agent.rebind()
    agent.secret = old
    with pytest.raises(Exception) as caught:
        await start_bridge(agent)
    assert "401" in str(caught.value) or "credential" in str(caught.value).lower()


async def test_stop_requested_cancels_the_run(
    agent: Agent, owner: Person, start_bridge: StartBridge, served_by: ServedBy
) -> None:
    running = await start_bridge(agent, **await served_by(agent))
    feed = await owner.feed()
    try:
        await owner.say(agent.dm, "talkie-test:slow")
        started = await feed.wait(lambda f: f["type"] == "message.delta")
        stopped = await owner.http.post(f"/v1/client/conversations/{agent.dm}/stop")
        assert stopped.status_code == 200, stopped.text
        message_id = started["data"]["message_id"]
        deadline = asyncio.get_running_loop().time() + 10
        while not any("stopped" in line for line in running.lines):
            assert asyncio.get_running_loop().time() < deadline, running.lines
            await asyncio.sleep(0.05)
    finally:
        await feed.close()
    [answer] = await owner.agent_messages(agent.dm)
    assert answer["id"] == message_id and answer["truncated"]


async def test_conversation_left_stops_replies(
    hub: str, agent: Agent, owner: Person, start_bridge: StartBridge
) -> None:
    """The hub has no route that blocks an agent yet, so the event is handed to the bridge as
    the socket would (after the DM's own `conversation.joined`)."""
    running = await start_bridge(agent)
    bridge = running.bridge
    deadline = asyncio.get_running_loop().time() + 10
    while not any("joined" in line for line in running.lines):
        assert asyncio.get_running_loop().time() < deadline, running.lines
        await asyncio.sleep(0.05)
    handled = bridge.handled_count
    bridge._on_event(
        {
            "id": "evt_left_test",
            "type": "conversation.left",
            "data": {"conversation": {"id": agent.dm, "kind": "dm"}, "reason": "user_blocked"},
        },
        pushed=False,
    )
    await owner.say(agent.dm, "talkie-test:echo anyone?")
    deadline = asyncio.get_running_loop().time() + 10
    while bridge.handled_count < handled + 2:
        assert asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.3)
    assert await owner.agent_messages(agent.dm) == []
    assert any("left" in line for line in running.lines)


async def test_a_block_stops_the_reply_and_an_unblock_serves_again(
    agent: Agent, owner: Person, start_bridge: StartBridge, served_by: ServedBy
) -> None:
    """The person blocks the agent mid-answer: the hub says `conversation.left` and the bridge
    stops that reply and says so; after an unblock (`conversation.joined`) it answers again."""
    running = await start_bridge(agent, **await served_by(agent))
    feed = await owner.feed()
    try:
        await owner.say(agent.dm, "talkie-test:slow")
        await feed.wait(lambda f: f["type"] == "message.delta")
        blocked = await owner.http.post(f"/v1/client/agents/{agent.id}/block")
        assert blocked.status_code == 204, blocked.text
        deadline = asyncio.get_running_loop().time() + 10
        while not any("no more replies there" in line for line in running.lines):
            assert asyncio.get_running_loop().time() < deadline, running.lines
            await asyncio.sleep(0.05)
        [cut] = await owner.agent_messages(agent.dm)
        assert cut["truncated"] and cut["body"].get("text", "") != SLOW_TEXT
        unblocked = await owner.http.delete(f"/v1/client/agents/{agent.id}/block")
        assert unblocked.status_code == 204, unblocked.text
        while sum("joined" in line for line in running.lines) < 2:
            assert asyncio.get_running_loop().time() < deadline + 10, running.lines
            await asyncio.sleep(0.05)
        await owner.say(agent.dm, "talkie-test:echo welcome back")
        found = await owner.wait_agent_messages(
            agent.dm, lambda found: "welcome back" in _texts(found)
        )
    finally:
        await feed.close()
    assert [m["body"].get("text", "") for m in found][-1] == "welcome back"


async def test_a_failed_run_is_told_in_the_servers_words(
    agent: Agent, owner: Person, start_bridge: StartBridge, served_by: ServedBy
) -> None:
    running = await start_bridge(agent, **await served_by(agent))
    await owner.say(agent.dm, "talkie-test:error")
    found = await owner.wait_agent_messages(agent.dm, lambda found: _complete(found))
    [said] = found
    assert said["body"]["text"].startswith("The agent could not answer: ")
    assert "(upstream_unavailable)" in said["body"]["text"]
    deadline = asyncio.get_running_loop().time() + 5
    while not any("upstream_unavailable" in line for line in running.warnings):
        assert asyncio.get_running_loop().time() < deadline, running.warnings
        await asyncio.sleep(0.05)


async def test_one_conversation_is_one_talkie_thread(
    agent: Agent, owner: Person, start_bridge: StartBridge, server_url: str
) -> None:
    await start_bridge(agent)
    first = await owner.say(agent.dm, "talkie-test:echo one")
    await owner.wait_agent_messages(agent.dm, lambda found: "one" in _texts(found))
    second = await owner.say(agent.dm, "talkie-test:echo two")
    await owner.wait_agent_messages(agent.dm, lambda found: "two" in _texts(found))
    async with httpx.AsyncClient(timeout=10) as http:
        threads = (await http.get(f"{server_url}/api/talkie/threads", headers=AUTH)).json()
        [thread] = [t for t in threads["threads"] if t["title"].startswith("talkie-test:echo")]
        history = (
            await http.get(f"{server_url}/api/talkie/threads/{thread['id']}", headers=AUTH)
        ).json()
    asked = [m["id"] for m in history["messages"] if m["role"] == "user"]
    # The hub's message ids are the run's message ids.
    assert asked == [first["id"], second["id"]]


async def test_a_gap_is_filled_from_the_events_since_the_last_handled(
    agent: Agent, owner: Person, start_bridge: StartBridge
) -> None:
    """An event the hub no longer pushes (here acknowledged by another socket, as a lost
    backend might have) is found by `GET /events?since=` when the bridge connects again."""
    first = await start_bridge(agent)
    await owner.say(agent.dm, "talkie-test:echo handled")
    await owner.wait_agent_messages(agent.dm, lambda found: "handled" in _texts(found))
    deadline = asyncio.get_running_loop().time() + 5
    while first.bridge.handled_count < 2:  # the DM's join and the message
        assert asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.05)
    await first.stop()
    await owner.say(agent.dm, "talkie-test:echo in the gap")
    url = agent.hub.replace("http://", "ws://") + "/v1/agent/socket"
    async with connect(
        url, additional_headers={"Authorization": f"Bearer {agent.secret}"}, proxy=None
    ) as ws:
        event = json.loads(await asyncio.wait_for(ws.recv(), 5))
        assert event["type"] == "message.created"
        await ws.send(json.dumps({"ack": event["id"]}))
        await asyncio.sleep(0.2)
    second = await start_bridge(agent)
    await owner.wait_agent_messages(agent.dm, lambda found: "in the gap" in _texts(found))
    assert any("caught up on 1 event" in line for line in second.lines), second.lines


async def test_a_sent_offer_can_be_undone_with_its_button(
    agent: Agent, owner: Person, start_bridge: StartBridge, server_url: str
) -> None:
    await start_bridge(agent)
    await owner.say(agent.dm, "send the offer to Alfa")
    messages = await owner.wait_agent_messages(
        agent.dm, lambda found: any("buttons" in m["body"] for m in found) and _complete(found)
    )
    offer = next(m for m in messages if "buttons" in m["body"])
    [[confirm, _cancel]] = offer["body"]["buttons"]
    await owner.tap(agent.dm, offer["id"], confirm["id"])
    after = await owner.wait_agent_messages(
        agent.dm, lambda found: any(t.startswith("Confirmed") for t in _texts(found))
    )
    said = next(m for m in after if m["body"]["text"].startswith("Confirmed"))
    assert "running" in said["body"]["text"] and "undo it until" in said["body"]["text"]
    [[undo]] = said["body"]["buttons"]
    assert undo["label"] == "Undo" and undo["style"] == "primary"  # the safe way: one tap
    await owner.tap(agent.dm, said["id"], undo["id"])
    await owner.wait_agent_messages(
        agent.dm, lambda found: any(t.startswith("Cancelled") for t in _texts(found))
    )
    action_id = confirm["id"].split(":")[1]
    async with httpx.AsyncClient(timeout=10) as http:
        answer = await http.get(f"{server_url}/api/talkie/actions/{action_id}", headers=AUTH)
    assert answer.json()["status"] == "cancelled"


async def _confirm_the_offer(owner: Person, agent: Agent) -> tuple[str, dict[str, Any]]:
    """Ask for the offer to Alfa and tap Confirm: the action's id and the "Confirmed" message."""
    await owner.say(agent.dm, "send the offer to Alfa")
    messages = await owner.wait_agent_messages(
        agent.dm, lambda found: any("buttons" in m["body"] for m in found) and _complete(found)
    )
    offer = next(m for m in messages if "buttons" in m["body"])
    [[confirm, _cancel]] = offer["body"]["buttons"]
    await owner.tap(agent.dm, offer["id"], confirm["id"])
    after = await owner.wait_agent_messages(
        agent.dm, lambda found: any(t.startswith("Confirmed") for t in _texts(found))
    )
    said = next(m for m in after if m["body"]["text"].startswith("Confirmed"))
    assert "running" in said["body"]["text"] and "undo it until" in said["body"]["text"]
    return confirm["id"].split(":")[1], said


def _sent(texts: list[str]) -> list[str]:
    return [t for t in texts if "was sent to" in t]


async def test_an_action_in_its_undo_window_is_followed_to_its_result(
    agent: Agent, owner: Person, start_bridge: StartBridge, devserver: Callable[..., str]
) -> None:
    quick = devserver(test_mode=True, dev_token=TEST_TOKEN, demo_agent=True, undo_seconds=1.0)
    running = await start_bridge(agent, server=quick)
    action_id, said = await _confirm_the_offer(owner, agent)
    # The window ends on the Talkie server by itself; the bridge reads the action a second
    # later and sends the result card (the thread's "Offer sent") as a message.
    found = await owner.wait_agent_messages(agent.dm, lambda found: bool(_sent(_texts(found))))
    [result] = _sent(_texts(found))
    assert "Offer N-2026-" in result and "To: " in result
    async with httpx.AsyncClient(timeout=10) as http:
        answer = await http.get(f"{quick}/api/talkie/actions/{action_id}", headers=AUTH)
    assert answer.json()["status"] == "done"
    # The Undo button is still on the sent message: a tap now is told, politely, it is late.
    [[undo]] = said["body"]["buttons"]
    await owner.tap(agent.dm, said["id"], undo["id"])
    late = await owner.wait_agent_messages(
        agent.dm, lambda found: any(t.startswith("Sorry, the time to undo") for t in _texts(found))
    )
    assert "— done." in next(t for t in _texts(late) if t.startswith("Sorry"))
    await asyncio.sleep(1.5)
    assert len(_sent(_texts(await owner.agent_messages(agent.dm)))) == 1
    state = running.bridge.state
    assert state.follows() == []
    assert any("ended after its undo window → done" in line for line in running.lines)


async def test_an_action_followed_across_a_restart_is_told_once(
    agent: Agent, owner: Person, start_bridge: StartBridge, devserver: Callable[..., str]
) -> None:
    quick = devserver(test_mode=True, dev_token=TEST_TOKEN, demo_agent=True, undo_seconds=2.0)
    first = await start_bridge(agent, server=quick)
    await _confirm_the_offer(owner, agent)
    [follow] = first.bridge.state.follows()
    await first.stop()  # down while the window ends
    await asyncio.sleep(max(0.0, follow.undo_until - time.time()) + 0.5)
    assert _sent(_texts(await owner.agent_messages(agent.dm))) == []
    second = await start_bridge(agent, server=quick)
    await owner.wait_agent_messages(agent.dm, lambda found: bool(_sent(_texts(found))))
    await asyncio.sleep(1.0)
    assert len(_sent(_texts(await owner.agent_messages(agent.dm)))) == 1
    assert second.bridge.state.follows() == []


async def test_an_undo_in_time_ends_the_follow_with_nothing_more_said(
    agent: Agent, owner: Person, start_bridge: StartBridge, devserver: Callable[..., str]
) -> None:
    quick = devserver(test_mode=True, dev_token=TEST_TOKEN, demo_agent=True, undo_seconds=1.5)
    running = await start_bridge(agent, server=quick)
    _action_id, said = await _confirm_the_offer(owner, agent)
    [[undo]] = said["body"]["buttons"]
    await owner.tap(agent.dm, said["id"], undo["id"])
    await owner.wait_agent_messages(
        agent.dm, lambda found: any(t.startswith("Cancelled") for t in _texts(found))
    )
    assert running.bridge.state.follows() == []
    await asyncio.sleep(2.5)
    texts = _texts(await owner.agent_messages(agent.dm))
    assert _sent(texts) == [] and texts[-1].startswith("Cancelled")


async def test_a_new_conversation_is_greeted_once_with_starters_to_tap(
    agent: Agent, owner: Person, start_bridge: StartBridge
) -> None:
    greeting = Greeting("Hi, ask me anything.", ("What meetings do I have today?", "Find Novák"))
    first = await start_bridge(agent, greeting=greeting)
    found = await owner.wait_agent_messages(agent.dm, lambda found: bool(found))
    assert _texts(found) == ["Hi, ask me anything."]
    labels = [reply["label"] for reply in found[0]["body"]["quick_replies"]]
    assert labels == ["What meetings do I have today?", "Find Novák"]
    await first.stop()
    second = await start_bridge(agent, greeting=greeting)  # the join is not greeted twice
    await owner.say(agent.dm, "talkie-test:echo after the greeting")
    found = await owner.wait_agent_messages(
        agent.dm, lambda found: "after the greeting" in " ".join(_texts(found))
    )
    assert _texts(found).count("Hi, ask me anything.") == 1
    await second.stop()
