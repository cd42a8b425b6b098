"""The agent socket, from the protocol text: events, acks, sends by cid, one socket per agent."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import re
from typing import Any

from tests.cuckoo_peer.agent import SocketRefused, echo, is_person_message
from tests.cuckoo_peer.conftest import LEASE
from tests.cuckoo_peer.person import error_of, new_id

EVENT_TYPES = {"message.created", "conversation.joined", "conversation.left"}


async def test_echo_over_the_socket(chat_with: Any) -> None:
    chat = await chat_with(echo)
    backend = chat.backend
    joined = await backend.wait_event(
        lambda e: (
            e["type"] == "conversation.joined"
            and e["data"]["conversation"]["id"] == chat.conversation_id
        )
    )
    assert joined["data"]["conversation"] == {"id": chat.conversation_id, "kind": "dm"}
    assert joined["id"].startswith("evt_")
    assert joined["agent_id"] == chat.agent["id"]

    sent = await chat.person.say(chat.conversation_id, "hello there")
    event = await backend.wait_event(
        lambda e: is_person_message(e) and e["data"]["message"]["id"] == sent["id"]
    )
    assert set(event) == {"id", "type", "created_at", "agent_id", "data"}
    message = event["data"]["message"]
    assert message["body"]["text"] == "hello there"
    assert message["sender"]["id"] == chat.person.user_id
    assert message["status"] == "complete"
    assert message["truncated"] is False
    assert {"id", "sender", "body", "status", "truncated", "created_at"} <= set(message)
    assert "conversation_id" not in message  # the conversation is beside it, in data
    assert isinstance(message.get("signature"), str) and message["signature"]
    assert "attachments" not in message["body"]  # empty fields are omitted, not null
    assert event["data"]["conversation"]["id"] == chat.conversation_id

    # The work is done, then the event is acknowledged.
    await backend.wait_until(lambda: event["id"] in backend.acked)
    page = await chat.person.history(chat.conversation_id)
    echoed = [m for m in page["messages"] if m["body"].get("text") == "echo: hello there"]
    assert len(echoed) == 1, page
    assert echoed[0]["sender"]["kind"] == "agent"
    assert echoed[0]["reply_to"]["id"] == sent["id"]

    # Never your own messages: only the person's message and the join arrived.
    await asyncio.sleep(0.5)
    assert {e["type"] for e in backend.received} <= EVENT_TYPES
    for e in backend.events_of("message.created"):
        assert e["data"]["message"]["sender"]["kind"] == "user", e


async def test_send_by_cid_matches_replies_and_idempotency(chat_with: Any) -> None:
    chat = await chat_with()
    backend = chat.backend
    first, second = await asyncio.gather(
        backend.send(chat.conversation_id, "one"), backend.send(chat.conversation_id, "two")
    )
    assert first["ok"] and second["ok"], (first, second)
    assert first["message"]["body"]["text"] == "one"
    assert second["message"]["body"]["text"] == "two"
    assert first["reply_to_cid"] != second["reply_to_cid"]

    again = [
        await backend.send(chat.conversation_id, "once", idempotency_key="k-1") for _ in range(2)
    ]
    assert all(r["ok"] for r in again), again
    assert again[0]["message"]["id"] == again[1]["message"]["id"]
    page = await chat.person.history(chat.conversation_id)
    assert [m["body"].get("text") for m in page["messages"]].count("once") == 1


async def test_a_frame_that_is_not_json_is_refused_and_the_socket_stays(chat_with: Any) -> None:
    """The real hub drops such a frame in silence; the reference hub answers it with its error
    (`invalid_json`, with no `cid` to answer), so that an agent's author sees why (README)."""
    chat = await chat_with()
    backend = chat.backend
    await backend.send_raw("{this is not json")
    reply = await backend.send(chat.conversation_id, "still here")
    assert reply["ok"], reply
    assert backend.connected
    [refused] = backend.stray
    assert refused["ok"] is False and refused["error"]["code"] == "invalid_json"
    assert refused["reply_to_cid"] is None


