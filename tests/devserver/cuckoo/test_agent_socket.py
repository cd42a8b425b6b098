"""The agent socket: refusals before the upgrade, pushed events with acks and redelivery, ops
and their replies, one socket per agent (4001), revoked bindings (4002), shutdown (1012)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from talkie_tui.devserver.cuckoo.config import HubConfig
from talkie_tui.devserver.cuckoo.runner import serve_in_thread
from tests.devserver.cuckoo.wire import Agent, dev, frame_where, make_agent, next_frame, person_send


@pytest.fixture
def agent(http: httpx.Client, hub_url: str) -> Agent:
    return make_agent(http, hub_url)


async def say(http: httpx.Client, agent: Agent, text: str) -> dict[str, Any]:
    response = await asyncio.to_thread(
        person_send, http, agent.url, agent.owner, agent.conversation_id, text=text
    )
    assert response.status_code == 201, response.text
    message: dict[str, Any] = response.json()["message"]
    return message


async def send(socket: ClientConnection, frame: dict[str, Any]) -> None:
    await socket.send(json.dumps(frame))


async def test_refusals_before_the_upgrade(agent: Agent, http: httpx.Client) -> None:
    webhook = make_agent(http, agent.url, mode="webhook", webhook_url="http://127.0.0.1:9/hook")
    with pytest.raises(InvalidStatus) as refused:
        async with webhook.socket():
            pass
    response = refused.value.response
    assert response.status_code == 403
    assert json.loads(response.body or b"{}")["error"]["code"] == "binding_not_socket"
    old_secret = agent.secret
    path = f"{agent.url}/v1/mgmt/agents/{agent.id}/binding"
    assert http.delete(path, headers=dev(agent.owner)).status_code == 204
    with pytest.raises(InvalidStatus) as refused:
        async with agent.socket():
            pass
    assert refused.value.response.status_code == 403
    assert json.loads(refused.value.response.body or b"{}")["error"]["code"] == "no_binding"
    assert agent.secret == old_secret


async def test_events_come_at_once_and_in_order(agent: Agent, http: httpx.Client) -> None:
    sent = [await say(http, agent, f"m{n}") for n in range(3)]
    async with agent.socket() as socket:
        frames = [await next_frame(socket) for _ in range(4)]
        assert [f["type"] for f in frames] == ["conversation.joined"] + ["message.created"] * 3
        assert [f["data"]["message"]["id"] for f in frames[1:]] == [m["id"] for m in sent]
        assert all(f["agent_id"] == agent.id and f["id"].startswith("evt_") for f in frames)
        for frame in frames:
            await send(socket, {"ack": frame["id"]})
        live = await say(http, agent, "live")
        frame = await next_frame(socket)
        assert frame["data"]["message"]["id"] == live["id"]
        await send(socket, {"ack": frame["id"]})
    # Acknowledged: a new socket gets nothing old.
    async with agent.socket() as socket:
        with pytest.raises(TimeoutError):
            await next_frame(socket, timeout=0.3)


@pytest.mark.slow
async def test_an_unacknowledged_event_comes_again(cuckoo_hub: Callable[..., str]) -> None:
    url = cuckoo_hub(lease_seconds=0.4)
    with httpx.Client() as http:
        agent = make_agent(http, url)
        async with agent.socket() as socket:
            first = await next_frame(socket)
            again = await next_frame(socket, timeout=10)  # once the 0.4 s lease lapsed
            assert again["id"] == first["id"]
            await send(socket, {"ack": again["id"]})
            with pytest.raises(TimeoutError):
                await next_frame(socket, timeout=0.8)
        # The ack also marks a person's message delivered.
        message = await say(http, agent, "hello")
        async with agent.socket() as socket:
            event = await frame_where(socket, "type", "message.created")
            await send(socket, {"ack": event["id"]})
            await asyncio.sleep(0.2)
        page = http.get(
            f"{url}/v1/client/conversations/{agent.conversation_id}/messages",
            headers=dev(agent.owner),
        ).json()
        mine = next(m for m in page["messages"] if m["id"] == message["id"])
        assert mine["delivery_status"] == "delivered"


async def test_ops_and_their_replies(agent: Agent, http: httpx.Client) -> None:
    async with agent.socket() as socket:
        joined = await next_frame(socket)
        await send(socket, {"ack": joined["id"]})
        await socket.send("{not json")  # refused with an error reply that names no cid
        refused = await next_frame(socket)
        assert refused["reply_to_cid"] is None and refused["error"]["code"] == "invalid_json"
        await send(
            socket,
            {
                "op": "send",
                "cid": "c1",
                "conversation_id": agent.conversation_id,
                "text": "Hi",
                "buttons": [[{"id": "a", "label": "A"}]],
            },
        )
        reply = await next_frame(socket)
        assert reply["reply_to_cid"] == "c1" and reply["ok"] is True
        assert reply["message"]["body"]["text"] == "Hi" and reply["message"]["signature"]
        await send(
            socket, {"op": "stream.start", "cid": "c2", "conversation_id": agent.conversation_id}
        )
        started = await next_frame(socket)
        message_id = started["message"]["id"]
        assert started["ok"] and started["message"]["status"] == "streaming"
        await send(socket, {"op": "stream.delta", "message_id": message_id, "text": "Hel"})
        await send(socket, {"op": "stream.delta", "message_id": message_id, "text": "lo"})
        await send(
            socket, {"op": "typing", "conversation_id": agent.conversation_id, "state": "start"}
        )
        await send(
            socket,
            {
                "op": "activity",
                "conversation_id": agent.conversation_id,
                "state": "working",
                "label": "Looking",
            },
        )
        await send(
            socket,
            {
                "op": "stream.end",
                "cid": "c3",
                "message_id": message_id,
                "buttons": [[{"id": "ok", "label": "OK"}]],
            },
        )
        ended = await next_frame(socket)  # the deltas, typing and activity had no replies
        assert ended["reply_to_cid"] == "c3" and ended["message"]["body"]["text"] == "Hello"
        assert ended["message"]["body"]["buttons"] == [
            [{"id": "ok", "label": "OK", "style": "default"}]
        ]
        await send(socket, {"op": "stream.delta", "message_id": message_id, "text": "late"})
        failed = await next_frame(socket)
        assert failed["ok"] is False and failed["message_id"] == message_id
        assert failed["error"]["code"] == "not_streaming" and failed["error"]["message"]
        await send(
            socket,
            {
                "op": "typing",
                "cid": "c4",
                "conversation_id": agent.conversation_id,
                "state": "stop",
            },
        )
        assert await next_frame(socket) == {"reply_to_cid": "c4", "ok": True}
        await send(
            socket,
            {
                "op": "activity",
                "cid": "c5",
                "conversation_id": agent.conversation_id,
                "state": "dancing",
            },
        )
        bad = await next_frame(socket)
        assert bad["reply_to_cid"] == "c5" and bad["error"]["code"] == "invalid_state"
        await send(
            socket,
            {
                "op": "send",
                "cid": "c6",
                "conversation_id": agent.conversation_id,
                "text": "x",
                "attachments": ["med_x"],
            },
        )
        assert (await next_frame(socket))["ok"] is False
        await send(socket, {"op": "fly", "cid": "c7"})
        unknown = await next_frame(socket)
        assert unknown["reply_to_cid"] == "c7" and unknown["error"]["code"] == "unknown_op"
        await send(
            socket,
            {"op": "send", "cid": "c8", "conversation_id": agent.conversation_id, "text": ""},
        )
        assert (await next_frame(socket))["error"]["code"] == "invalid_text"


async def test_a_second_socket_closes_the_first_with_4001(agent: Agent) -> None:
    async with agent.socket() as first:
        await next_frame(first)
        async with agent.socket() as second:
            with pytest.raises(ConnectionClosed):
                await asyncio.wait_for(first.recv(), 5)
            assert first.close_code == 4001
            assert (await next_frame(second))["type"] == "conversation.joined"


async def test_a_replaced_binding_closes_with_4002(agent: Agent, http: httpx.Client) -> None:
    async with agent.socket() as socket:
        await next_frame(socket)
        path = f"{agent.url}/v1/mgmt/agents/{agent.id}/binding"
        await asyncio.to_thread(http.post, path, headers=dev(agent.owner), json={"mode": "socket"})
        with pytest.raises(ConnectionClosed):
            await asyncio.wait_for(socket.recv(), 5)
        assert socket.close_code == 4002


async def test_frames_over_64_kib_close_the_socket(agent: Agent) -> None:
    async with agent.socket() as socket:
        await next_frame(socket)
        await socket.send(json.dumps({"op": "send", "text": "x" * (65 * 1024)}))
        with pytest.raises(ConnectionClosed):
            await asyncio.wait_for(socket.recv(), 5)
        assert socket.close_code == 1009


@pytest.mark.slow
async def test_a_stopping_hub_closes_agent_sockets_with_1012(tmp_path: Any) -> None:
    config = HubConfig(dev=True, db_path=tmp_path / "hub.sqlite3")
    with serve_in_thread(config) as url:
        with httpx.Client() as http:
            agent = make_agent(http, url)
        socket = await connect(
            url.replace("http://", "ws://") + "/v1/agent/socket", additional_headers=agent.headers
        )
        await next_frame(socket)
    with pytest.raises(ConnectionClosed):
        await asyncio.wait_for(socket.recv(), 5)
    assert socket.close_code == 1012


@pytest.mark.slow
async def test_unacknowledged_events_survive_a_restart(tmp_path: Any) -> None:
    config = HubConfig(dev=True, db_path=tmp_path / "hub.sqlite3")
    with serve_in_thread(config) as url, httpx.Client() as http:
        agent = make_agent(http, url)
        person_send(http, url, agent.owner, agent.conversation_id, text="before the restart")
        async with agent.socket() as socket:
            joined = await next_frame(socket)
            await send(socket, {"ack": joined["id"]})
            await next_frame(socket)  # the message, left unacknowledged
            await asyncio.sleep(0.1)
    with serve_in_thread(config) as url2:
        agent.url = url2
        async with agent.socket() as socket:
            frame = await next_frame(socket)
            assert frame["data"]["message"]["body"]["text"] == "before the restart"


async def test_a_socket_agent_away_too_long_is_unreachable(cuckoo_hub: Callable[..., str]) -> None:
    url = cuckoo_hub(unreachable_after=0.3, stream_sweep_interval=0.05)
    with httpx.Client() as http:
        agent = make_agent(http, url)
        people = url.replace("http://", "ws://") + "/v1/client/socket"
        async with connect(people, additional_headers=dev(agent.owner)) as feed:
            status = await frame_where(feed, "type", "agent.status", timeout=3)
            assert status["data"] == {"agent_id": agent.id, "status": "unreachable"}
            async with agent.socket():
                status = await frame_where(feed, "type", "agent.status")
                assert status["data"]["status"] == "connected"


async def test_the_hub_pings_and_closes_a_silent_socket(cuckoo_hub: Callable[..., str]) -> None:
    url = cuckoo_hub(ping_interval=0.2, pong_timeout=0.3)
    with httpx.Client() as http:
        agent = make_agent(http, url)
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    # A bare WebSocket handshake, so that nothing answers the hub's pings.
    writer.write(
        (
            "GET /v1/agent/socket HTTP/1.1\r\n"
            f"Host: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            f"Authorization: Bearer {agent.secret}\r\n\r\n"
        ).encode()
    )
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
    assert head.startswith(b"HTTP/1.1 101")
    opcodes = []
    while True:  # until the hub closes (each frame within 5 s: a wait, not a measured time)
        try:
            first = await asyncio.wait_for(reader.readexactly(2), 5)
        except asyncio.IncompleteReadError:
            break
        length = first[1] & 0x7F
        if length == 126:
            length = int.from_bytes(await reader.readexactly(2), "big")
        elif length == 127:
            length = int.from_bytes(await reader.readexactly(8), "big")
        await reader.readexactly(length)
        opcodes.append(first[0] & 0x0F)
        if opcodes[-1] == 0x8:  # close
            break
    writer.close()
    # A ping came, and then the hub gave up on the silent peer (the loop ends only on its close
    # or end of stream).
    assert 0x9 in opcodes


def test_catching_up_over_http(agent: Agent, http: httpx.Client) -> None:
    for n in range(3):
        person_send(http, agent.url, agent.owner, agent.conversation_id, text=f"m{n}")
    events = agent.events(http)
    assert [e["type"] for e in events] == ["conversation.joined"] + ["message.created"] * 3
    after = agent.events(http, since=events[1]["id"])
    assert [e["id"] for e in after] == [e["id"] for e in events[2:]]
    page = agent.get(http, "/events", params={"limit": 2}).json()["events"]
    assert [e["id"] for e in page] == [e["id"] for e in events[:2]]
    assert agent.get(http, "/events", params={"limit": 101}).status_code == 422
    unknown = agent.get(http, "/events", params={"since": "evt_" + "0" * 26})
    assert unknown.status_code == 422
