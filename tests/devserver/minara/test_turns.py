"""Turns: the test-mode messages of the contract, the request's validation, idempotency,
models, interrupt and interject, and the older SSE revision."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx
import pytest

from tests.devserver.minara.wire import (
    Socket,
    run_turn,
    session_detail,
    start_turn,
    text_of,
    types_of,
    wait_until_idle,
)
from tests.helpers import AUTH, TEST_TOKEN, iter_sse


def _datas(events: list[tuple[int, dict]], kind: str) -> list[dict]:
    return [event["data"] for _, event in events if event["type"] == kind]


def test_the_answer_is_session_kind_and_is_new(http: httpx.Client, fast_url: str) -> None:
    answer = start_turn(http, fast_url, "minara-test:echo hi")
    assert answer["kind"] == "chat" and answer["is_new"] is True
    assert answer["session_id"].startswith("chat_")
    again = start_turn(http, fast_url, "minara-test:echo again", session_id=answer["session_id"])
    assert again == {"session_id": answer["session_id"], "kind": "chat", "is_new": False}


def test_echo_is_start_three_deltas_done(http: httpx.Client, fast_url: str) -> None:
    session_id, events = run_turn(http, fast_url, "minara-test:echo  spaced  out ")
    assert types_of(events) == ["start", "text_delta", "text_delta", "text_delta", "done"]
    assert text_of(events) == " spaced  out "
    start = events[0][1]["data"]
    assert start["session_id"] == session_id and start["protocol_version"] == 1
    assert start["turn_id"].startswith("turn_")
    assert events[-1][1]["data"] == {}


def test_count_sends_numbered_deltas_apart(
    http: httpx.Client, fast_url: str, pauses: list[float]
) -> None:
    _, events = run_turn(http, fast_url, "minara-test:count 5")
    assert [data["text"] for data in _datas(events, "text_delta")] == ["1 ", "2 ", "3 ", "4 ", "5 "]
    pauses.clear()
    _, events = run_turn(http, fast_url, "minara-test:count 4 100")
    assert pauses == [0.1, 0.1, 0.1]  # 100 ms between the numbers
    assert text_of(events) == "1 2 3 4 "


def test_tools_repeat_a_start_and_fail_one_call(http: httpx.Client, fast_url: str) -> None:
    _, events = run_turn(http, fast_url, "minara-test:tools")
    assert types_of(events) == [
        "start",
        "tool_call_start",
        "tool_call_start",
        "tool_call_end",
        "tool_call_start",
        "tool_call_end",
        "text_delta",
        "done",
    ]
    starts = _datas(events, "tool_call_start")
    assert starts[0] == starts[1]
    assert starts[0]["id"] == "t1" and starts[0]["name"] == "lookup"
    assert starts[0]["label"] == "Looking up prices" and isinstance(starts[0]["args"], dict)
    assert starts[2]["id"] == "t2" and starts[2]["name"] == "swap_quote"
    ends = _datas(events, "tool_call_end")
    assert ends[0]["id"] == "t1" and ends[0]["ok"] is True
    assert ends[1] == {"id": "t2", "ok": False, "error": "Quote expired"}
    assert text_of(events) == "Tools done."


def test_blocks_one_of_each_kind(http: httpx.Client, fast_url: str) -> None:
    _, events = run_turn(http, fast_url, "minara-test:blocks")
    assert types_of(events)[:2] == ["start", "text_delta"]
    blocks = [data["block"] for data in _datas(events, "ui_block")]
    assert [block["kind"] for block in blocks][:5] == ["markdown", "table", "kv", "link", "chart"]
    table, kv, link, chart = blocks[1], blocks[2], blocks[3], blocks[4]
    assert len(table["columns"]) == 3 and len(table["rows"]) == 4
    assert all(len(row) == 3 for row in table["rows"])
    assert len(kv["items"]) == 3 and all({"label", "value"} <= set(i) for i in kv["items"])
    assert link["url"] == "https://example.com/docs" and link["label"]
    assert chart["title"] and len(chart["series"]) == 2
    for series in chart["series"]:
        assert len(series["points"]) == 6
        assert all(isinstance(x, str) and isinstance(y, int | float) for x, y in series["points"])
    unknown = blocks[5:]
    assert len(unknown) == 2
    assert unknown[0]["kind"] == "map" and unknown[0]["fallback_text"]
    assert unknown[1]["kind"] not in ("markdown", "table", "kv", "link", "chart", "map")
    assert "fallback_text" not in unknown[1]
    ids = [data["id"] for data in _datas(events, "ui_block")]
    assert len(set(ids)) == 7
    assert types_of(events)[-1] == "done"


def test_todos_are_replaced_whole_as_they_get_done(http: httpx.Client, fast_url: str) -> None:
    _, events = run_turn(http, fast_url, "minara-test:todos")
    assert types_of(events) == ["start", "todos", "text_delta", "todos", "todos", "done"]
    lists = [data["items"] for data in _datas(events, "todos")]
    assert [[item["done"] for item in items] for items in lists] == [
        [False, False, False],
        [True, False, False],
        [True, True, True],
    ]
    assert len({item["text"] for items in lists for item in items}) == 3


def test_error_ends_the_turn_after_partial_text(http: httpx.Client, fast_url: str) -> None:
    _, events = run_turn(http, fast_url, "minara-test:error")
    assert types_of(events) == ["start", "text_delta", "error"]
    assert text_of(events) == "Partial."
    assert events[-1][1]["data"] == {
        "code": "agent_failed",
        "message": "The agent failed on purpose.",
        "retryable": True,
    }


def test_version2_announces_protocol_version_2(http: httpx.Client, fast_url: str) -> None:
    _, events = run_turn(http, fast_url, "minara-test:version2")
    assert events[0][1]["data"]["protocol_version"] == 2
    assert types_of(events) == ["start", "text_delta", "done"]


def test_unknown_events_and_fields_between_a_b_c(http: httpx.Client, fast_url: str) -> None:
    _, events = run_turn(http, fast_url, "minara-test:unknown")
    known = {"start", "text_delta", "done", "todos", "tool_call_start", "tool_call_end"}
    kinds = types_of(events)
    assert any(kind not in known for kind in kinds)
    assert text_of(events) == "abc"
    deltas = _datas(events, "text_delta")
    assert any(set(data) - {"text"} for data in deltas)  # a known event with unknown fields
    positions = [i for i, kind in enumerate(kinds) if kind == "text_delta"]
    assert any(kind not in known for kind in kinds[positions[0] : positions[-1]])


def test_huge_sends_a_frame_over_1_mib_then_more(http: httpx.Client, fast_url: str) -> None:
    answer = start_turn(http, fast_url, "minara-test:huge")
    with Socket(fast_url) as socket:
        socket.subscribe(answer["session_id"])
        sizes = []
        while True:
            raw = socket.ws.recv(timeout=10)
            frame = json.loads(raw)
            if frame.get("type") != "event":
                continue
            sizes.append(len(raw.encode() if isinstance(raw, str) else raw))
            if frame["event"]["type"] == "done":
                break
            last = frame["event"]
    assert max(sizes) > 1024 * 1024
    assert last == {"type": "text_delta", "data": {"text": "after"}}


def test_endless_runs_until_interrupted(http: httpx.Client, fast_url: str) -> None:
    session_id = start_turn(http, fast_url, "minara-test:endless")["session_id"]
    with Socket(fast_url) as socket:
        socket.subscribe(session_id)
        for _ in range(3):
            assert socket.next_event(session_id)[1]["type"] in ("start", "text_delta")
        stop = http.post(
            f"{fast_url}/v1/chat/interrupt", json={"session_id": session_id}, headers=AUTH
        )
        assert stop.json() == {"status": "interrupted"}
        events = socket.events(session_id)
    assert events[-1][1] == {"type": "done", "data": {"interrupted": True}}
    detail = wait_until_idle(http, fast_url, session_id)
    assert detail["messages"][-1]["metadata"]["interrupted"] is True
    body = {"session_id": session_id}
    again = http.post(f"{fast_url}/v1/chat/interrupt", json=body, headers=AUTH)
    assert again.status_code == 200 and again.json() == {"status": "no_active_turn"}


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"session_id": ""},
        {"session_id": 3},
    ],
)
def test_interrupt_needs_a_session_id(http: httpx.Client, fast_url: str, body: dict) -> None:
    response = http.post(f"{fast_url}/v1/chat/interrupt", json=body, headers=AUTH)
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_request"


def test_interrupt_and_interject_of_an_unknown_session_are_404(
    http: httpx.Client, fast_url: str
) -> None:
    for path, body in (
        ("interrupt", {"session_id": "chat_nope"}),
        ("interject", {"session_id": "chat_nope", "message": "x"}),
    ):
        response = http.post(f"{fast_url}/v1/chat/{path}", json=body, headers=AUTH)
        assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"


def test_interjections_early_echoed_late_returned_in_done(
    http: httpx.Client, fast_url: str
) -> None:
    session_id = start_turn(http, fast_url, "minara-test:slow")["session_id"]
    with Socket(fast_url) as socket:
        socket.subscribe(session_id)
        assert socket.next_event(session_id)[1]["type"] == "start"
        assert socket.next_event(session_id)[1]["type"] == "text_delta"
        early = http.post(
            f"{fast_url}/v1/chat/interject",
            json={"session_id": session_id, "message": "focus on ETH"},
            headers=AUTH,
        )
        assert early.status_code == 200 and early.json() == {"status": "injected"}
        events = socket.events(session_id, until=("text_delta",))
        while events[-1][1]["data"]["text"] != "part 17 ":
            events += socket.events(session_id, until=("text_delta",))
        late = http.post(
            f"{fast_url}/v1/chat/interject",
            json={"session_id": session_id, "message": "and SOL"},
            headers=AUTH,
        )
        assert late.json() == {"status": "injected"}
        events += socket.events(session_id)
    echoes = _datas(events, "user_interjection")
    assert [echo["message"] for echo in echoes] == ["focus on ETH"]
    assert isinstance(echoes[0]["ts_ms"], int)
    assert events[-1][1] == {"type": "done", "data": {"pending_interjections": ["and SOL"]}}
    assert len(_datas(events, "text_delta")) == 19  # the first one was read before
    after = http.post(
        f"{fast_url}/v1/chat/interject",
        json={"session_id": session_id, "message": "too late"},
        headers=AUTH,
    )
    assert after.status_code == 409 and after.json() == {"status": "no_active_turn"}


@pytest.mark.parametrize(
    "body", [{"message": "x"}, {"session_id": "chat_x"}, {"session_id": "chat_x", "message": ""}]
)
def test_interject_needs_session_and_message(http: httpx.Client, fast_url: str, body: dict) -> None:
    response = http.post(f"{fast_url}/v1/chat/interject", json=body, headers=AUTH)
    assert response.status_code == 400


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({}, "invalid_request"),
        ({"message": 5}, "invalid_request"),
        ({"message": "   "}, "invalid_request"),
        ({"message": "hi", "kind": "voice"}, "invalid_request"),
        ({"message": "hi", "attachments": "x"}, "invalid_request"),
        ({"message": "hi", "model": "gpt-9"}, "invalid_model"),
        ({"message": "hi", "reasoning_effort": "high"}, "invalid_model"),
        ({"message": "hi", "model": "minara-fast", "reasoning_effort": "low"}, "invalid_model"),
        ({"message": "hi", "model": "minara-pro", "reasoning_effort": "extreme"}, "invalid_model"),
    ],
)
def test_a_bad_turn_request_is_a_400_before_any_turn(
    http: httpx.Client, fast_url: str, body: dict, code: str
) -> None:
    before = http.get(f"{fast_url}/v1/sessions", headers=AUTH).json()["total"]
    response = http.post(f"{fast_url}/v1/chat/stream", json=body, headers=AUTH)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == code and error["message"]
    assert http.get(f"{fast_url}/v1/sessions", headers=AUTH).json()["total"] == before


def test_a_body_that_is_not_json_is_a_400(http: httpx.Client, fast_url: str) -> None:
    response = http.post(f"{fast_url}/v1/chat/stream", content=b"{nope", headers=AUTH)
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_request"


def test_a_turn_in_an_unknown_session_is_404(http: httpx.Client, fast_url: str) -> None:
    response = http.post(
        f"{fast_url}/v1/chat/stream",
        json={"message": "hi", "session_id": "chat_nope"},
        headers=AUTH,
    )
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"


def test_a_second_turn_while_one_runs_is_409(http: httpx.Client, fast_url: str) -> None:
    session_id = start_turn(http, fast_url, "minara-test:endless")["session_id"]
    response = http.post(
        f"{fast_url}/v1/chat/stream",
        json={"message": "hi", "session_id": session_id},
        headers=AUTH,
    )
    assert response.status_code == 409 and response.json()["error"]["code"] == "turn_in_progress"
    http.post(f"{fast_url}/v1/chat/interrupt", json={"session_id": session_id}, headers=AUTH)
    wait_until_idle(http, fast_url, session_id)


def test_the_models_and_a_chosen_one_on_the_row(http: httpx.Client, fast_url: str) -> None:
    models = http.get(f"{fast_url}/v1/llm/available-models", headers=AUTH).json()
    assert models == {
        "models": [
            {"id": "minara-fast", "label": "Minara Fast"},
            {"id": "minara-pro", "label": "Minara Pro", "reasoning": True},
        ],
        "default": "minara-fast",
    }
    session_id, _ = run_turn(
        http, fast_url, "minara-test:echo pro", model="minara-pro", reasoning_effort="high"
    )
    metadata = wait_until_idle(http, fast_url, session_id)["messages"][-1]["metadata"]
    assert (metadata["model"], metadata["reasoning_effort"]) == ("minara-pro", "high")
    session_id, _ = run_turn(http, fast_url, "minara-test:echo default")
    metadata = wait_until_idle(http, fast_url, session_id)["messages"][-1]["metadata"]
    assert "model" not in metadata and "reasoning_effort" not in metadata


def test_a_repeated_client_message_id_starts_no_new_turn(http: httpx.Client, fast_url: str) -> None:
    first = start_turn(http, fast_url, "minara-test:echo once", client_message_id="cm-once-1")
    session_id = first["session_id"]
    wait_until_idle(http, fast_url, session_id)
    # Without the session id (the first answer was lost) and with it: the same session, no turn.
    for extra in ({}, {"session_id": session_id}):
        again = start_turn(
            http, fast_url, "minara-test:echo once", client_message_id="cm-once-1", **extra
        )
        assert again == {"session_id": session_id, "kind": "chat", "is_new": False}
    detail = wait_until_idle(http, fast_url, session_id)
    assert [row["role"] for row in detail["messages"]] == ["user", "assistant"]
    assert detail["messages"][0]["id"] == "cm-once-1"
    assert detail["last_seq"] == 5
    elsewhere = http.post(
        f"{fast_url}/v1/chat/stream",
        json={
            "message": "x",
            "client_message_id": "cm-once-1",
            "session_id": start_turn(http, fast_url, "minara-test:echo other")["session_id"],
        },
        headers=AUTH,
    )
    assert elsewhere.status_code == 409


def test_a_repeat_while_the_turn_runs_is_not_a_409(http: httpx.Client, fast_url: str) -> None:
    first = start_turn(http, fast_url, "minara-test:endless", client_message_id="cm-running-1")
    again = start_turn(http, fast_url, "minara-test:endless", client_message_id="cm-running-1")
    assert again["is_new"] is False and again["session_id"] == first["session_id"]
    http.post(
        f"{fast_url}/v1/chat/interrupt", json={"session_id": first["session_id"]}, headers=AUTH
    )
    wait_until_idle(http, fast_url, first["session_id"])


def _sse_events(http: httpx.Client, url: str, body: dict) -> tuple[httpx.Response, list[dict]]:
    headers = {**AUTH, "Accept": "text/event-stream"}
    with http.stream("POST", f"{url}/v1/chat/stream", json=body, headers=headers) as response:
        found = [
            json.loads(data) for kind, data in iter_sse(response.iter_text()) if kind == "data"
        ]
    return response, found


def test_the_sse_revision_streams_the_same_events(http: httpx.Client, fast_url: str) -> None:
    response, events = _sse_events(http, fast_url, {"message": "minara-test:tools"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    session_id = response.headers["x-session-id"]
    assert events[0]["type"] == "start"
    assert events[0]["data"]["session_id"] == session_id
    assert all(set(event) == {"type", "data"} for event in events)
    with Socket(fast_url) as socket:
        socket.subscribe(session_id)
        assert [event for _, event in socket.events(session_id)] == events


def test_the_sse_revision_of_a_repeat_replays_the_stored_answer(
    http: httpx.Client, fast_url: str
) -> None:
    body = {"message": "minara-test:echo stored", "client_message_id": "cm-sse-1"}
    _, first = _sse_events(http, fast_url, body)
    _, again = _sse_events(http, fast_url, body)
    assert [event["type"] for event in again] == ["start", "text_delta", "done"]
    assert again[1]["data"]["text"] == "stored"
    assert again[0]["data"]["turn_id"] == first[0]["data"]["turn_id"]


def test_the_sse_stream_pings_while_the_turn_is_silent(
    http: httpx.Client, minara_gateway: Callable[..., str]
) -> None:
    url = minara_gateway(test_mode=True, auth_token=TEST_TOKEN, sse_ping_interval=0.05)
    headers = {**AUTH, "Accept": "text/event-stream"}
    body = {"message": "minara-test:count 2 300"}
    with http.stream("POST", f"{url}/v1/chat/stream", json=body, headers=headers) as response:
        kinds = [kind for kind, _ in iter_sse(response.iter_text())]
    assert "comment" in kinds and kinds.count("data") == 4


def test_an_unknown_test_message_says_what_is_known(http: httpx.Client, fast_url: str) -> None:
    _, events = run_turn(http, fast_url, "minara-test:dance")
    assert "Known:" in text_of(events) and "echo" in text_of(events)


def test_test_messages_are_plain_text_outside_test_mode(
    http: httpx.Client, minara_gateway: Callable[..., str]
) -> None:
    url = minara_gateway(auth_token=TEST_TOKEN)
    _, events = run_turn(http, url, "minara-test:echo hi")
    assert text_of(events) != "hi" and "portfolio" in text_of(events)
    session_id = start_turn(http, url, "minara-test:echo x")["session_id"]
    assert session_detail(http, url, session_id)["session"]["kind"] == "chat"
