"""At-least-once delivery: an unacknowledged event comes again; the peer works once."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.cuckoo_peer.agent import echo, is_person_message
from tests.cuckoo_peer.conftest import LEASE

# Past the lease, with room for a loaded machine and the hub's sweep interval.
AGAIN = LEASE + 20

lease_bound = pytest.mark.slow if LEASE >= 30 else (lambda f: f)


def _echoes(page: dict[str, Any], text: str) -> list[dict[str, Any]]:
    return [m for m in page["messages"] if m["body"].get("text") == f"echo: {text}"]


@lease_bound
async def test_a_backend_killed_before_its_ack_gets_the_event_again(chat_with: Any) -> None:
    chat = await chat_with(echo, ack=False)
    backend = chat.backend
    sent = await chat.person.say(chat.conversation_id, "crash after the work")
    event = await backend.wait_event(
        lambda e: is_person_message(e) and e["data"]["message"]["id"] == sent["id"]
    )
    await backend.wait_until(lambda: event["id"] in backend.handled)
    await backend.kill()  # the work is done, the ack never went out
    assert event["id"] not in backend.acked

    backend.auto_ack = True
    await backend.connect()
    await backend.wait_until(
        lambda: [e["id"] for e in backend.received].count(event["id"]) >= 2, timeout=AGAIN
    )
    again = [e for e in backend.received if e["id"] == event["id"]]
    assert again[1] == again[0]  # the same event, not a copy with a new face
    await backend.wait_until(lambda: event["id"] in backend.acked)

    # The peer tolerated the redelivery: the reply exists once.
    page = await chat.person.history(chat.conversation_id)
    assert len(_echoes(page, "crash after the work")) == 1, page


@lease_bound
async def test_a_fresh_backend_gets_what_a_dead_one_leased(chat_with: Any, backends: Any) -> None:
    chat = await chat_with(ack=False)
    dead = chat.backend
    sent = await chat.person.say(chat.conversation_id, "lost in a crash")
    event = await dead.wait_event(
        lambda e: is_person_message(e) and e["data"]["message"]["id"] == sent["id"]
    )
    await dead.kill()

    fresh = backends(chat.secret, handler=echo)
    await fresh.connect()
    got = await fresh.wait_event(lambda e: e["id"] == event["id"], timeout=AGAIN)
    assert got["data"]["message"]["body"]["text"] == "lost in a crash"
    await fresh.wait_until(lambda: event["id"] in fresh.acked)
    page = await chat.person.history(chat.conversation_id)
    assert len(_echoes(page, "lost in a crash")) == 1


@lease_bound
async def test_an_unacknowledged_event_comes_again_on_the_same_socket(chat_with: Any) -> None:
    chat = await chat_with(ack=False)
    backend = chat.backend
    sent = await chat.person.say(chat.conversation_id, "ack me")
    event = await backend.wait_event(
        lambda e: is_person_message(e) and e["data"]["message"]["id"] == sent["id"]
    )
    await backend.wait_until(
        lambda: [e["id"] for e in backend.received].count(event["id"]) >= 2, timeout=AGAIN
    )
    assert backend.connects == 1
    assert len(backend.handled) == len({e["id"] for e in backend.received})  # work done once


@lease_bound
async def test_an_acknowledged_event_is_not_sent_again(chat_with: Any) -> None:
    chat = await chat_with()
    backend = chat.backend
    sent = await chat.person.say(chat.conversation_id, "once is enough")
    event = await backend.wait_event(
        lambda e: is_person_message(e) and e["data"]["message"]["id"] == sent["id"]
    )
    await backend.wait_until(lambda: event["id"] in backend.acked)
    await asyncio.sleep(LEASE + 5)
    assert [e["id"] for e in backend.received].count(event["id"]) == 1
    # Answering pings (the library does) keeps the socket: still the first connection.
    assert backend.connected and backend.connects == 1


async def test_a_dropped_socket_reconnects_and_nothing_is_lost(chat_with: Any) -> None:
    chat = await chat_with(echo, reconnect=True)
    backend = chat.backend
    await backend.wait_until(lambda: len(backend.acked) >= 2)  # both joins
    await backend.drop()
    for text in ("while", "reconnecting"):
        await chat.person.say(chat.conversation_id, text)
    await backend.wait_until(lambda: backend.connects >= 2, timeout=10)
    await backend.wait_until(
        lambda: (
            {"while", "reconnecting"}
            <= {e["data"]["message"]["body"]["text"] for e in backend.events_of("message.created")}
        ),
        timeout=AGAIN,
    )
    assert backend.close_codes[0] not in (4001, 4002) and backend.final is None

    async def echoed() -> list[Any]:
        page = await chat.person.history(chat.conversation_id)
        return [m for m in page["messages"] if m["body"].get("text", "").startswith("echo: ")]

    deadline = asyncio.get_running_loop().time() + 10
    while len(await echoed()) < 2 and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.1)
    assert sorted(m["body"]["text"] for m in await echoed()) == [
        "echo: reconnecting",
        "echo: while",
    ]
