"""Streams over HTTP: start, append, finish with buttons; the clamp, idle truncation, stop."""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx
import pytest

from tests.devserver.cuckoo.wire import Agent, dev, error_of, make_agent


@pytest.fixture
def agent(http: httpx.Client, hub_url: str) -> Agent:
    return make_agent(http, hub_url)


def start(agent: Agent, http: httpx.Client) -> dict:
    response = agent.send(http, stream=True)
    assert response.status_code == 201, response.text
    message: dict = response.json()["message"]
    assert message["status"] == "streaming"
    return message


def test_a_stream_from_start_to_finish(agent: Agent, http: httpx.Client) -> None:
    message = start(agent, http)
    for piece in ("Hel", "lo ", "there"):
        assert (
            agent.post(http, f"/messages/{message['id']}/append", {"text": piece}).status_code
            == 204
        )
    buttons = [[{"id": "ok", "label": "OK"}]]
    finished = agent.post(http, f"/messages/{message['id']}/finish", {"buttons": buttons})
    assert finished.status_code == 200, finished.text
    done = finished.json()["message"]
    assert done["status"] == "complete" and done["body"]["text"] == "Hello there"
    assert done["body"]["buttons"][0][0]["id"] == "ok" and done["truncated"] is False
    assert done["signature"] != message["signature"]
    again = agent.post(http, f"/messages/{message['id']}/finish")
    assert again.status_code == 200 and again.json()["message"] == done
    late = agent.post(http, f"/messages/{message['id']}/append", {"text": "more"})
    assert late.status_code == 409 and error_of(late)["code"] == "not_streaming"


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"stream": True, "text": "early"}, "stream_with_text"),
        ({"stream": True, "buttons": [[{"id": "a", "label": "A"}]]}, "stream_with_buttons"),
        ({"stream": True, "quick_replies": [{"label": "A"}]}, "stream_with_buttons"),
        (
            {"stream": True, "attachments": ["med_0000000000000000000000000a"]},
            "stream_with_attachments",
        ),
    ],
)
def test_a_start_with_content_is_refused(
    agent: Agent, http: httpx.Client, body: dict, code: str
) -> None:
    response = agent.send(http, **body)
    assert response.status_code == 422 and error_of(response)["code"] == code


def test_only_the_owner_of_a_stream_appends_or_finishes(agent: Agent, http: httpx.Client) -> None:
    message = start(agent, http)
    other = make_agent(http, agent.url)
    response = other.post(http, f"/messages/{message['id']}/append", {"text": "x"})
    assert response.status_code == 409 and error_of(response)["code"] == "not_streaming"
    response = other.post(http, f"/messages/{message['id']}/finish")
    assert response.status_code == 404 and error_of(response)["code"] == "stream_not_found"


def test_text_past_8000_is_clamped_and_truncated(agent: Agent, http: httpx.Client) -> None:
    message = start(agent, http)
    for _ in range(3):
        agent.post(http, f"/messages/{message['id']}/append", {"text": "x" * 3000})
    done = agent.post(http, f"/messages/{message['id']}/finish").json()["message"]
    assert len(done["body"]["text"]) == 8000 and done["truncated"] is True


@pytest.mark.slow
def test_an_idle_stream_is_finished_as_truncated(cuckoo_hub: Callable[..., str]) -> None:
    url = cuckoo_hub(stream_idle_seconds=0.3, stream_sweep_interval=0.05)
    with httpx.Client() as http:
        agent = make_agent(http, url)
        message = start(agent, http)
        agent.post(http, f"/messages/{message['id']}/append", {"text": "part"})
        time.sleep(0.8)
        history = agent.get(http, f"/conversations/{agent.conversation_id}/messages").json()
        row = next(m for m in history["messages"] if m["id"] == message["id"])
        assert (row["status"], row["truncated"], row["body"]["text"]) == ("complete", True, "part")


@pytest.mark.slow
def test_a_long_stream_is_finished_after_the_maximum(cuckoo_hub: Callable[..., str]) -> None:
    url = cuckoo_hub(stream_idle_seconds=10, stream_max_seconds=0.4, stream_sweep_interval=0.05)
    with httpx.Client() as http:
        agent = make_agent(http, url)
        message = start(agent, http)
        deadline = time.monotonic() + 10  # a wait for the sweep, not a measure
        while time.monotonic() < deadline:
            answer = agent.post(http, f"/messages/{message['id']}/append", {"text": "."})
            if answer.status_code == 409:
                break
            time.sleep(0.05)
        history = agent.get(http, f"/conversations/{agent.conversation_id}/messages").json()
        row = next(m for m in history["messages"] if m["id"] == message["id"])
        assert row["status"] == "complete" and row["body"]["text"].startswith(".")


def test_a_person_stops_a_reply(agent: Agent, http: httpx.Client) -> None:
    message = start(agent, http)
    agent.post(http, f"/messages/{message['id']}/append", {"text": "Working on"})
    stopped = http.post(
        f"{agent.url}/v1/client/conversations/{agent.conversation_id}/stop",
        headers=dev(agent.owner),
    )
    assert stopped.status_code == 200, stopped.text
    [row] = stopped.json()["stopped"]
    assert (row["id"], row["stopped"], row["truncated"], row["status"]) == (
        message["id"],
        True,
        True,
        "complete",
    )
    late = agent.post(http, f"/messages/{message['id']}/append", {"text": "more"})
    assert late.status_code == 409 and error_of(late)["code"] == "stopped"
    [event] = [e for e in agent.events(http) if e["type"] == "stop.requested"]
    assert event["data"] == {
        "conversation": {"id": agent.conversation_id, "kind": "dm"},
        "message_id": message["id"],
    }


def test_typing_and_activity_rules(agent: Agent, http: httpx.Client) -> None:
    path = f"/conversations/{agent.conversation_id}"
    assert agent.post(http, f"{path}/typing", {"state": "start"}).status_code == 204
    assert agent.post(http, f"{path}/typing", {"state": "stop"}).status_code == 204
    assert (
        error_of(agent.post(http, f"{path}/typing", {"state": "maybe"}))["code"] == "invalid_state"
    )
    assert (
        agent.post(http, f"{path}/activity", {"state": "working", "label": "Searching"}).status_code
        == 204
    )
    for label in ("x" * 41, "see https://x.io", "www.example.com", "two\nlines"):
        bad = agent.post(http, f"{path}/activity", {"state": "working", "label": label})
        assert bad.status_code == 422 and error_of(bad)["code"] == "invalid_label"
    bad = agent.post(http, f"{path}/activity", {"state": "thinking", "label": "Hmm"})
    assert error_of(bad)["code"] == "invalid_label"
    # Typing is not an agent-facing event, and nothing is stored.
    assert [e["type"] for e in agent.events(http)] == ["conversation.joined"]