async def test_a_refused_send_answers_ok_false_with_an_error(chat_with: Any) -> None:
    chat = await chat_with()
    reply = await chat.backend.send(
        chat.conversation_id, "pick", buttons=[[{"id": "a b", "label": "bad id"}]]
    )
    assert reply["ok"] is False, reply
    assert reply["error"]["code"] == "invalid_buttons", reply
    # And a conversation the agent is not in.
    reply = await chat.backend.send(new_id("cnv"), "hello?")
    assert reply["ok"] is False, reply
    assert chat.backend.connected


async def test_one_socket_per_agent_the_older_gets_4001(chat_with: Any, backends: Any) -> None:
    chat = await chat_with(echo, reconnect=True)
    older = chat.backend
    await older.wait_event(lambda e: e["type"] == "conversation.joined")
    newer = backends(chat.secret, handler=echo)
    await newer.connect()
    await older.wait_until(lambda: older.final == 4001)
    assert not older.connected

    # 4001 is final: the older backend does not come back to take the socket again.
    await asyncio.sleep(1.5)
    assert older.connects == 1
    assert newer.connected and newer.final is None
    sent = await chat.person.say(chat.conversation_id, "who answers?")
    await newer.wait_event(lambda e: e["data"].get("message", {}).get("id") == sent["id"])
    assert all(e["data"].get("message", {}).get("id") != sent["id"] for e in older.received)


async def test_a_replaced_binding_closes_the_socket_with_4002(
    chat_with: Any, backends: Any
) -> None:
    chat = await chat_with(reconnect=True)
    backend = chat.backend
    await backend.wait_event(lambda e: e["type"] == "conversation.joined")
    _binding, new_secret = await chat.owner.bind(chat.agent["id"], "socket")
    assert new_secret != chat.secret
    await backend.wait_until(lambda: backend.final == 4002, timeout=50)
    await asyncio.sleep(1.0)
    assert backend.connects == 1  # final: no reconnect

    fresh = backends(new_secret)
    await fresh.connect()
    sent = await chat.person.say(chat.conversation_id, "after the switch")
    await fresh.wait_event(lambda e: e["data"].get("message", {}).get("id") == sent["id"])


async def test_catch_up_over_http_with_since(chat_with: Any) -> None:
    chat = await chat_with()
    backend = chat.backend
    for text in ("first", "second", "third"):
        await chat.person.say(chat.conversation_id, text)
    # Two joins (the owner's own chat with a new agent, then the person's) and three messages.
    await backend.wait_until(lambda: len(backend.acked) >= 5)
    ids = [e["id"] for e in backend.received]
    assert len(ids) == 5, backend.received

    # Events come back over HTTP whatever their delivery state (these are all acknowledged).
    answer = await backend.events_since(ids[0])
    assert answer.status_code == 200, answer.text
    later = answer.json()["events"]
    assert [e["id"] for e in later] == ids[1:]
    assert later[0]["type"] == "conversation.joined"
    texts = [e["data"]["message"]["body"]["text"] for e in later[1:]]
    assert texts == ["first", "second", "third"]
    assert later == backend.received[1:]

    answer = await backend.events_since(ids[-1])
    assert answer.status_code == 200 and answer.json()["events"] == []

    answer = await backend.events_since(ids[1])
    assert [e["id"] for e in answer.json()["events"]] == ids[2:]


async def test_catch_up_after_being_away(chat_with: Any) -> None:
    """Events that happened while no socket was open come on connect, in order."""
    chat = await chat_with(connect=False)
    backend = chat.backend
    for text in ("while", "you", "were", "away"):
        await chat.person.say(chat.conversation_id, text)
    await backend.connect()
    await backend.wait_until(lambda: len(backend.received) >= 6)
    assert [e["type"] for e in backend.received[:2]] == ["conversation.joined"] * 2
    texts = [e["data"]["message"]["body"]["text"] for e in backend.received[2:6]]
    assert texts == ["while", "you", "were", "away"]


