"""Hiding for one person: a message hidden (`DELETE …/messages/{id}`) or a conversation
cleared (`POST …/clear`) leaves that person's pages, list and unread count, and nothing the
agent reads; what comes after a clear shows."""

from __future__ import annotations

from typing import Any

import httpx

from talkie_tui.devserver.cuckoo.ids import new_id
from tests.devserver.cuckoo.wire import Agent, dev, error_of, make_agent


def texts(http: httpx.Client, agent: Agent) -> list[str]:
    page = http.get(
        f"{agent.url}/v1/client/conversations/{agent.conversation_id}/messages",
        headers=dev(agent.owner),
    ).json()
    return [m["body"]["text"] for m in reversed(page["messages"])]


def listed(http: httpx.Client, agent: Agent) -> dict[str, Any]:
    conversation: dict[str, Any] = http.get(
        f"{agent.url}/v1/client/conversations/{agent.conversation_id}", headers=dev(agent.owner)
    ).json()["conversation"]
    return conversation


def agent_texts(http: httpx.Client, agent: Agent) -> list[str]:
    history = agent.get(http, f"/conversations/{agent.conversation_id}/messages").json()
    return [m["body"]["text"] for m in reversed(history["messages"])]


def test_a_hidden_message_leaves_the_persons_view_only(http: httpx.Client, hub_url: str) -> None:
    agent = make_agent(http, hub_url)
    ids = [agent.send(http, text=t).json()["message"]["id"] for t in ("one", "two", "three")]
    base = f"{agent.url}/v1/client/conversations/{agent.conversation_id}"
    hidden = http.delete(f"{base}/messages/{ids[2]}", headers=dev(agent.owner))
    assert hidden.status_code == 204
    assert http.delete(f"{base}/messages/{ids[2]}", headers=dev(agent.owner)).status_code == 204
    assert texts(http, agent) == ["one", "two"]
    assert listed(http, agent)["last_message"]["body"]["text"] == "two"
    assert listed(http, agent)["unread_count"] == 2
    assert agent_texts(http, agent) == ["one", "two", "three"]
    other = make_agent(http, hub_url, owner=agent.owner)
    elsewhere = other.send(http, text="elsewhere").json()["message"]["id"]
    refused = http.delete(f"{base}/messages/{elsewhere}", headers=dev(agent.owner))
    assert refused.status_code == 404 and error_of(refused)["code"] == "message_not_found"
    stranger = http.delete(f"{base}/messages/{ids[0]}", headers=dev(new_id("usr")))
    assert stranger.status_code == 403 and error_of(stranger)["code"] == "not_participant"


def test_a_clear_hides_everything_so_far(http: httpx.Client, hub_url: str) -> None:
    agent = make_agent(http, hub_url)
    for text in ("one", "two"):
        agent.send(http, text=text)
    base = f"{agent.url}/v1/client/conversations/{agent.conversation_id}"
    assert http.post(f"{base}/clear", headers=dev(agent.owner)).status_code == 204
    assert texts(http, agent) == []
    conversation = listed(http, agent)
    assert conversation["last_message"] is None and conversation["unread_count"] == 0
    agent.send(http, text="three")
    assert texts(http, agent) == ["three"]
    assert agent_texts(http, agent) == ["one", "two", "three"]
    unknown = http.post(
        f"{agent.url}/v1/client/conversations/cnv_{'0' * 26}/clear", headers=dev(agent.owner)
    )
    assert unknown.status_code == 404
