"""Buttons and quick replies: an agent sends them, the person taps, the agent hears the tap."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.cuckoo_peer.agent import AgentBackend, is_person_message
from tests.cuckoo_peer.person import error_of

BUTTONS = [
    [
        {"id": "raise", "label": "Raise complaint", "style": "primary"},
        {"id": "later", "label": "Later", "style": "default"},
    ],
    [{"url": "https://example.com/help", "label": "Help", "style": "default"}],
]


async def offer_buttons(backend: AgentBackend, event: dict[str, Any]) -> None:
    if not is_person_message(event) or "action" in event["data"]["message"]["body"]:
        return
    reply = await backend.send(event["data"]["conversation"]["id"], "What now?", buttons=BUTTONS)
    assert reply["ok"], reply


async def _offer(chat: Any) -> dict[str, Any]:
    """The agent's message with buttons, once it is in the person's history."""

    async def find() -> dict[str, Any]:
        while True:
            page = await chat.person.history(chat.conversation_id)
            offers = [m for m in page["messages"] if m["body"].get("buttons")]
            if offers:
                return offers[0]
            await asyncio.sleep(0.1)

    return await asyncio.wait_for(find(), 10)


async def test_buttons_and_a_tap(chat_with: Any) -> None:
    chat = await chat_with(offer_buttons)
    backend = chat.backend
    person = chat.person
    await person.say(chat.conversation_id, "my order is late")
    offer = await _offer(chat)
    assert offer["body"]["buttons"] == BUTTONS
    assert "selected_button_id" not in offer["body"]

    tap = await person.tap(chat.conversation_id, offer["id"], "raise")
    assert tap.status_code == 201, tap.text
    tapped = tap.json()["message"]
    assert tapped["body"]["text"] == "Raise complaint"
    assert tapped["body"]["action"] == {"button_id": "raise", "source_message_id": offer["id"]}

    # The tap reaches the agent as the person's message.created with body.action.
    event = await backend.wait_event(
        lambda e: is_person_message(e) and "action" in e["data"]["message"]["body"]
    )
    body = event["data"]["message"]["body"]
    assert body["text"] == "Raise complaint"
    assert body["action"] == {"button_id": "raise", "source_message_id": offer["id"]}
    assert event["data"]["message"]["sender"]["id"] == person.user_id

    # The source gains selected_button_id, for the person and for the agent.
    source = await person.message(chat.conversation_id, offer["id"])
    assert source["body"]["selected_button_id"] == "raise"
    answer = await backend.http.get(f"/v1/agent/conversations/{chat.conversation_id}/messages")
    agent_view = next(m for m in answer.json()["messages"] if m["id"] == offer["id"])
    assert agent_view["body"]["selected_button_id"] == "raise"

    # A button cannot be taken twice: neither the same one nor its neighbour.
    for button_id in ("raise", "later"):
        again = await person.tap(chat.conversation_id, offer["id"], button_id)
        assert again.status_code in (409, 422), again.text
        error_of(again)
    page = await person.history(chat.conversation_id)
    assert [m["body"].get("text") for m in page["messages"]].count("Raise complaint") == 1


async def test_taps_that_are_refused(chat_with: Any) -> None:
    chat = await chat_with(offer_buttons)
    person = chat.person
    mine = await person.say(chat.conversation_id, "hi")
    offer = await _offer(chat)

    cases = [
        {"action": {"button_id": "nope", "source_message_id": offer["id"]}},  # no such button
        {"action": {"button_id": "raise", "source_message_id": mine["id"]}},  # not an agent's
        {"action": {"button_id": "raise", "source_message_id": offer["id"]}, "text": "and text"},
    ]
    for body in cases:
        answer = await person.send(chat.conversation_id, **body)
        assert answer.status_code in (404, 409, 422), (body, answer.text)
        error_of(answer)
    source = await person.message(chat.conversation_id, offer["id"])
    assert "selected_button_id" not in source["body"]


async def test_quick_replies_come_back_as_plain_text(chat_with: Any) -> None:
    chat = await chat_with()
    backend = chat.backend
    offered = await backend.send(
        chat.conversation_id,
        "Shall I go on?",
        quick_replies=[{"label": "Yes"}, {"label": "Not now"}],
    )
    assert offered["ok"], offered
    assert offered["message"]["body"]["quick_replies"] == [{"label": "Yes"}, {"label": "Not now"}]
    in_history = await chat.person.message(chat.conversation_id, offered["message"]["id"])
    assert in_history["body"]["quick_replies"] == [{"label": "Yes"}, {"label": "Not now"}]

    sent = await chat.person.say(chat.conversation_id, "Not now")
    event = await backend.wait_event(
        lambda e: is_person_message(e) and e["data"]["message"]["id"] == sent["id"]
    )
    assert event["data"]["message"]["body"] == {"text": "Not now"}  # no action attached


async def test_only_agents_send_buttons_and_quick_replies(chat_with: Any) -> None:
    chat = await chat_with()
    for extra in ({"buttons": [[{"id": "x", "label": "X"}]]}, {"quick_replies": [{"label": "Y"}]}):
        answer = await chat.person.send(chat.conversation_id, "look", **extra)
        assert answer.status_code in (403, 422), answer.text
        error_of(answer)


def _button(**fields: Any) -> dict[str, Any]:
    return {"id": "ok", "label": "OK", **fields}


BAD_BUTTONS = {
    "four rows": [[_button(id=f"r{i}")] for i in range(4)],
    "four in a row": [[_button(id=f"b{i}") for i in range(4)]],
    "an empty row": [[]],
    "empty label": [[_button(label="")]],
    "label of 41": [[_button(label="x" * 41)]],
    "id with a space": [[_button(id="a b")]],
    "id of 65": [[_button(id="x" * 65)]],
    "duplicate ids": [[_button(), _button()]],
    "id and url": [[_button(url="https://example.com")]],
    "neither id nor url": [[{"label": "Lonely"}]],
    "unknown style": [[_button(style="fancy")]],
    "ftp url": [[{"url": "ftp://example.com/x", "label": "File"}]],
    "javascript url": [[{"url": "javascript:alert(1)", "label": "Run"}]],
    "url of 2049": [[{"url": "https://e.com/" + "x" * (2049 - 14), "label": "Long"}]],
}

GOOD_BUTTONS = {
    "three rows of three": [[_button(id=f"b{r}{c}") for c in range(3)] for r in range(3)],
    "label of 40": [[_button(label="x" * 40)]],
    "id of 64 with every allowed char": [[_button(id=("Az09_.:-" * 8))]],
    "plain http": [[{"url": "http://example.com/", "label": "Site"}]],
    "upi and tel": [
        [{"url": "upi://pay?pa=x@y", "label": "Pay"}, {"url": "tel:+911234", "label": "Call"}]
    ],
    "url of 2048": [[{"url": "https://e.com/" + "x" * (2048 - 14), "label": "Long"}]],
    "danger": [[_button(style="danger")]],
}


@pytest.mark.parametrize("case", sorted(BAD_BUTTONS))
async def test_bad_buttons_are_422_invalid_buttons(chat_with: Any, case: str) -> None:
    chat = await chat_with()
    answer = await chat.backend.post_message(
        chat.conversation_id, text="pick", buttons=BAD_BUTTONS[case]
    )
    assert answer.status_code == 422, answer.text
    error = error_of(answer)
    assert error["code"] == "invalid_buttons"
    assert error.get("field") == "buttons", error  # one field is at fault


async def test_good_buttons_at_the_limits_are_accepted(chat_with: Any) -> None:
    chat = await chat_with()
    for case, rows in GOOD_BUTTONS.items():
        answer = await chat.backend.post_message(chat.conversation_id, text=case, buttons=rows)
        assert answer.status_code == 201, (case, answer.text)


async def test_quick_replies_are_at_most_six(chat_with: Any) -> None:
    chat = await chat_with()
    six = [{"label": f"q{i}"} for i in range(6)]
    answer = await chat.backend.post_message(chat.conversation_id, text="six", quick_replies=six)
    assert answer.status_code == 201, answer.text
    seven = [{"label": f"q{i}"} for i in range(7)]
    answer = await chat.backend.post_message(chat.conversation_id, text="7", quick_replies=seven)
    assert answer.status_code == 422, answer.text
    error_of(answer)