async def test_the_join_names_the_code_it_came_from(chat_with: Any) -> None:
    chat = await chat_with()
    joined = await chat.backend.wait_event(
        lambda e: (
            e["type"] == "conversation.joined"
            and e["data"]["conversation"]["id"] == chat.conversation_id
        )
    )
    token = joined["data"]["pair_token"]
    assert token["id"].startswith("tok_"), token
    assert token["payload"] is None  # the code carried no payload
    kinds = {p["kind"] for p in joined["data"]["participants"]}
    assert kinds == {"user", "agent"}, joined["data"]["participants"]


async def test_the_agent_http_views(chat_with: Any) -> None:
    chat = await chat_with(echo)
    backend = chat.backend
    me = await backend.me()
    assert me["agent"]["id"] == chat.agent["id"]
    first = await chat.person.say(chat.conversation_id, "one")
    await backend.wait_until(lambda: first["id"] in _handled_messages(backend))
    second = await chat.person.say(chat.conversation_id, "two")
    await backend.wait_until(lambda: second["id"] in _handled_messages(backend))

    answer = await backend.http.get(f"/v1/agent/conversations/{chat.conversation_id}")
    assert answer.status_code == 200, answer.text
    conversation = answer.json()["conversation"]
    assert conversation["id"] == chat.conversation_id
    ids = {p["id"] for p in conversation["participants"]}
    assert {chat.person.user_id, chat.agent["id"]} <= ids

    answer = await backend.http.get(f"/v1/agent/conversations/{chat.conversation_id}/messages")
    assert answer.status_code == 200, answer.text
    messages = answer.json()["messages"]
    texts = [m["body"].get("text") for m in messages]
    assert texts == ["echo: two", "two", "echo: one", "one"], texts  # newest first
    assert all(isinstance(m.get("signature"), str) for m in messages)
    by_id = {m["id"]: m for m in messages}
    assert by_id[first["id"]]["sender"]["kind"] == "user"
    assert by_id[second["id"]]["body"] == {"text": "two"}


async def test_typing_over_http_and_the_socket(chat_with: Any) -> None:
    chat = await chat_with()
    path = f"/v1/agent/conversations/{chat.conversation_id}/typing"
    for state in ("start", "stop"):
        answer = await chat.backend.http.post(path, json={"state": state})
        assert answer.status_code == 204, answer.text
    answer = await chat.backend.http.post(path, json={"state": "dancing"})
    assert answer.status_code == 422, answer.text
    reply = await chat.backend.typing(chat.conversation_id, "start")
    assert reply["ok"] is True, reply
    page = await chat.person.history(chat.conversation_id)
    assert page["messages"] == []  # nothing is stored


def _handled_messages(backend: Any) -> set[str]:
    return {
        e["data"]["message"]["id"]
        for e in backend.handled.values()
        if e["type"] == "message.created"
    }


async def test_a_delta_gets_no_reply_unless_it_fails(chat_with: Any) -> None:
    chat = await chat_with()
    backend = chat.backend
    started = await backend.stream_start(chat.conversation_id)
    message_id = started["message"]["id"]
    await backend.stream_delta(message_id, "fine")
    ended = await backend.stream_end(message_id)
    assert ended["ok"] and ended["message"]["body"]["text"] == "fine", ended
    replies_before = len(backend.replies)
    assert all(r.get("reply_to_cid") for r in backend.replies)  # nothing for the good delta

    await backend.stream_delta(message_id, "too late")
    failure = await backend.wait_until(
        lambda: next((r for r in backend.replies[replies_before:] if r.get("ok") is False), None)
    )
    assert failure["error"]["code"] == "not_streaming", failure
    in_history = await chat.person.message(chat.conversation_id, message_id)
    assert in_history["body"]["text"] == "fine"


