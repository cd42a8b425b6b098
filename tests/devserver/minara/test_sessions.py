"""Sessions and their rows: listing, creating, reading, deleting, full-text search, and rows that
say exactly what was streamed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.devserver.minara.wire import (
    Socket,
    run_turn,
    session_detail,
    start_turn,
    text_of,
    wait_until_idle,
)
from tests.helpers import AUTH, TEST_TOKEN


def _fold(events: list[tuple[int, dict]]) -> list[dict[str, Any]]:
    """The segments a reducer of minara-stream.md builds from a turn's events (the test's own)."""
    segments: list[dict[str, Any]] = []
    tools: dict[str, dict[str, Any]] = {}
    for _, event in events:
        kind, data = event["type"], event["data"]
        if kind == "text_delta":
            if segments and segments[-1]["type"] == "text":
                segments[-1]["text"] += data["text"]
            else:
                segments.append({"type": "text", "text": data["text"]})
        elif kind == "tool_call_start" and data["id"] not in tools:
            tools[data["id"]] = {"type": "tool", "id": data["id"], "name": data["name"]}
            segments.append(tools[data["id"]])
        elif kind == "tool_call_end":
            tools[data["id"]]["ok"] = data["ok"]
        elif kind == "ui_block":
            segments.append({"type": "ui_block", "id": data["id"], "block": data["block"]})
        elif kind == "user_interjection":
            segments.append({"type": "interjection", "message": data["message"]})
        elif kind == "pending_question_added":
            segments.append({"type": "question", "id": data["id"], "outcome": None})
        elif kind == "pending_question_resolved":
            next(s for s in segments if s.get("id") == data["id"])["outcome"] = data["outcome"]
    return segments


def _comparable(segment: dict[str, Any]) -> dict[str, Any]:
    keys = {"text": ("type", "text"), "tool": ("type", "id", "name", "ok")}
    keys.update({"question": ("type", "id", "outcome")})
    wanted = keys.get(segment["type"])
    return {key: segment.get(key) for key in wanted} if wanted else segment


@pytest.mark.parametrize(
    "message",
    [
        "minara-test:echo hello there",
        "minara-test:tools",
        "minara-test:blocks",
        "minara-test:todos",
        "minara-test:unknown",
        "minara-test:error",
        "minara-test:question select 0.2",
        "portfolio",
        "plan my week",
    ],
)
def test_the_assistant_row_is_what_was_streamed(
    http: httpx.Client, fast_url: str, message: str
) -> None:
    session_id, events = run_turn(http, fast_url, message)
    detail = wait_until_idle(http, fast_url, session_id)
    user, assistant = detail["messages"]
    assert (user["role"], user["content"]) == ("user", message)
    assert assistant["role"] == "assistant"
    assert assistant["id"] == events[0][1]["data"]["turn_id"]
    assert assistant["content"] == text_of(events)
    metadata = assistant["metadata"]
    assert [_comparable(s) for s in metadata["segments"]] == [_comparable(s) for s in _fold(events)]
    todos = [event["data"]["items"] for _, event in events if event["type"] == "todos"]
    assert metadata.get("todos") == (todos[-1] if todos else None)
    errors = [event["data"] for _, event in events if event["type"] == "error"]
    assert metadata.get("error") == (errors[0] if errors else None)
    assert detail["last_seq"] == events[-1][0]
    assert detail["is_streaming"] is False and detail["pending_questions"] == []


def test_the_row_of_an_interjected_turn(http: httpx.Client, fast_url: str) -> None:
    session_id = start_turn(http, fast_url, "minara-test:slow")["session_id"]
    with Socket(fast_url) as socket:
        socket.subscribe(session_id)
        first = socket.events(session_id, until=("text_delta",))
        body = {"session_id": session_id, "message": "also BTC"}
        http.post(f"{fast_url}/v1/chat/interject", json=body, headers=AUTH)
        events = first + socket.events(session_id)
    segments = wait_until_idle(http, fast_url, session_id)["messages"][-1]["metadata"]["segments"]
    assert [_comparable(s) for s in segments] == [_comparable(s) for s in _fold(events)]
    assert [s["type"] for s in segments] == ["text", "interjection", "text"]


def test_a_running_turn_has_no_assistant_row_yet(http: httpx.Client, fast_url: str) -> None:
    session_id = start_turn(http, fast_url, "minara-test:endless")["session_id"]
    detail = session_detail(http, fast_url, session_id)
    assert detail["is_streaming"] is True
    assert [row["role"] for row in detail["messages"]] == ["user"]
    http.post(f"{fast_url}/v1/chat/interrupt", json={"session_id": session_id}, headers=AUTH)
    assert [row["role"] for row in wait_until_idle(http, fast_url, session_id)["messages"]] == [
        "user",
        "assistant",
    ]


def test_the_row_is_stored_before_done_goes_out(http: httpx.Client, fast_url: str) -> None:
    for _ in range(5):
        session_id, _ = run_turn(http, fast_url, "minara-test:echo quick")
        detail = session_detail(http, fast_url, session_id)  # at once, no polling
        assert detail["is_streaming"] is False and len(detail["messages"]) == 2


def test_list_is_most_recently_updated_first_with_paging(
    http: httpx.Client, minara_gateway: Callable[..., str]
) -> None:
    url = minara_gateway(test_mode=True, auth_token=TEST_TOKEN)
    ids = [run_turn(http, url, f"minara-test:echo {n}")[0] for n in range(4)]
    run_turn(http, url, "minara-test:echo bump", session_id=ids[1])
    listing = http.get(f"{url}/v1/sessions", headers=AUTH).json()
    assert listing["total"] == 4
    assert [s["id"] for s in listing["sessions"]] == [ids[1], ids[3], ids[2], ids[0]]
    first = listing["sessions"][0]
    assert set(first) == {
        "id",
        "title",
        "kind",
        "origin",
        "created_at",
        "updated_at",
        "message_count",
    }
    assert first["message_count"] == 4 and first["kind"] == "chat"
    assert first["title"] == "minara-test:echo 1"
    page = http.get(f"{url}/v1/sessions?limit=2&offset=1", headers=AUTH).json()
    assert [s["id"] for s in page["sessions"]] == [ids[3], ids[2]] and page["total"] == 4
    assert http.get(f"{url}/v1/sessions?kind=chat", headers=AUTH).json()["total"] == 4
    assert http.get(f"{url}/v1/sessions?kind=goal", headers=AUTH).json()["total"] == 0
    for bad in ("limit=0", "limit=x", "offset=-1", "limit=1000"):
        assert http.get(f"{url}/v1/sessions?{bad}", headers=AUTH).status_code == 400


def test_create_session_then_talk_in_it(http: httpx.Client, fast_url: str) -> None:
    created = http.post(f"{fast_url}/v1/sessions", json={"title": "Weekly review"}, headers=AUTH)
    assert created.status_code == 200
    body = created.json()
    assert body["ok"] is True and body["data"]["created_at"].endswith("Z")
    session_id = body["data"]["id"]
    detail = session_detail(http, fast_url, session_id)
    assert detail["session"]["title"] == "Weekly review" and detail["messages"] == []
    assert detail["last_seq"] == 0
    answer = start_turn(http, fast_url, "minara-test:echo hi", session_id=session_id)
    assert answer == {"session_id": session_id, "kind": "chat", "is_new": False}
    for bad in ({"title": ""}, {"title": 3}, [1]):
        assert http.post(f"{fast_url}/v1/sessions", json=bad, headers=AUTH).status_code == 400


def test_a_long_first_message_makes_a_short_title(http: httpx.Client, fast_url: str) -> None:
    session_id = start_turn(http, fast_url, "minara-test:echo " + "word " * 40)["session_id"]
    title = session_detail(http, fast_url, session_id)["session"]["title"]
    assert len(title) <= 60 and title.endswith("…")


def test_delete_removes_the_session_rows_and_search_hits(http: httpx.Client, fast_url: str) -> None:
    session_id, _ = run_turn(http, fast_url, "minara-test:echo zanzibarite")
    hits = http.get(f"{fast_url}/v1/sessions/search?q=zanzibarite", headers=AUTH).json()
    assert {hit["session_id"] for hit in hits["results"]} == {session_id}
    assert http.delete(f"{fast_url}/v1/sessions/{session_id}", headers=AUTH).json() == {"ok": True}
    assert http.get(f"{fast_url}/v1/sessions/{session_id}", headers=AUTH).status_code == 404
    again = http.delete(f"{fast_url}/v1/sessions/{session_id}", headers=AUTH)
    assert again.status_code == 404 and again.json()["error"]["code"] == "not_found"
    hits = http.get(f"{fast_url}/v1/sessions/search?q=zanzibarite", headers=AUTH).json()
    assert hits["results"] == []


def test_deleting_a_session_stops_its_turn(http: httpx.Client, fast_url: str) -> None:
    session_id = start_turn(http, fast_url, "minara-test:endless")["session_id"]
    http.delete(f"{fast_url}/v1/sessions/{session_id}", headers=AUTH)
    assert http.get(f"{fast_url}/v1/sessions/{session_id}", headers=AUTH).status_code == 404
    body = {"session_id": session_id, "message": "x"}
    assert http.post(f"{fast_url}/v1/chat/interject", json=body, headers=AUTH).status_code == 404


def test_search_marks_the_match_and_ranks_best_first(
    http: httpx.Client, minara_gateway: Callable[..., str]
) -> None:
    url = minara_gateway(test_mode=True, auth_token=TEST_TOKEN)
    weak, _ = run_turn(
        http,
        url,
        "minara-test:echo a long note that mentions quasar only once among very many other "
        "words about markets, fees, wallets, charts, bridges and plans for the week ahead",
    )
    strong, _ = run_turn(http, url, "minara-test:echo quasar quasar quasar")
    run_turn(http, url, "minara-test:echo nothing to see")
    results = http.get(f"{url}/v1/sessions/search?q=quasar", headers=AUTH).json()["results"]
    assert {r["session_id"] for r in results} == {weak, strong}
    assert results[0]["session_id"] == strong
    for result in results:
        assert "«quasar»" in result["snippet"]
        assert set(result) >= {"session_id", "message_id", "title", "snippet"}
    # Prefixes, any case and accents match; FTS syntax in the query is just text.
    assert http.get(f"{url}/v1/sessions/search?q=QUAS", headers=AUTH).json()["results"]
    for query in ('"unbalanced', "NEAR(", "a AND", "-", "*"):
        response = http.get(f"{url}/v1/sessions/search", params={"q": query}, headers=AUTH)
        assert response.status_code == 200
    assert http.get(f"{url}/v1/sessions/search?q=", headers=AUTH).status_code == 400


def test_search_finds_accented_words_without_accents(http: httpx.Client, fast_url: str) -> None:
    session_id, _ = run_turn(http, fast_url, "minara-test:echo Příliš žluťoučký kůň")
    results = http.get(f"{fast_url}/v1/sessions/search?q=zlutoucky", headers=AUTH).json()
    hit = next(r for r in results["results"] if r["session_id"] == session_id)
    assert "«žluťoučký»" in hit["snippet"]


def test_unknown_session_is_404(http: httpx.Client, fast_url: str) -> None:
    response = http.get(f"{fast_url}/v1/sessions/chat_nope", headers=AUTH)
    assert response.status_code == 404
    assert response.json() == {
        "error": {"code": "not_found", "message": "Session chat_nope was not found."}
    }
