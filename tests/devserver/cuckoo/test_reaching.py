"""Reaching agents on the hub: the public catalogue (`/v1/client/catalogue`, listed by the
owner), a pairing code resolved then accepted, contacts (pinned, muted until a time, archived,
removed and added back) and reports, over real HTTP; the agent hears each join."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from talkie_tui.devserver.cuckoo.ids import new_id
from tests.devserver.cuckoo.wire import Agent, dev, error_of, make_agent


@pytest.fixture
def agent(http: httpx.Client, hub_url: str) -> Agent:
    return make_agent(http, hub_url)


def client(http: httpx.Client, agent: Agent, method: str, path: str, user: str, **kw: Any) -> Any:
    return http.request(method, f"{agent.url}/v1/client{path}", headers=dev(user), **kw)


def joins(http: httpx.Client, agent: Agent) -> list[dict[str, Any]]:
    return [e["data"] for e in agent.events(http) if e["type"] == "conversation.joined"]


def list_publicly(http: httpx.Client, agent: Agent, listed: bool = True) -> None:
    response = http.patch(
        f"{agent.url}/v1/mgmt/agents/{agent.id}", headers=dev(agent.owner), json={"listed": listed}
    )
    assert response.status_code == 200, response.text
    assert response.json()["agent"]["listed"] is listed


def catalogue_ids(http: httpx.Client, agent: Agent, user: str) -> list[str]:
    response = client(http, agent, "GET", "/catalogue", user)
    assert response.status_code == 200, response.text
    return [entry["id"] for entry in response.json()["agents"]]


def mint(http: httpx.Client, agent: Agent, **body: Any) -> dict[str, Any]:
    """A pairing code of the agent, made by its owner: `{pair_token, code}`."""
    path = f"{agent.url}/v1/mgmt/agents/{agent.id}/pair-tokens"
    made = http.post(path, headers=dev(agent.owner), json=body)
    assert made.status_code == 201, made.text
    minted: dict[str, Any] = made.json()
    return minted


def contacts(http: httpx.Client, agent: Agent, user: str) -> list[dict[str, Any]]:
    response = client(http, agent, "GET", "/contacts", user)
    assert response.status_code == 200, response.text
    found: list[dict[str, Any]] = response.json()["contacts"]
    return found


def test_a_listed_agent_is_in_the_catalogue_and_added_from_it(
    http: httpx.Client, hub_url: str
) -> None:
    owner = new_id("usr")
    made = http.post(
        f"{hub_url}/v1/mgmt/agents",
        headers=dev(owner),
        json={
            "handle": "listed-" + new_id("agt")[-8:],
            "display_name": "Listed Bot",
            "description": "answers questions about trains",
            "starters": ["When is the next train?", "Delays today"],
            "listed": True,
        },
    )
    assert made.status_code == 201, made.text
    assert made.json()["agent"]["listed"] is True
    agent = make_agent(http, hub_url)  # not listed
    person = new_id("usr")
    listed_id = made.json()["agent"]["id"]
    shown = client(http, agent, "GET", "/catalogue", person).json()["agents"]
    entry = next(e for e in shown if e["id"] == listed_id)
    assert entry["display_name"] == "Listed Bot"
    assert entry["description"] == "answers questions about trains"
    assert entry["starters"] == ["When is the next train?", "Delays today"]
    assert entry["handle"].startswith("listed-")
    assert agent.id not in [e["id"] for e in shown]
    refused = client(http, agent, "POST", f"/catalogue/{agent.id}/add", person)
    assert (refused.status_code, error_of(refused)["code"]) == (404, "agent_not_found")
    list_publicly(http, agent)
    assert agent.id in catalogue_ids(http, agent, person)
    added = client(http, agent, "POST", f"/catalogue/{agent.id}/add", person)
    assert added.status_code == 200, added.text
    assert added.json()["new"] is True
    conversation = added.json()["conversation"]
    assert {p["id"] for p in conversation["participants"]} == {person, agent.id}
    joined = joins(http, agent)[-1]
    assert joined["conversation"]["id"] == conversation["id"]
    assert joined["pair_token"] is None
    again = client(http, agent, "POST", f"/catalogue/{agent.id}/add", person)
    assert (again.status_code, again.json()["new"]) == (200, False)
    assert again.json()["conversation"]["id"] == conversation["id"]
    list_publicly(http, agent, False)
    assert agent.id not in catalogue_ids(http, agent, person)
    stranger = http.patch(
        f"{hub_url}/v1/mgmt/agents/{agent.id}", headers=dev(person), json={"listed": True}
    )
    assert (stranger.status_code, error_of(stranger)["code"]) == (404, "agent_not_found")


def test_a_code_resolves_to_its_agent_before_it_is_accepted(
    http: httpx.Client, agent: Agent
) -> None:
    made = mint(http, agent, label="shop counter", payload={"customer_ref": "SBI-8812"})
    code, token_id = made["code"], made["pair_token"]["id"]
    person = new_id("usr")
    resolved = client(http, agent, "GET", f"/pair/{code}", person)
    assert resolved.status_code == 200, resolved.text
    assert resolved.json()["agent"]["id"] == agent.id
    assert resolved.json()["agent"]["description"] == "for tests"
    assert resolved.json()["pair_token"] == {"id": token_id, "label": "shop counter"}
    assert len(joins(http, agent)) == 1  # resolving adds nobody: only the owner's DM so far
    accepted = client(http, agent, "POST", f"/pair/{code}/accept", person)
    assert accepted.status_code == 200, accepted.text
    joined = joins(http, agent)[-1]
    assert joined["pair_token"] == {"id": token_id, "payload": {"customer_ref": "SBI-8812"}}
    missing = client(http, agent, "GET", "/pair/nosuchcode", person)
    assert (missing.status_code, error_of(missing)["code"]) == (404, "pair_code_not_found")


def test_contacts_are_pinned_muted_and_archived(http: httpx.Client, hub_url: str) -> None:
    person = new_id("usr")
    first = make_agent(http, hub_url, owner=person)
    second = make_agent(http, hub_url, owner=person)
    listed = [c["id"] for c in contacts(http, first, person)]
    assert sorted(listed) == sorted([first.id, second.id])
    row = contacts(http, first, person)[0]
    assert set(row) >= {"id", "agent", "conversation_id", "pinned", "muted_until", "archived"}
    assert (row["pinned"], row["muted_until"], row["archived"], row["blocked"]) == (
        False,
        None,
        False,
        False,
    )
    pinned = client(http, first, "PATCH", f"/contacts/{second.id}", person, json={"pinned": True})
    assert pinned.status_code == 200, pinned.text
    assert pinned.json()["contact"]["pinned"] is True
    assert contacts(http, first, person)[0]["id"] == second.id  # pinned first
    muted = client(
        http,
        first,
        "PATCH",
        f"/contacts/{first.id}",
        person,
        json={"muted_until": "2030-01-02T03:04:05+01:00", "archived": True},
    )
    assert muted.status_code == 200, muted.text
    contact = muted.json()["contact"]
    assert contact["muted_until"] == "2030-01-02T02:04:05.000Z"
    assert contact["archived"] is True
    assert contact["conversation_id"] == first.conversation_id
    unmuted = client(
        http, first, "PATCH", f"/contacts/{first.id}", person, json={"muted_until": None}
    )
    assert unmuted.json()["contact"]["muted_until"] is None
    assert unmuted.json()["contact"]["archived"] is True  # what was not named stays
    for body, code in (
        ({"muted_until": "tomorrow"}, "invalid_muted_until"),
        ({"muted_until": "2030-01-02T03:04:05"}, "invalid_muted_until"),
        ({"pinned": "yes"}, "invalid_pinned"),
        ({"blocked": True}, "unknown_field"),
    ):
        refused = client(http, first, "PATCH", f"/contacts/{first.id}", person, json=body)
        assert (refused.status_code, error_of(refused)["code"]) == (422, code), body
    stranger = client(http, first, "PATCH", f"/contacts/{first.id}", new_id("usr"), json={})
    assert (stranger.status_code, error_of(stranger)["code"]) == (404, "contact_not_found")


def test_a_removed_contact_leaves_the_lists_until_added_again(
    http: httpx.Client, agent: Agent
) -> None:
    code = mint(http, agent, payload={"seat": 12})["code"]
    person = new_id("usr")
    accepted = client(http, agent, "POST", f"/pair/{code}/accept", person)
    conversation_id = accepted.json()["conversation"]["id"]
    client(http, agent, "PATCH", f"/contacts/{agent.id}", person, json={"pinned": True})
    removed = client(http, agent, "DELETE", f"/contacts/{agent.id}", person)
    assert removed.status_code == 204
    assert contacts(http, agent, person) == []
    listed = client(http, agent, "GET", "/conversations", person).json()["conversations"]
    assert conversation_id not in [c["id"] for c in listed]
    gone = client(http, agent, "DELETE", f"/contacts/{agent.id}", person)
    assert (gone.status_code, error_of(gone)["code"]) == (404, "contact_not_found")
    before = len(joins(http, agent))
    back = client(http, agent, "POST", f"/pair/{code}/accept", person)
    assert back.status_code == 200, back.text
    assert (back.json()["new"], back.json()["conversation"]["id"]) == (True, conversation_id)
    rejoined = joins(http, agent)
    assert len(rejoined) == before + 1
    assert rejoined[-1]["pair_token"]["payload"] == {"seat": 12}
    (contact,) = contacts(http, agent, person)
    assert contact["pinned"] is False  # added again, it starts afresh


def test_a_report_names_a_reason_a_note_and_the_message(http: httpx.Client, agent: Agent) -> None:
    sent = agent.send(http, text="buy cheap watches")
    assert sent.status_code == 201, sent.text
    message_id = sent.json()["message"]["id"]
    path = f"/agents/{agent.id}/report"
    reported = client(
        http,
        agent,
        "POST",
        path,
        agent.owner,
        json={"reason": "spam", "note": " sells watches ", "message_id": message_id},
    )
    assert reported.status_code == 201, reported.text
    assert reported.json()["report"] == {
        "agent_id": agent.id,
        "reason": "spam",
        "note": "sells watches",
        "message_id": message_id,
        "created_at": reported.json()["report"]["created_at"],
    }
    plain = client(http, agent, "POST", path, agent.owner, json={"reason": "other"})
    assert plain.status_code == 201, plain.text
    stranger = new_id("usr")
    for user, body, code in (
        (agent.owner, {"reason": "rude"}, "invalid_reason"),
        (agent.owner, {}, "invalid_reason"),
        (agent.owner, {"reason": "abuse", "note": "x" * 1001}, "invalid_note"),
        (stranger, {"reason": "abuse", "message_id": message_id}, "invalid_message_id"),
        (agent.owner, {"reason": "abuse", "why": "?"}, "unknown_field"),
    ):
        refused = client(http, agent, "POST", path, user, json=body)
        assert (refused.status_code, error_of(refused)["code"]) == (422, code), body
    nobody = client(
        http, agent, "POST", f"/agents/{new_id('agt')}/report", agent.owner, json={"reason": "spam"}
    )
    assert (nobody.status_code, error_of(nobody)["code"]) == (404, "agent_not_found")


def test_a_blocked_contact_says_so_and_cannot_be_added_back(
    http: httpx.Client, agent: Agent
) -> None:
    list_publicly(http, agent)
    person = new_id("usr")
    assert client(http, agent, "POST", f"/catalogue/{agent.id}/add", person).status_code == 200
    assert client(http, agent, "POST", f"/agents/{agent.id}/block", person).status_code == 204
    (contact,) = contacts(http, agent, person)
    assert contact["blocked"] is True
    assert client(http, agent, "DELETE", f"/contacts/{agent.id}", person).status_code == 204
    refused = client(http, agent, "POST", f"/catalogue/{agent.id}/add", person)
    assert (refused.status_code, error_of(refused)["code"]) == (403, "blocked")