async def test_an_idempotency_key_reused_in_another_conversation_is_409(chat_with: Any) -> None:
    chat = await chat_with()
    backend = chat.backend
    await backend.wait_until(lambda: len(backend.events_of("conversation.joined")) >= 2)
    conversations = [
        e["data"]["conversation"]["id"] for e in backend.events_of("conversation.joined")
    ]
    other = next(c for c in conversations if c != chat.conversation_id)  # the owner's chat
    first = await backend.post_message(chat.conversation_id, text="hi", idempotency_key="same")
    assert first.status_code == 201, first.text
    again = await backend.post_message(other, text="hi", idempotency_key="same")
    assert again.status_code == 409, again.text
    assert error_of(again)["code"] == "idempotency_key_reused"


async def test_a_reply_to_an_agent_message_carries_a_preview(chat_with: Any) -> None:
    chat = await chat_with()
    backend = chat.backend
    said = await backend.send(chat.conversation_id, "Your order ships on Tuesday.")
    agent_message = said["message"]
    sent = await chat.person.say_to(chat.conversation_id, "when exactly?", agent_message["id"])
    event = await backend.wait_event(
        lambda e: is_person_message(e) and e["data"]["message"]["id"] == sent["id"]
    )
    reply_to = event["data"]["message"]["reply_to"]
    assert reply_to["id"] == agent_message["id"]
    assert reply_to["sender_kind"] == "agent"
    assert reply_to["text_preview"] == "Your order ships on Tuesday."


async def test_a_code_with_a_payload_hands_it_over_on_join(chat_with: Any, people: Any) -> None:
    chat = await chat_with()
    minted = await chat.owner.http.post(
        f"/v1/mgmt/agents/{chat.agent['id']}/pair-tokens",
        json={"payload": {"customer_ref": "SBI-8812"}},
    )
    assert minted.status_code == 201, minted.text
    newcomer = people()
    accepted = await newcomer.http.post(f"/v1/client/pair/{minted.json()['code']}/accept")
    conversation_id = accepted.json()["conversation"]["id"]
    joined = await chat.backend.wait_event(
        lambda e: (
            e["type"] == "conversation.joined"
            and e["data"]["conversation"]["id"] == conversation_id
        )
    )
    assert joined["data"]["pair_token"]["payload"] == {"customer_ref": "SBI-8812"}
    assert joined["data"]["pair_token"]["id"].startswith("tok_")


async def test_the_hub_signature_is_the_same_wherever_the_message_appears(
    chat_with: Any,
) -> None:
    chat = await chat_with()
    sent = await chat.person.say(chat.conversation_id, "seal me")
    event = await chat.backend.wait_event(
        lambda e: is_person_message(e) and e["data"]["message"]["id"] == sent["id"]
    )
    answer = await chat.backend.http.get(f"/v1/agent/conversations/{chat.conversation_id}/messages")
    in_history = next(m for m in answer.json()["messages"] if m["id"] == sent["id"])
    assert in_history["signature"] == event["data"]["message"]["signature"]
    assert "signature" not in sent  # the client API does not carry it
    assert re.fullmatch(r"[A-Za-z0-9_-]+", in_history["signature"])  # base64url


async def test_events_leased_to_a_replaced_socket_reach_the_newer_one(
    chat_with: Any, backends: Any
) -> None:
    chat = await chat_with(ack=False)
    older = chat.backend
    sent = await chat.person.say(chat.conversation_id, "who takes this?")
    event = await older.wait_event(
        lambda e: is_person_message(e) and e["data"]["message"]["id"] == sent["id"]
    )
    newer = backends(chat.secret)
    await newer.connect()
    await older.wait_until(lambda: older.final == 4001)
    got = await newer.wait_event(lambda e: e["id"] == event["id"], timeout=LEASE + 20)
    assert got["data"]["message"]["body"]["text"] == "who takes this?"


