"""The management API: agents (with the owner's DM), bindings and pairing codes."""

from __future__ import annotations

import httpx

from talkie_tui.devserver.cuckoo.addresses import url_problem
from talkie_tui.devserver.cuckoo.ids import new_id
from tests.devserver.cuckoo.wire import bearer, dev, error_of, make_agent


def test_creating_an_agent_opens_the_owners_dm(http: httpx.Client, hub_url: str) -> None:
    owner = new_id("usr")
    response = http.post(
        f"{hub_url}/v1/mgmt/agents",
        headers=dev(owner),
        json={
            "handle": "priya-helper",
            "display_name": "Helper",
            "description": "Helps",
            "starters": ["Hi"],
            "supports_schedules": False,
        },
    )
    assert response.status_code == 201, response.text
    agent = response.json()["agent"]
    assert agent["id"].startswith("agt_") and agent["owner_id"] == owner
    conversations = http.get(f"{hub_url}/v1/client/conversations", headers=dev(owner)).json()
    [conversation] = conversations["conversations"]
    assert conversation["kind"] == "dm"
    bot = next(p for p in conversation["participants"] if p["kind"] == "agent")
    assert (bot["id"], bot["handle"], bot["status"]) == (agent["id"], "priya-helper", "idle")
    listed = http.get(f"{hub_url}/v1/mgmt/agents", headers=dev(owner)).json()["agents"]
    assert [a["id"] for a in listed] == [agent["id"]]
    # The backend hears of the DM once it has a binding.
    secret = http.post(
        f"{hub_url}/v1/mgmt/agents/{agent['id']}/binding",
        headers=dev(owner),
        json={"mode": "socket"},
    ).json()["secret"]
    [joined] = http.get(f"{hub_url}/v1/agent/events", headers=bearer(secret)).json()["events"]
    assert joined["type"] == "conversation.joined" and joined["agent_id"] == agent["id"]
    assert joined["data"]["conversation"] == {"id": conversation["id"], "kind": "dm"}
    assert joined["data"]["pair_token"] is None
    people = [p for p in joined["data"]["participants"] if p["kind"] == "user"]
    assert people[0]["id"] == owner and people[0]["is_me"] is False


def test_handles_are_checked_and_unique(http: httpx.Client, hub_url: str) -> None:
    owner = new_id("usr")
    url = f"{hub_url}/v1/mgmt/agents"
    for handle in ("ab", "-abc", "Abc", "a" * 33, "a b"):
        response = http.post(url, headers=dev(owner), json={"handle": handle, "display_name": "X"})
        assert response.status_code == 422, handle
        assert error_of(response)["code"] == "invalid_handle"
    assert (
        http.post(url, headers=dev(owner), json={"handle": "abc", "display_name": "X"}).status_code
        == 201
    )
    taken = http.post(url, headers=dev(owner), json={"handle": "abc", "display_name": "Y"})
    assert taken.status_code == 409 and error_of(taken)["code"] == "handle_taken"
    nameless = http.post(url, headers=dev(owner), json={"handle": "abd", "display_name": ""})
    assert nameless.status_code == 422


def test_only_the_owner_manages_an_agent(http: httpx.Client, hub_url: str) -> None:
    agent = make_agent(http, hub_url)
    other = dev(new_id("usr"))
    response = http.post(
        f"{hub_url}/v1/mgmt/agents/{agent.id}/binding", headers=other, json={"mode": "socket"}
    )
    assert response.status_code == 404 and error_of(response)["code"] == "agent_not_found"


def test_a_new_binding_replaces_and_revokes_the_old(http: httpx.Client, hub_url: str) -> None:
    agent = make_agent(http, hub_url)
    path = f"{hub_url}/v1/mgmt/agents/{agent.id}/binding"
    made = http.post(path, headers=dev(agent.owner), json={"mode": "socket"})
    assert made.status_code == 201
    body = made.json()
    assert body["secret"].startswith("bnd_sec_") and body["binding"]["mode"] == "socket"
    assert "secret" not in body["binding"] and body["binding"]["id"].startswith("bnd_")
    assert agent.get(http, "/me").status_code == 401
    assert http.get(f"{hub_url}/v1/agent/me", headers=bearer(body["secret"])).status_code == 200
    bad = http.post(path, headers=dev(agent.owner), json={"mode": "carrier-pigeon"})
    assert bad.status_code == 422 and error_of(bad)["code"] == "invalid_mode"
    assert http.delete(path, headers=dev(agent.owner)).status_code == 204
    assert http.get(path, headers=dev(agent.owner)).json() == {"binding": None}


def test_webhook_urls_are_checked(http: httpx.Client, hub_url: str) -> None:
    agent = make_agent(http, hub_url)
    path = f"{hub_url}/v1/mgmt/agents/{agent.id}/binding"
    for url in (None, "ftp://example.com/x", "http://169.254.169.254/latest"):
        body = {"mode": "webhook", "webhook_url": url}
        response = http.post(path, headers=dev(agent.owner), json=body)
        assert response.status_code == 422, url
        assert error_of(response)["code"] == "invalid_webhook_url"


def test_webhooks_to_loopback_and_private_addresses_need_dev_mode() -> None:
    assert url_problem("http://127.0.0.1:9/hook", dev=False) is not None
    assert url_problem("https://127.0.0.1:9/hook", dev=False) is not None
    assert url_problem("https://10.0.0.2/hook", dev=False) is not None
    assert url_problem("https://100.64.1.1/hook", dev=False) is not None
    assert url_problem("https://[fe80::1]/hook", dev=True) is not None
    assert url_problem("https://hooks.example.com/hook", dev=False) is None
    assert url_problem("http://127.0.0.1:9/hook", dev=True) is None


def test_a_pairing_code_adds_the_agent_with_its_payload(http: httpx.Client, hub_url: str) -> None:
    agent = make_agent(http, hub_url)
    path = f"{hub_url}/v1/mgmt/agents/{agent.id}/pair-tokens"
    made = http.post(
        path,
        headers=dev(agent.owner),
        json={"payload": {"customer_ref": "SBI-8812"}, "max_uses": 1},
    )
    assert made.status_code == 201, made.text
    token, code = made.json()["pair_token"], made.json()["code"]
    assert token["id"].startswith("tok_")
    person = new_id("usr")
    resolved = http.get(f"{hub_url}/v1/client/pair/{code}", headers=dev(person))
    assert resolved.json()["agent"]["handle"] == agent.handle
    accepted = http.post(f"{hub_url}/v1/client/pair/{code}/accept", headers=dev(person))
    assert accepted.status_code == 200 and accepted.json()["new"] is True
    conversation_id = accepted.json()["conversation"]["id"]
    joined = [e for e in agent.events(http) if e["type"] == "conversation.joined"][-1]
    assert joined["data"]["conversation"]["id"] == conversation_id
    assert joined["data"]["pair_token"] == {
        "id": token["id"],
        "payload": {"customer_ref": "SBI-8812"},
    }
    used_up = http.post(f"{hub_url}/v1/client/pair/{code}/accept", headers=dev(new_id("usr")))
    assert used_up.status_code == 404
