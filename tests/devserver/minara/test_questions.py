"""The agent asks back: each kind answered, answers validated, not_pending, timeouts, secrets
through their credential route, and the resolution reaching every subscriber."""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any

import httpx
import pytest

from talkie_tui.devserver.minara import turn_context
from tests.devserver.minara.wire import Socket, start_turn, text_of, types_of, wait_until_idle
from tests.helpers import AUTH


def _ask(http: httpx.Client, url: str, socket: Socket, message: str) -> tuple[str, dict]:
    """Start a question turn and read up to its `pending_question_added`: (session, payload)."""
    session_id = start_turn(http, url, message)["session_id"]
    socket.subscribe(session_id)
    events = socket.events(session_id, until=("pending_question_added",))
    assert text_of(events) == "Asking."
    return session_id, events[-1][1]["data"]


def _answer(http: httpx.Client, url: str, question_id: str, *answers: dict) -> httpx.Response:
    return http.post(
        f"{url}/v1/interactions/{question_id}/answer",
        json={"answers": list(answers)},
        headers=AUTH,
    )


def _labels(*labels: str, index: int = 0) -> dict[str, Any]:
    return {"questionIndex": index, "selected_labels": list(labels)}


@pytest.mark.parametrize(
    ("kind", "answer", "text"),
    [
        ("select", _labels("Savings"), "Answer: Savings"),
        ("multi", _labels("Salary", "Travel"), "Answer: Salary, Travel"),
        ("confirm", _labels("Confirm"), "Answer: Confirm"),
        ("confirm", _labels("Cancel"), "Answer: Cancel"),
        ("input", {"questionIndex": 0, "free_text": "My list"}, "Answer: My list"),
        ("secret", _labels("declined"), "Answer: declined"),
    ],
)
def test_each_kind_answered(
    http: httpx.Client, fast_url: str, kind: str, answer: dict, text: str
) -> None:
    with Socket(fast_url) as socket:
        session_id, question = _ask(http, fast_url, socket, f"minara-test:question {kind}")
        assert question["id"].startswith("q_")
        assert question["kind"] == ("select" if kind == "multi" else kind)
        assert question["questions"] and question["expires_at"].endswith("Z")
        assert question["asked_by"]["agent"]
        detail = http.get(f"{fast_url}/v1/sessions/{session_id}", headers=AUTH).json()
        assert detail["pending_questions"] == [question] and detail["is_streaming"] is True
        response = _answer(http, fast_url, question["id"], answer)
        assert response.status_code == 200, response.text
        rest = socket.events(session_id)
    assert rest[0][1] == {
        "type": "pending_question_resolved",
        "data": {"id": question["id"], "outcome": "answered"},
    }
    assert text_of(rest) == text and types_of(rest)[-1] == "done"
    detail = wait_until_idle(http, fast_url, session_id)
    assert detail["pending_questions"] == []
    segments = detail["messages"][-1]["metadata"]["segments"]
    asked = [segment for segment in segments if segment["type"] == "question"]
    assert len(asked) == 1 and asked[0]["id"] == question["id"]
    assert asked[0]["outcome"] == "answered" and asked[0]["questions"] == question["questions"]


def test_the_question_payloads(http: httpx.Client, fast_url: str) -> None:
    found = {}
    for kind in ("select", "multi", "confirm", "input", "secret"):
        with Socket(fast_url) as socket:
            session_id, found[kind] = _ask(http, fast_url, socket, f"minara-test:question {kind}")
        http.post(f"{fast_url}/v1/chat/interrupt", json={"session_id": session_id}, headers=AUTH)
    labels = [option["label"] for option in found["select"]["questions"][0]["options"]]
    assert labels == ["Salary", "Savings", "Travel"]
    assert found["select"]["questions"][0]["multi"] is False
    assert found["multi"]["questions"][0]["multi"] is True
    confirm = [option["label"] for option in found["confirm"]["questions"][0]["options"]]
    assert confirm == ["Confirm", "Cancel"]
    assert "placeholder" in found["input"]["questions"][0]
    assert found["secret"]["writeEndpoint"].startswith("/v1/credentials/")


@pytest.mark.parametrize(
    ("kind", "body", "words"),
    [
        ("select", {"answers": [_labels("Gold")]}, "Gold"),
        ("select", {"answers": [_labels("Salary", "Travel")]}, "one label"),
        ("select", {"answers": [{"questionIndex": 0, "free_text": "Savings"}]}, "selected_labels"),
        ("select", {"answers": [_labels("Savings", index=1)]}, "out of range"),
        ("select", {"answers": [_labels("Savings"), _labels("Savings")]}, "twice"),
        ("select", {"answers": []}, "no answer"),
        ("select", {"value": "yes"}, "answers"),
        ("select", None, "answers"),
        ("select", {"answers": [{"selected_labels": ["Savings"]}]}, "questionIndex"),
        ("multi", {"answers": [_labels("Salary", "Salary")]}, "twice"),
        ("confirm", {"answers": [_labels("Yes")]}, "Yes"),
        ("input", {"answers": [_labels("x")]}, "free_text"),
        ("input", {"answers": [{"questionIndex": 0, "free_text": "  "}]}, "free_text"),
        ("secret", {"answers": [_labels("sk-123")]}, "sk-123"),
        ("secret", {"answers": [_labels("provided")]}, "/v1/credentials/"),
    ],
)
def test_a_bad_answer_is_a_400_and_the_question_stays_open(
    http: httpx.Client, fast_url: str, kind: str, body: Any, words: str
) -> None:
    with Socket(fast_url) as socket:
        session_id, question = _ask(http, fast_url, socket, f"minara-test:question {kind}")
        url = f"{fast_url}/v1/interactions/{question['id']}/answer"
        response = (
            http.post(url, content=b"not json", headers=AUTH)
            if body is None
            else http.post(url, json=body, headers=AUTH)
        )
        assert response.status_code == 400, response.text
        assert response.json()["error"]["code"] == "invalid_request"
        assert words in response.json()["error"]["message"]
        detail = http.get(f"{fast_url}/v1/sessions/{session_id}", headers=AUTH).json()
        assert [item["id"] for item in detail["pending_questions"]] == [question["id"]]
        http.post(f"{fast_url}/v1/chat/interrupt", json={"session_id": session_id}, headers=AUTH)
        socket.events(session_id)


