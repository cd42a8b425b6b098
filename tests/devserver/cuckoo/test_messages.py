"""Sending: people's text and taps, agents' text and buttons, idempotency, the rules' errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from talkie_tui.devserver.cuckoo.ids import new_id
from tests.devserver.cuckoo.wire import Agent, dev, error_of, make_agent, person_send

BUTTONS = [
    [{"id": "raise", "label": "Raise complaint", "style": "primary"}, {"id": "no", "label": "No"}]
]


@pytest.fixture
def agent(http: httpx.Client, hub_url: str) -> Agent:
    return make_agent(http, hub_url)


def created_events(agent: Agent, http: httpx.Client) -> list[dict[str, Any]]:
    return [e for e in agent.events(http) if e["type"] == "message.created"]


def test_a_persons_message_reaches_the_agent(agent: Agent, http: httpx.Client) -> None:
    sent = person_send(http, agent.url, agent.owner, agent.conversation_id, text="  Hello  ")
    assert sent.status_code == 201, sent.text
    message = sent.json()["message"]
    assert message["body"] == {"text": "Hello"} and message["status"] == "complete"
    assert message["sender"] == {"kind": "user", "id": agent.owner}
    assert "signature" not in message and message["conversation_id"] == agent.conversation_id
    [event] = created_events(agent, http)
    data = event["data"]
    assert data["conversation"] == {"id": agent.conversation_id, "kind": "dm"}
    assert data["message"]["id"] == message["id"]
    assert data["message"]["sender"]["display_name"]
    assert data["message"]["signature"] and "=" not in data["message"]["signature"]
    assert "conversation_id" not in data["message"]
    assert {p["kind"] for p in data["participants"]} == {"user", "agent"}
    assert [p["is_me"] for p in data["participants"] if p["kind"] == "agent"] == [True]


def test_the_agent_never_receives_its_own_messages(agent: Agent, http: httpx.Client) -> None:
    response = agent.send(http, text="Hi there")
    assert response.status_code == 201, response.text
    assert response.json()["message"]["signature"]
    assert created_events(agent, http) == []
    page = http.get(
        f"{agent.url}/v1/client/conversations/{agent.conversation_id}/messages",
        headers=dev(agent.owner),
    ).json()
    assert page["messages"][0]["body"]["text"] == "Hi there"
    assert "signature" not in page["messages"][0]


def test_idempotency_keys(agent: Agent, http: httpx.Client) -> None:
    first = person_send(
        http, agent.url, agent.owner, agent.conversation_id, text="once", idempotency_key="k1"
    )
    again = person_send(
        http, agent.url, agent.owner, agent.conversation_id, text="once", idempotency_key="k1"
    )
    assert (first.status_code, again.status_code) == (201, 200)
    assert first.json()["message"]["id"] == again.json()["message"]["id"]
    assert len(created_events(agent, http)) == 1
    other = make_agent(http, agent.url, owner=agent.owner)
    reused = person_send(
        http, agent.url, agent.owner, other.conversation_id, text="x", idempotency_key="k1"
    )
    assert reused.status_code == 409 and error_of(reused)["code"] == "idempotency_key_reused"
    too_long = person_send(
        http, agent.url, agent.owner, agent.conversation_id, text="x", idempotency_key="k" * 201
    )
    assert error_of(too_long)["code"] == "invalid_idempotency_key"
    a1 = agent.send(http, text="a", idempotency_key="k1")
    a2 = agent.send(http, text="a", idempotency_key="k1")
    assert (a1.status_code, a2.status_code) == (201, 200)


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"text": ""}, "invalid_text"),
        ({"text": "   "}, "invalid_text"),
        ({"text": "x" * 8001}, "invalid_text"),
        ({"text": 5}, "invalid_text"),
        ({"text": "x", "buttons": [[{"id": "a", "label": "A"}]]}, "buttons_not_allowed"),
        ({"text": "x", "quick_replies": [{"label": "A"}]}, "buttons_not_allowed"),
        ({"text": "x", "reply_to": "msg_nope"}, "invalid_reply_to"),
        ({"text": "x", "attachments": ["med_x"] * 11}, "too_many_attachments"),
        ({"text": "x", "attachments": ["med_x", "med_x"]}, "invalid_attachment"),
        ({"text": "x", "attachments": ["med_0000000000000000000000000a"]}, "unknown_attachment"),
        ({"action": {"button_id": "a"}}, "invalid_action"),
        ({"text": "x", "colour": "red"}, "unknown_field"),
    ],
)
def test_a_persons_bad_sends(
    agent: Agent, http: httpx.Client, body: dict[str, Any], code: str
) -> None:
    response = person_send(http, agent.url, agent.owner, agent.conversation_id, **body)
    assert response.status_code == 422, response.text
    assert error_of(response)["code"] == code


def test_only_participants_send(agent: Agent, http: httpx.Client) -> None:
    stranger = person_send(http, agent.url, new_id("usr"), agent.conversation_id, text="hi")
    assert stranger.status_code == 403 and error_of(stranger)["code"] == "not_participant"
    other = make_agent(http, agent.url)
    path = f"/conversations/{agent.conversation_id}/messages"
    intruder = other.post(http, path, {"text": "hi"})
    assert intruder.status_code == 403 and error_of(intruder)["code"] == "not_participant"
    missing = person_send(http, agent.url, agent.owner, new_id("cnv"), text="hi")
    assert missing.status_code == 404 and error_of(missing)["code"] == "conversation_not_found"


def test_reply_to_carries_a_preview(agent: Agent, http: httpx.Client) -> None:
    asked = agent.send(http, text="What is your account number? " + "x" * 200).json()["message"]
    answer = person_send(
        http, agent.url, agent.owner, agent.conversation_id, text="42", reply_to=asked["id"]
    )
    reply_to = answer.json()["message"]["reply_to"]
    assert reply_to["id"] == asked["id"] and reply_to["sender_kind"] == "agent"
    assert len(reply_to["text_preview"]) == 100
    [event] = created_events(agent, http)
    assert event["data"]["message"]["reply_to"] == reply_to


@pytest.mark.parametrize(
    "buttons",
    [
        [[{"id": "a", "label": "A"}]] * 4,
        [[]],
        [[{"id": f"b{n}", "label": "B"} for n in range(4)]],
        [[{"id": "a", "label": ""}]],
        [[{"id": "a", "label": "x" * 41}]],
        [[{"id": "bad id", "label": "A"}]],
        [[{"id": "a" * 65, "label": "A"}]],
        [[{"id": "a", "label": "A"}, {"id": "a", "label": "B"}]],
        [[{"id": "a", "url": "https://example.com", "label": "A"}]],
        [[{"label": "A"}]],
        [[{"id": "a", "label": "A", "style": "loud"}]],
        [[{"url": "javascript:alert(1)", "label": "A"}]],
        [[{"url": "https://example.com/" + "x" * 2048, "label": "A"}]],
        [[{"id": "a", "label": "A", "colour": "red"}]],
    ],
)
def test_button_rules(agent: Agent, http: httpx.Client, buttons: Any) -> None:
    response = agent.send(http, text="Choose", buttons=buttons)
    assert response.status_code == 422, response.text
    assert (error_of(response)["code"], error_of(response)["field"]) == (
        "invalid_buttons",
        "buttons",
    )


def test_good_buttons_and_quick_replies(agent: Agent, http: httpx.Client) -> None:
    buttons = [
        [
            {"id": "a.b:c-d_e", "label": "A"},
            {"url": "upi://pay?pa=x", "label": "Pay"},
            {"url": "tel:+1", "label": "Call", "style": "danger"},
        ],
        [{"url": "http://example.com", "label": "Site"}],
        [{"id": "z", "label": "Z"}],
    ]
    replies = [{"label": f"r{n}"} for n in range(6)]
    response = agent.send(http, text="Choose", buttons=buttons, quick_replies=replies)
    assert response.status_code == 201, response.text
    body = response.json()["message"]["body"]
    assert body["buttons"][0][0] == {"id": "a.b:c-d_e", "label": "A", "style": "default"}
    assert body["quick_replies"] == replies
    too_many = agent.send(http, text="x", quick_replies=[{"label": "r"}] * 7)
    assert too_many.status_code == 422


def test_a_tap(agent: Agent, http: httpx.Client) -> None:
    source = agent.send(http, text="Shall I?", buttons=BUTTONS).json()["message"]
    tap = person_send(
        http,
        agent.url,
        agent.owner,
        agent.conversation_id,
        action={"button_id": "raise", "source_message_id": source["id"]},
    )
    assert tap.status_code == 201, tap.text
    body = tap.json()["message"]["body"]
    assert body == {
        "text": "Raise complaint",
        "action": {"button_id": "raise", "source_message_id": source["id"]},
    }
    [event] = created_events(agent, http)
    assert event["data"]["message"]["body"]["action"]["button_id"] == "raise"
    history = agent.get(http, f"/conversations/{agent.conversation_id}/messages").json()["messages"]
    tapped = next(m for m in history if m["id"] == source["id"])
    assert tapped["body"]["selected_button_id"] == "raise"
    again = person_send(
        http,
        agent.url,
        agent.owner,
        agent.conversation_id,
        action={"button_id": "no", "source_message_id": source["id"]},
    )
    assert again.status_code == 409


@pytest.mark.parametrize(
    "action",
    [
        {"button_id": "nope", "source_message_id": "SOURCE"},
        {"button_id": "raise", "source_message_id": "msg_0000000000000000000000000a"},
        {"button_id": "raise", "source_message_id": "SOURCE", "extra": 1},
    ],
)
def test_bad_taps(agent: Agent, http: httpx.Client, action: dict[str, Any]) -> None:
    source = agent.send(http, text="Shall I?", buttons=BUTTONS).json()["message"]
    action = {k: (source["id"] if v == "SOURCE" else v) for k, v in action.items()}
    response = person_send(http, agent.url, agent.owner, agent.conversation_id, action=action)
    assert response.status_code == 422 and error_of(response)["code"] == "invalid_action"
    with_text = person_send(
        http,
        agent.url,
        agent.owner,
        agent.conversation_id,
        text="and words",
        action={"button_id": "raise", "source_message_id": source["id"]},
    )
    assert error_of(with_text)["code"] == "invalid_action"


def test_a_person_is_rate_limited(cuckoo_hub: Callable[..., str]) -> None:
    url = cuckoo_hub(person_send_rate=(0.5, 3))
    with httpx.Client() as http:
        agent = make_agent(http, url)
        codes = [
            person_send(http, url, agent.owner, agent.conversation_id, text=f"m{n}").status_code
            for n in range(4)
        ]
        assert codes == [201, 201, 201, 429]
        limited = person_send(http, url, agent.owner, agent.conversation_id, text="again")
        assert error_of(limited)["code"] == "rate_limited"
        assert int(limited.headers["Retry-After"]) >= 1


def test_signatures_seal_the_content(agent: Agent, http: httpx.Client) -> None:
    one = agent.send(http, text="same").json()["message"]
    two = agent.send(http, text="same").json()["message"]
    assert one["signature"] != two["signature"]  # the id is sealed too
    history = agent.get(http, f"/conversations/{agent.conversation_id}/messages").json()
    assert {m["id"]: m["signature"] for m in history["messages"]}[one["id"]] == one["signature"]


def test_an_agents_text_is_kept_as_sent(agent: Agent, http: httpx.Client) -> None:
    code = "    indented()\n"
    assert agent.send(http, text=code).json()["message"]["body"]["text"] == code
    blank = agent.send(http, text=" \n ")
    assert blank.status_code == 422 and error_of(blank)["code"] == "invalid_text"
