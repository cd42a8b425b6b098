"""The client API a person's app speaks: the conversation list, history paging, the socket."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from talkie_tui.devserver.cuckoo.ids import new_id
from tests.devserver.cuckoo.wire import (
    Agent,
    bearer,
    dev,
    error_of,
    frame_where,
    make_agent,
)


@pytest.fixture
def agent(http: httpx.Client, hub_url: str) -> Agent:
    return make_agent(http, hub_url)


def page(http: httpx.Client, agent: Agent, **params: Any) -> httpx.Response:
    return http.get(
        f"{agent.url}/v1/client/conversations/{agent.conversation_id}/messages",
        headers=dev(agent.owner),
        params=params,
    )


def test_the_conversation_list(agent: Agent, http: httpx.Client) -> None:
    agent.send(http, text="one")
    agent.send(http, text="two")
    [conversation] = http.get(
        f"{agent.url}/v1/client/conversations", headers=dev(agent.owner)
    ).json()["conversations"]
    assert conversation["unread_count"] == 2
    assert conversation["last_message"]["body"]["text"] == "two"
    bot = next(p for p in conversation["participants"] if p["kind"] == "agent")
    assert bot["status"] == "idle" and bot["display_name"] == "Test Bot"
    read = http.post(
        f"{agent.url}/v1/client/conversations/{agent.conversation_id}/read",
        headers=dev(agent.owner),
        json={"message_id": conversation["last_message"]["id"]},
    )
    assert read.status_code == 204
    one = http.get(
        f"{agent.url}/v1/client/conversations/{agent.conversation_id}", headers=dev(agent.owner)
    ).json()["conversation"]
    assert one["unread_count"] == 0


def test_paging_back_and_forward(agent: Agent, http: httpx.Client) -> None:
    ids = [agent.send(http, text=f"m{n}").json()["message"]["id"] for n in range(5)]
    newest = page(http, agent, limit=2).json()
    assert [m["id"] for m in newest["messages"]] == [ids[4], ids[3]]
    assert newest["next_before"] == ids[3] and newest["next_after"] is None
    assert newest["trimmed"] is False
    older = page(http, agent, limit=2, before=newest["next_before"]).json()
    assert [m["id"] for m in older["messages"]] == [ids[2], ids[1]]
    last = page(http, agent, limit=2, before=older["next_before"]).json()
    assert [m["id"] for m in last["messages"]] == [ids[0]] and last["next_before"] is None
    forward = page(http, agent, limit=2, after=ids[0]).json()
    assert [m["id"] for m in forward["messages"]] == [ids[1], ids[2]]
    assert forward["next_after"] == ids[2]
    for bad in ({"limit": 0}, {"limit": 101}, {"limit": "x"}):
        assert error_of(page(http, agent, **bad))["code"] == "invalid_limit"


def test_agent_history_is_newest_first(agent: Agent, http: httpx.Client) -> None:
    ids = [agent.send(http, text=f"m{n}").json()["message"]["id"] for n in range(3)]
    path = f"/conversations/{agent.conversation_id}/messages"
    first = agent.get(http, path, params={"limit": 2}).json()
    assert [m["id"] for m in first["messages"]] == [ids[2], ids[1]]
    second = agent.get(http, path, params={"limit": 2, "before": first["next_before"]}).json()
    assert [m["id"] for m in second["messages"]] == [ids[0]] and second["next_before"] is None
    one = agent.get(http, f"/conversations/{agent.conversation_id}").json()["conversation"]
    assert one["kind"] == "dm" and len(one["participants"]) == 2


def test_storage_answers_budget_and_window(agent: Agent, http: httpx.Client) -> None:
    body = http.get(f"{agent.url}/v1/client/me/storage", headers=dev(agent.owner)).json()
    assert body["media"] == {"used_bytes": 0, "budget_bytes": 100_000_000}
    assert body["messages"]["kept_days"] == 90 and body["messages"]["kept_since"].endswith("Z")


def ws_url(agent: Agent) -> str:
    return agent.url.replace("http://", "ws://") + "/v1/client/socket"


async def test_the_client_socket_pushes_messages_and_activity(
    agent: Agent, http: httpx.Client
) -> None:
    async with connect(ws_url(agent), additional_headers=dev(agent.owner)) as socket:
        ready = json.loads(await asyncio.wait_for(socket.recv(), 5))
        assert ready == {"type": "ready", "data": {"user_id": agent.owner}}
        await asyncio.to_thread(agent.send, http, text="Hello")
        created = await frame_where(socket, "type", "message.created")
        assert created["data"]["message"]["body"]["text"] == "Hello"
        assert created["data"]["conversation_id"] == agent.conversation_id
        started = (await asyncio.to_thread(agent.send, http, stream=True)).json()["message"]
        assert (await frame_where(socket, "type", "message.started"))["data"]["message"][
            "id"
        ] == started["id"]
        await asyncio.to_thread(
            agent.post, http, f"/messages/{started['id']}/append", {"text": "Hi"}
        )
        delta = await frame_where(socket, "type", "message.delta")
        assert delta["data"] == {
            "conversation_id": agent.conversation_id,
            "message_id": started["id"],
            "text": "Hi",
        }
        await asyncio.to_thread(agent.post, http, f"/messages/{started['id']}/finish")
        completed = await frame_where(socket, "type", "message.completed")
        assert completed["data"]["message"]["body"]["text"] == "Hi"
        path = f"/conversations/{agent.conversation_id}/typing"
        before = datetime.now(UTC)
        await asyncio.to_thread(agent.post, http, path, {"state": "start"})
        activity = await frame_where(socket, "type", "activity")
        assert activity["data"]["state"] == "thinking" and activity["data"]["agent_id"] == agent.id
        # The indicator expires by itself, 10 s after it was shown: after the request began and
        # before its frame arrived (stamps in ms: a millisecond's slack; an order, not a bound
        # on how long the request took).
        expires = datetime.fromisoformat(activity["data"]["expires_at"].replace("Z", "+00:00"))
        shown = expires - timedelta(seconds=10)
        assert before - timedelta(milliseconds=1) <= shown <= datetime.now(UTC)


async def test_the_client_socket_takes_the_token_as_a_subprotocol(
    cuckoo_hub: Callable[..., str],
) -> None:
    codes: dict[str, str] = {}
    url = cuckoo_hub(code_sink=codes.__setitem__)
    async with httpx.AsyncClient() as http:
        await http.post(f"{url}/v1/auth/email/start", json={"email": "b@example.com"})
        verified = await http.post(
            f"{url}/v1/auth/email/verify",
            json={"email": "b@example.com", "code": codes["b@example.com"]},
        )
    token, user_id = verified.json()["token"], verified.json()["user"]["id"]
    socket_url = url.replace("http://", "ws://") + "/v1/client/socket"
    offered: Any = ["cuckoo", token]
    async with connect(socket_url, subprotocols=offered) as socket:
        assert socket.subprotocol == "cuckoo"
        ready = json.loads(await asyncio.wait_for(socket.recv(), 5))
        assert ready["data"]["user_id"] == user_id
    async with connect(socket_url, additional_headers=bearer(token)) as socket:
        assert json.loads(await asyncio.wait_for(socket.recv(), 5))["type"] == "ready"
    with pytest.raises(InvalidStatus) as refused:
        async with connect(socket_url, subprotocols=["cuckoo", "ses_tok_nope"]):  # type: ignore[list-item]
            pass
    assert refused.value.response.status_code == 401


async def test_agent_status_reaches_people(agent: Agent, http: httpx.Client) -> None:
    async with connect(ws_url(agent), additional_headers=dev(agent.owner)) as socket:
        async with agent.socket():
            status = await frame_where(socket, "type", "agent.status")
            assert status["data"] == {"agent_id": agent.id, "status": "connected"}
        status = await frame_where(socket, "type", "agent.status")
        assert status["data"] == {"agent_id": agent.id, "status": "idle"}


def test_a_stranger_cannot_read_a_conversation(agent: Agent, http: httpx.Client) -> None:
    response = http.get(
        f"{agent.url}/v1/client/conversations/{agent.conversation_id}/messages",
        headers=dev(new_id("usr")),
    )
    assert response.status_code == 403 and error_of(response)["code"] == "not_participant"
