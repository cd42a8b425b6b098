"""One agent, one person, one conversation: nobody reaches into what is not theirs."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.cuckoo_peer.agent import is_person_message
from tests.cuckoo_peer.conftest import LEASE
from tests.cuckoo_peer.person import error_of
from tests.cuckoo_peer.test_buttons import _offer, offer_buttons


async def test_events_since_another_agents_event_leak_nothing(chat_with: Any) -> None:
    mine = await chat_with()
    theirs = await chat_with()
    await theirs.person.say(theirs.conversation_id, "private")
    event = await theirs.backend.wait_event(is_person_message)
    answer = await mine.backend.events_since(event["id"])
    if answer.status_code == 200:
        for e in answer.json()["events"]:
            assert e["agent_id"] == mine.agent["id"], e
            assert "private" not in str(e)
    else:
        assert answer.status_code in (403, 404, 422), answer.text
        error_of(answer)
    everything = await mine.backend.events_since(None)
    assert all(e["agent_id"] == mine.agent["id"] for e in everything.json()["events"])


async def test_an_ack_from_another_agent_does_not_count(chat_with: Any) -> None:
    victim = await chat_with(ack=False)
    other = await chat_with()
    sent = await victim.person.say(victim.conversation_id, "mine to ack")
    event = await victim.backend.wait_event(
        lambda e: is_person_message(e) and e["data"]["message"]["id"] == sent["id"]
    )
    await other.backend.ack(event["id"])
    await victim.backend.wait_until(
        lambda: [e["id"] for e in victim.backend.received].count(event["id"]) >= 2,
        timeout=LEASE + 20,
    )
    assert other.backend.connected  # and the stray ack broke nothing


async def test_an_agent_cannot_read_another_conversation(chat_with: Any) -> None:
    mine = await chat_with(connect=False)
    theirs = await chat_with(connect=False)
    await theirs.person.say(theirs.conversation_id, "private")
    for path in (
        f"/v1/agent/conversations/{theirs.conversation_id}",
        f"/v1/agent/conversations/{theirs.conversation_id}/messages",
    ):
        answer = await mine.backend.http.get(path)
        assert answer.status_code in (403, 404), (path, answer.text)
        error_of(answer)
        assert "private" not in answer.text
    typing = await mine.backend.http.post(
        f"/v1/agent/conversations/{theirs.conversation_id}/typing", json={"state": "start"}
    )
    assert typing.status_code in (403, 404), typing.text


async def test_a_person_cannot_reach_into_another_persons_conversation(chat_with: Any) -> None:
    first = await chat_with(offer_buttons)
    second = await chat_with()
    await first.person.say(first.conversation_id, "hello")
    offer = await _offer(first)
    intruder = second.person
    answer = await intruder.http.get(f"/v1/client/conversations/{first.conversation_id}/messages")
    assert answer.status_code in (403, 404), answer.text
    error_of(answer)
    answer = await intruder.send(first.conversation_id, "let me in")
    assert answer.status_code in (403, 404), answer.text
    error_of(answer)
    # Nor take a button of a message in a conversation that is not the tap's.
    answer = await intruder.tap(second.conversation_id, offer["id"], "raise")
    assert answer.status_code in (403, 404, 422), answer.text
    error_of(answer)
    await asyncio.sleep(0.3)
    source = await first.person.message(first.conversation_id, offer["id"])
    assert "selected_button_id" not in source["body"]
