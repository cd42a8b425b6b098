"""Blocking an agent (`POST/DELETE /v1/client/agents/{id}/block`): it leaves the person's
conversation (`conversation.left`, reason `user_blocked`), is refused there (403 `blocked`), and
joins again on unblock with no pair token."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from talkie_tui.devserver.cuckoo.ids import new_id
from tests.devserver.cuckoo.wire import (
    Agent,
    dev,
    error_of,
    frame_where,
    make_agent,
    next_frame,
    person_send,
)


@pytest.fixture
def agent(http: httpx.Client, hub_url: str) -> Agent:
    return make_agent(http, hub_url)


def block(http: httpx.Client, agent: Agent, user: str | None = None) -> httpx.Response:
    path = f"{agent.url}/v1/client/agents/{agent.id}/block"
    return http.post(path, headers=dev(user or agent.owner))


def unblock(http: httpx.Client, agent: Agent, user: str | None = None) -> httpx.Response:
    path = f"{agent.url}/v1/client/agents/{agent.id}/block"
    return http.delete(path, headers=dev(user or agent.owner))


def events_of(http: httpx.Client, agent: Agent, kind: str) -> list[dict[str, Any]]:
    return [event for event in agent.events(http) if event["type"] == kind]


def test_a_block_makes_the_agent_leave_and_refuses_it(agent: Agent, http: httpx.Client) -> None:
    assert block(http, agent).status_code == 204
    left = events_of(http, agent, "conversation.left")
    assert [event["data"] for event in left] == [
        {"conversation": {"id": agent.conversation_id, "kind": "dm"}, "reason": "user_blocked"}
    ]
    refused = agent.send(http, text="still there?")
    assert refused.status_code == 403
    assert error_of(refused)["code"] == "blocked"
    typing = agent.post(http, f"/conversations/{agent.conversation_id}/typing", {"state": "start"})
    assert (typing.status_code, error_of(typing)["code"]) == (403, "blocked")
    read = agent.get(http, f"/conversations/{agent.conversation_id}")
    assert (read.status_code, error_of(read)["code"]) == (403, "blocked")
    # The person keeps the conversation and its history, but cannot write to a blocked agent.
    mine = http.get(
        f"{agent.url}/v1/client/conversations/{agent.conversation_id}", headers=dev(agent.owner)
    )
    assert mine.status_code == 200
    spoken = person_send(http, agent.url, agent.owner, agent.conversation_id, text="hello")
    assert (spoken.status_code, error_of(spoken)["code"]) == (403, "blocked")
    # Blocking again changes nothing: one `conversation.left` only.
    assert block(http, agent).status_code == 204
    assert len(events_of(http, agent, "conversation.left")) == 1


def test_unblocking_rejoins_without_a_pair_token(agent: Agent, http: httpx.Client) -> None:
    assert block(http, agent).status_code == 204
    assert unblock(http, agent).status_code == 204
    joined = events_of(http, agent, "conversation.joined")
    again = joined[-1]["data"]
    assert again["conversation"] == {"id": agent.conversation_id, "kind": "dm"}
    assert again["pair_token"] is None
    assert {part["id"] for part in again["participants"]} == {agent.owner, agent.id}
    assert agent.send(http, text="back").status_code == 201
    spoken = person_send(http, agent.url, agent.owner, agent.conversation_id, text="hi again")
    assert spoken.status_code == 201
    created = events_of(http, agent, "message.created")
    assert created[-1]["data"]["message"]["body"]["text"] == "hi again"
    # Unblocking what is not blocked changes nothing.
    assert unblock(http, agent).status_code == 204
    assert len(events_of(http, agent, "conversation.joined")) == len(joined)


def test_no_events_reach_a_blocked_agent(agent: Agent, http: httpx.Client) -> None:
    assert block(http, agent).status_code == 204
    stop = http.post(
        f"{agent.url}/v1/client/conversations/{agent.conversation_id}/stop",
        headers=dev(agent.owner),
    )
    assert stop.status_code == 200
    assert [event["type"] for event in agent.events(http)][-1] == "conversation.left"


def test_a_block_ends_the_agents_open_reply(agent: Agent, http: httpx.Client) -> None:
    started = agent.send(http, stream=True)
    assert started.status_code == 201
    message_id = started.json()["message"]["id"]
    assert agent.post(http, f"/messages/{message_id}/append", {"text": "half a"}).status_code == 204
    assert block(http, agent).status_code == 204
    appended = agent.post(http, f"/messages/{message_id}/append", {"text": "nswer"})
    assert (appended.status_code, error_of(appended)["code"]) == (409, "not_streaming")
    page = http.get(
        f"{agent.url}/v1/client/conversations/{agent.conversation_id}/messages",
        headers=dev(agent.owner),
    )
    reply = next(m for m in page.json()["messages"] if m["id"] == message_id)
    assert (reply["status"], reply["truncated"], reply["body"]["text"]) == (
        "complete",
        True,
        "half a",
    )


def test_a_code_cannot_add_a_blocked_agent(agent: Agent, http: httpx.Client) -> None:
    made = http.post(
        f"{agent.url}/v1/mgmt/agents/{agent.id}/pair-tokens", headers=dev(agent.owner), json={}
    )
    assert made.status_code == 201, made.text
    code = made.json()["code"]
    stranger = new_id("usr")
    # Blocking an agent one has no conversation with is kept (and tells the agent nothing).
    assert block(http, agent, stranger).status_code == 204
    assert events_of(http, agent, "conversation.left") == []
    accepted = http.post(f"{agent.url}/v1/client/pair/{code}/accept", headers=dev(stranger))
    assert (accepted.status_code, error_of(accepted)["code"]) == (403, "blocked")
    # One person's block leaves the agent's conversations with others alone.
    spoken = person_send(http, agent.url, agent.owner, agent.conversation_id, text="still here")
    assert spoken.status_code == 201
    assert agent.send(http, text="and so am I").status_code == 201
    assert unblock(http, agent, stranger).status_code == 204
    accepted = http.post(f"{agent.url}/v1/client/pair/{code}/accept", headers=dev(stranger))
    assert accepted.status_code == 200, accepted.text
    joined = events_of(http, agent, "conversation.joined")[-1]["data"]
    assert joined["pair_token"] is not None


def test_block_refusals(agent: Agent, http: httpx.Client) -> None:
    missing = http.post(
        f"{agent.url}/v1/client/agents/{new_id('agt')}/block", headers=dev(agent.owner)
    )
    assert (missing.status_code, error_of(missing)["code"]) == (404, "agent_not_found")
    malformed = http.post(f"{agent.url}/v1/client/agents/bot/block", headers=dev(agent.owner))
    assert (malformed.status_code, error_of(malformed)["code"]) == (422, "invalid_id")
    as_agent = http.post(f"{agent.url}/v1/client/agents/{agent.id}/block", headers=agent.headers)
    assert (as_agent.status_code, error_of(as_agent)["code"]) == (403, "user_required")
    with_field = http.post(
        f"{agent.url}/v1/client/agents/{agent.id}/block",
        headers=dev(agent.owner),
        json={"reason": "spam"},
    )
    assert (with_field.status_code, error_of(with_field)["code"]) == (422, "unknown_field")


async def test_the_socket_hears_the_block_and_is_refused(agent: Agent, http: httpx.Client) -> None:
    async with agent.socket() as socket:
        joined = await frame_where(socket, "type", "conversation.joined")
        await socket.send(json.dumps({"ack": joined["id"]}))
        response = await asyncio.to_thread(block, http, agent)
        assert response.status_code == 204
        left = await frame_where(socket, "type", "conversation.left")
        assert left["data"]["reason"] == "user_blocked"
        await socket.send(json.dumps({"ack": left["id"]}))
        await socket.send(
            json.dumps(
                {"op": "send", "cid": "c1", "conversation_id": agent.conversation_id, "text": "?"}
            )
        )
        reply = await next_frame(socket)
        assert reply["reply_to_cid"] == "c1"
        assert (reply["ok"], reply["error"]["code"]) == (False, "blocked")
        response = await asyncio.to_thread(unblock, http, agent)
        assert response.status_code == 204
        again = await frame_where(socket, "type", "conversation.joined")
        assert again["data"]["pair_token"] is None