async def test_a_person_message_event_names_the_participants(chat_with: Any) -> None:
    chat = await chat_with()
    sent = await chat.person.say(chat.conversation_id, "who is here?")
    event = await chat.backend.wait_event(
        lambda e: is_person_message(e) and e["data"]["message"]["id"] == sent["id"]
    )
    participants = {p["id"]: p for p in event["data"]["participants"]}
    assert participants[chat.person.user_id]["kind"] == "user"
    assert participants[chat.agent["id"]]["kind"] == "agent"
    sender = event["data"]["message"]["sender"]
    assert set(sender) == {"kind", "id", "display_name"}
    assert sender["display_name"] == participants[chat.person.user_id]["display_name"]


async def test_the_person_pages_forward_with_after(chat_with: Any) -> None:
    chat = await chat_with()
    first = await chat.person.say(chat.conversation_id, "a")
    for text in ("b", "c"):
        await chat.person.say(chat.conversation_id, text)
    said = await chat.backend.send(chat.conversation_id, "d")
    page = await chat.person.history(chat.conversation_id, after=first["id"])
    assert [m["body"]["text"] for m in page["messages"]] == ["b", "c", "d"]  # oldest first
    assert page["messages"][-1]["id"] == said["message"]["id"]
    page = await chat.person.history(chat.conversation_id, after=said["message"]["id"])
    assert page["messages"] == []
    newest_first = await chat.person.history(chat.conversation_id)
    assert [m["body"]["text"] for m in newest_first["messages"]] == ["d", "c", "b", "a"]


async def test_a_backend_that_never_answers_pings_is_dropped(chat_with: Any) -> None:
    """A raw socket that completes the upgrade and then never reads: no pong, so it is closed."""
    chat = await chat_with(connect=False)
    host, port = chat.hub.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(
        (
            "GET /v1/agent/socket HTTP/1.1\r\n"
            f"Host: {host}:{port}\r\n"
            "Upgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
            f"Authorization: Bearer {chat.secret}\r\n\r\n"
        ).encode()
    )
    await writer.drain()
    status = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
    assert b" 101 " in status, status
    # Read the frames (pings, events, and at last a close or EOF) without ever answering.
    pings = 0
    # The drop is due some 5 s in (a ping, then its pong overdue); 60 s is a wait for it.
    with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
        async with asyncio.timeout(60):
            while True:
                head = await reader.readexactly(2)
                length = head[1] & 0x7F
                if length >= 126:
                    length = int.from_bytes(await reader.readexactly(2 if length == 126 else 8))
                await reader.readexactly(length)
                opcode = head[0] & 0x0F
                if opcode == 0x8:
                    break
                pings += opcode == 0x9
    writer.close()
    # Dropped for a pong it never got: after a ping, not at once (the order, not a time).
    assert pings >= 1


async def test_a_reply_has_the_documented_shape(chat_with: Any) -> None:
    chat = await chat_with()
    reply = await chat.backend.send(chat.conversation_id, "shape")
    assert set(reply) <= {"reply_to_cid", "ok", "message", "message_id"}, reply
    assert reply["ok"] is True
    refused = await chat.backend.send(chat.conversation_id, "")
    assert refused["ok"] is False
    assert set(refused) <= {"reply_to_cid", "ok", "error", "message_id"}, refused
    assert refused["error"]["code"] == "invalid_text"
    assert isinstance(refused["error"]["message"], str) and refused["error"]["message"]


async def test_an_agent_message_shows_on_the_client_socket(chat_with: Any) -> None:
    chat = await chat_with()
    watch = await chat.person.socket()
    try:
        await watch.wait_frame(lambda f: f.get("type") == "ready")
        said = await chat.backend.send(
            chat.conversation_id, "live!", quick_replies=[{"label": "Ok"}]
        )
        frame = await watch.wait_frame(
            lambda f: (
                f.get("type") == "message.created"
                and f["data"]["message"]["id"] == said["message"]["id"]
            )
        )
    finally:
        await watch.close()
    assert frame["data"]["conversation_id"] == chat.conversation_id
    message = frame["data"]["message"]
    assert message["body"] == {"text": "live!", "quick_replies": [{"label": "Ok"}]}
    assert message["status"] == "complete"
    assert "signature" not in message  # the client API does not carry it