def test_a_second_answer_and_an_unknown_id_are_not_pending(
    http: httpx.Client, fast_url: str
) -> None:
    with Socket(fast_url) as socket, Socket(fast_url) as other:
        session_id, question = _ask(http, fast_url, socket, "minara-test:question select")
        other.subscribe(session_id, from_seq=0)
        assert _answer(http, fast_url, question["id"], _labels("Travel")).status_code == 200
        late = _answer(http, fast_url, question["id"], _labels("Salary"))
        assert late.status_code == 404 and late.json()["error"]["code"] == "not_pending"
        # Both subscribers saw it resolved, whoever answered.
        for each in (socket, other):
            events = each.events(session_id)
            resolved = [
                event for _, event in events if event["type"] == "pending_question_resolved"
            ]
            assert resolved == [
                {
                    "type": "pending_question_resolved",
                    "data": {"id": question["id"], "outcome": "answered"},
                }
            ]
            assert text_of(events).endswith("Answer: Travel")
    unknown = _answer(http, fast_url, "q_nope", _labels("x"))
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "not_pending"
    bad_body = http.post(f"{fast_url}/v1/interactions/q_nope/answer", content=b"x", headers=AUTH)
    assert bad_body.status_code == 404


@pytest.mark.parametrize(
    ("kind", "text"),
    [
        ("select", "No answer: timed out."),
        ("confirm", "No answer: timed out. The action is cancelled."),
    ],
)
def test_an_unanswered_question_times_out(
    http: httpx.Client, fast_url: str, kind: str, text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # How long the gateway waited for an answer, as it asked the event loop to (not timed).
    waits: list[float | None] = []

    class Asyncio:
        def __getattr__(self, name: str) -> Any:
            return getattr(asyncio, name)

        async def wait(self, *args: Any, timeout: float | None = None, **kwargs: Any) -> Any:
            waits.append(timeout)
            return await asyncio.wait(*args, timeout=timeout, **kwargs)

    monkeypatch.setattr(turn_context, "asyncio", Asyncio())
    with Socket(fast_url) as socket:
        session_id, question = _ask(http, fast_url, socket, f"minara-test:question {kind} 0.3")
        rest = socket.events(session_id)
    assert waits == [0.3]
    assert rest[0][1]["data"] == {"id": question["id"], "outcome": "timeout"}
    assert text_of(rest) == text
    expired = _answer(http, fast_url, question["id"], _labels("Confirm"))
    assert expired.status_code == 404 and expired.json()["error"]["code"] == "not_pending"
    detail = wait_until_idle(http, fast_url, session_id)
    segment = next(
        s for s in detail["messages"][-1]["metadata"]["segments"] if s["type"] == "question"
    )
    assert segment["outcome"] == "timeout"


def test_interrupting_a_question_cancels_it(http: httpx.Client, fast_url: str) -> None:
    with Socket(fast_url) as socket:
        session_id, question = _ask(http, fast_url, socket, "minara-test:question confirm")
        http.post(f"{fast_url}/v1/chat/interrupt", json={"session_id": session_id}, headers=AUTH)
        rest = socket.events(session_id)
    assert [event for _, event in rest] == [
        {
            "type": "pending_question_resolved",
            "data": {"id": question["id"], "outcome": "cancelled"},
        },
        {"type": "done", "data": {"interrupted": True}},
    ]
    assert _answer(http, fast_url, question["id"], _labels("Confirm")).status_code == 404


def test_a_secret_goes_to_its_credential_route_and_is_never_echoed(
    http: httpx.Client, fast_url: str
) -> None:
    secret = "sk-live-0123456789"
    with Socket(fast_url) as socket:
        session_id, question = _ask(http, fast_url, socket, "minara-test:question secret")
        endpoint = question["writeEndpoint"]
        name = endpoint.rsplit("/", 1)[1]
        written = http.put(f"{fast_url}{endpoint}", json={"value": secret}, headers=AUTH)
        assert written.status_code == 200 and secret not in written.text
        assert _answer(http, fast_url, question["id"], _labels("provided")).status_code == 200
        rest = socket.events(session_id)
    assert text_of(rest) == "Answer: provided"
    state = http.get(f"{fast_url}/v1/_test/credentials/{name}", headers=AUTH).json()
    assert state == {"set": True, "sha256": hashlib.sha256(secret.encode()).hexdigest()}
    detail = wait_until_idle(http, fast_url, session_id)
    assert secret not in str(detail)
    assert http.get(f"{fast_url}/v1/_test/credentials/never_set", headers=AUTH).json() == {
        "set": False,
        "sha256": None,
    }


@pytest.mark.parametrize(
    ("name", "body"),
    [
        ("ok_name", {}),
        ("ok_name", {"value": ""}),
        ("ok_name", {"value": 5}),
        ("bad name!", {"value": "x"}),
        ("x" * 65, {"value": "x"}),
    ],
)
def test_a_bad_credential_write_is_a_400(
    http: httpx.Client, fast_url: str, name: str, body: dict
) -> None:
    response = http.put(f"{fast_url}/v1/credentials/{name}", json=body, headers=AUTH)
    assert response.status_code == 400