async def test_agent_history_pages_back_newest_first(chat_with: Any) -> None:
    chat = await chat_with()
    ids = [(await chat.backend.send(chat.conversation_id, t))["message"]["id"] for t in "abcde"]
    path = f"/v1/agent/conversations/{chat.conversation_id}/messages"
    first = (await chat.backend.http.get(path, params={"limit": 2})).json()
    assert [m["id"] for m in first["messages"]] == ids[::-1][:2]
    assert first["next_before"]
    second = (
        await chat.backend.http.get(path, params={"limit": 2, "before": first["next_before"]})
    ).json()
    assert [m["id"] for m in second["messages"]] == ids[::-1][2:4]


async def test_a_revoked_binding_closes_with_4002_and_then_there_is_no_binding(
    chat_with: Any, backends: Any
) -> None:
    chat = await chat_with(reconnect=True)
    backend = chat.backend
    revoked = await chat.owner.http.delete(f"/v1/mgmt/agents/{chat.agent['id']}/binding")
    assert revoked.status_code in (200, 204), revoked.text
    await backend.wait_until(lambda: backend.final == 4002, timeout=30)
    await asyncio.sleep(1.0)
    assert backend.connects == 1  # 4002 is final
    again = backends(chat.secret)
    try:
        await again.connect()
    except SocketRefused as refused:
        assert refused.status in (401, 403), refused
        if refused.status == 403:
            assert refused.error["code"] == "no_binding", refused.error
    else:
        raise AssertionError("a revoked secret opened the socket")


async def test_an_acknowledged_event_does_not_come_back_on_reconnect(chat_with: Any) -> None:
    chat = await chat_with()
    backend = chat.backend
    sent = await chat.person.say(chat.conversation_id, "done with this")
    event = await backend.wait_event(
        lambda e: is_person_message(e) and e["data"]["message"]["id"] == sent["id"]
    )
    await backend.wait_until(lambda: event["id"] in backend.acked)
    await asyncio.sleep(0.3)  # the ack has no reply; give it time to land
    await backend.disconnect()
    await backend.connect()
    await asyncio.sleep(LEASE + 2)
    assert [e["id"] for e in backend.received].count(event["id"]) == 1


def _empty_fields(body: dict[str, Any]) -> list[str]:
    return [key for key, value in body.items() if value in (None, "", [], {})]


async def test_empty_body_fields_are_omitted_not_null(chat_with: Any) -> None:
    chat = await chat_with()
    backend = chat.backend
    await backend.send(chat.conversation_id, "plain")
    await backend.send(chat.conversation_id, "with buttons", buttons=[[{"id": "a", "label": "A"}]])
    started = await backend.stream_start(chat.conversation_id)
    await backend.stream_end(started["message"]["id"])  # an empty stream
    await chat.person.say(chat.conversation_id, "from the person")
    await backend.wait_until(lambda: len(backend.events_of("message.created")) >= 1)
    bodies = [e["data"]["message"]["body"] for e in backend.events_of("message.created")]
    answer = await backend.http.get(f"/v1/agent/conversations/{chat.conversation_id}/messages")
    bodies += [m["body"] for m in answer.json()["messages"]]
    page = await chat.person.history(chat.conversation_id)
    bodies += [m["body"] for m in page["messages"]]
    for body in bodies:
        assert _empty_fields(body) == [], body


async def test_many_sends_in_flight_each_reply_matches_its_cid(chat_with: Any) -> None:
    chat = await chat_with()
    texts = [f"n{i:02}" for i in range(40)]
    replies = await asyncio.gather(*(chat.backend.send(chat.conversation_id, t) for t in texts))
    assert [r["message"]["body"]["text"] for r in replies] == texts
    assert len({r["reply_to_cid"] for r in replies}) == 40
    assert len({r["message"]["id"] for r in replies}) == 40
    page = await chat.person.history(chat.conversation_id, limit=100)
    assert sorted(m["body"]["text"] for m in page["messages"]) == texts
