"""Chat runs (§5): streaming, history, idempotent retries, disconnect and cancel."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import httpx

from tests.helpers import (
    AUTH,
    TEST_TOKEN,
    ask,
    customs,
    iter_sse,
    new_id,
    run,
    run_body,
    text_of,
    types_of,
)


def _thread(http: httpx.Client, url: str, thread_id: str) -> dict:
    response = http.get(f"{url}/api/talkie/threads/{thread_id}", headers=AUTH)
    assert response.status_code == 200, response.text
    return response.json()


def test_stream_headers_and_framing(http: httpx.Client, fast_url: str) -> None:
    body = run_body("talkie-test:echo hello")
    with http.stream("POST", f"{fast_url}/api/talkie/run", json=body, headers=AUTH) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].split(";")[0] == "text/event-stream"
        assert response.headers["cache-control"] == "no-cache"
        assert response.headers["x-accel-buffering"] == "no"
        raw = response.read().decode()
    assert "\r" not in raw
    frames = raw.split("\n\n")
    assert frames[-1] == ""
    for frame in frames[:-1]:
        assert frame.startswith("data: ") and "\n" not in frame
        event = json.loads(frame[len("data: ") :])
        assert None not in event.values()
        assert all("_" not in key for key in event)  # camelCase


def test_run_lifecycle_events(http: httpx.Client, fast_url: str) -> None:
    body = run_body("talkie-test:echo hi")
    events = run(http, fast_url, body)
    assert events[0] == {
        "type": "RUN_STARTED",
        "timestamp": events[0]["timestamp"],
        "threadId": body["threadId"],
        "runId": body["runId"],
    }
    assert events[-1]["type"] == "RUN_FINISHED"
    assert events[-1]["outcome"] == {"type": "success"}
    assert (events[-1]["threadId"], events[-1]["runId"]) == (body["threadId"], body["runId"])
    assert events[-2]["type"] == "CUSTOM" and events[-2]["name"] == "talkie.usage"
    assert isinstance(events[0]["timestamp"], int)


def test_usage_event_matches_status(http: httpx.Client, fast_url: str) -> None:
    events = ask(http, fast_url, "talkie-test:echo count me")
    (usage,) = customs(events, "talkie.usage")
    status = http.get(f"{fast_url}/api/talkie/status", headers=AUTH).json()
    assert usage == {"usage": status["usage"]}


def test_new_thread_gets_title_from_first_message(http: httpx.Client, fast_url: str) -> None:
    thread_id = new_id("t")
    long_text = "talkie-test:echo " + "\x1b[31mred\x07 " + "word " * 30
    ask(http, fast_url, long_text, thread_id=thread_id)
    ask(http, fast_url, "talkie-test:echo second", thread_id=thread_id)
    thread = _thread(http, fast_url, thread_id)["thread"]
    title = thread["title"]
    assert title.startswith("talkie-test:echo [31mred word")
    assert title.endswith("…") and len(title) <= 60
    assert not any(ord(char) < 32 for char in title)
    assert thread["channel"] == "chat"


def test_server_keeps_history(http: httpx.Client, fast_url: str) -> None:
    thread_id = new_id("t")
    ask(http, fast_url, "talkie-test:echo one", thread_id=thread_id)
    ask(http, fast_url, "talkie-test:echo two", thread_id=thread_id)
    messages = _thread(http, fast_url, thread_id)["messages"]
    assert [(m["role"], m["content"]) for m in messages] == [
        ("user", "talkie-test:echo one"),
        ("assistant", "one"),
        ("user", "talkie-test:echo two"),
        ("assistant", "two"),
    ]


def test_full_history_in_request_only_answers_the_new_message(
    http: httpx.Client, fast_url: str
) -> None:
    first = run_body("talkie-test:echo first")
    run(http, fast_url, first)
    second = run_body("talkie-test:echo second", thread_id=first["threadId"])
    # A generic AG-UI client resends the whole conversation.
    second["messages"] = [
        *first["messages"],
        {"id": new_id("x"), "role": "assistant", "content": "first"},
        *second["messages"],
    ]
    assert text_of(run(http, fast_url, second)) == "second"
    messages = _thread(http, fast_url, first["threadId"])["messages"]
    assert [m["content"] for m in messages] == [
        "talkie-test:echo first", "first", "talkie-test:echo second", "second",
    ]  # fmt: skip


def test_unknown_fields_are_ignored(http: httpx.Client, fast_url: str) -> None:
    body = run_body("talkie-test:echo ok")
    body.update(protocolVersion="9.9", somethingNew={"x": 1}, parentRunId="p")
    body["messages"][0]["extra"] = True
    assert text_of(run(http, fast_url, body)) == "ok"


def test_content_parts_are_accepted(http: httpx.Client, fast_url: str) -> None:
    body = run_body("")
    body["messages"][0]["content"] = [
        {"type": "text", "text": "talkie-test:echo "},
        {"type": "text", "text": "parts"},
    ]
    assert text_of(run(http, fast_url, body)) == "parts"


def test_idempotent_retry_answers_once(http: httpx.Client, fast_url: str) -> None:
    body = run_body("talkie-test:echo only once")
    first = run(http, fast_url, body)
    retry = run_body("talkie-test:echo only once", thread_id=body["threadId"])
    retry["messages"] = body["messages"]  # same message id, new run id
    second = run(http, fast_url, retry)
    assert text_of(first) == text_of(second) == "only once"
    assert second == first  # a replay of the same run
    messages = _thread(http, fast_url, body["threadId"])["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"]


def test_retry_while_running_follows_the_live_run(http: httpx.Client, fast_url: str) -> None:
    body = run_body("talkie-test:slow")
    with http.stream("POST", f"{fast_url}/api/talkie/run", json=body, headers=AUTH) as first:
        frames = iter_sse(first.iter_text())
        next(frames)
        second = run(http, fast_url, body)
    assert second[-1]["type"] == "RUN_FINISHED"
    assert second[0]["runId"] == body["runId"]
    messages = _thread(http, fast_url, body["threadId"])["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[1]["content"] == text_of(second)


def test_retry_after_error_runs_again(http: httpx.Client, fast_url: str) -> None:
    body = run_body("talkie-test:error")
    first = run(http, fast_url, body)
    body["runId"] = new_id("r")
    second = run(http, fast_url, body)
    assert types_of(first) == types_of(second) == ["RUN_STARTED", "RUN_ERROR"]
    assert second[0]["runId"] == body["runId"]
    messages = _thread(http, fast_url, body["threadId"])["messages"]
    # The failed answer is kept, once: the retry's took the first one's place.
    assert [m["role"] for m in messages] == ["user", "assistant"]
    failed = messages[1]
    assert failed["content"] == second[-1]["message"]  # the error's words, for any client
    assert [e["type"] for e in failed["events"]][-1] == "RUN_ERROR"


def test_reused_run_id_gets_a_server_run_id(http: httpx.Client, fast_url: str) -> None:
    first = run_body("talkie-test:echo a")
    run(http, fast_url, first)
    again = run_body("talkie-test:echo b", thread_id=first["threadId"], run_id=first["runId"])
    events = run(http, fast_url, again)
    assert text_of(events) == "b"
    assert events[0]["runId"] != first["runId"]
    assert events[-1]["runId"] == events[0]["runId"]


def test_disconnect_is_not_cancel(http: httpx.Client, fast_url: str) -> None:
    body = run_body("talkie-test:slow")
    with http.stream("POST", f"{fast_url}/api/talkie/run", json=body, headers=AUTH) as response:
        frames = iter_sse(response.iter_text())
        seen = [next(frames) for _ in range(2)]
    assert [kind for kind, _ in seen] == ["data", "data"]
    deadline = time.monotonic() + 5
    while True:
        messages = _thread(http, fast_url, body["threadId"])["messages"]
        if len(messages) == 2 or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    from talkie_tui.devserver.talkie.testmode import SLOW_TEXT

    assert messages[1]["role"] == "assistant"
    assert messages[1]["content"] == SLOW_TEXT
    # The stored log still replays completely.
    assert text_of(run(http, fast_url, body)) == SLOW_TEXT


def test_cancel_stops_the_run(http: httpx.Client, fast_url: str) -> None:
    body = run_body("talkie-test:slow")
    events = []
    with http.stream("POST", f"{fast_url}/api/talkie/run", json=body, headers=AUTH) as response:
        for kind, data in iter_sse(response.iter_text()):
            if kind != "data":
                continue
            events.append(json.loads(data))
            if len(events) == 4:
                cancel = http.post(
                    f"{fast_url}/api/talkie/runs/{body['runId']}/cancel", headers=AUTH
                )
                assert cancel.status_code == 200 and cancel.json() == {"ok": True}
    kinds = types_of(events)
    assert kinds[-2:] == ["TEXT_MESSAGE_END", "RUN_FINISHED"]
    assert events[-1]["outcome"] == {"type": "cancelled"}
    assert "talkie.usage" not in [e.get("name") for e in events]
    partial = text_of(events)
    from talkie_tui.devserver.talkie.testmode import SLOW_TEXT

    assert partial and SLOW_TEXT.startswith(partial) and partial != SLOW_TEXT
    messages = _thread(http, fast_url, body["threadId"])["messages"]
    assert messages[-1]["content"] == partial


def test_cancel_of_ended_or_unknown_run_is_ok(http: httpx.Client, fast_url: str) -> None:
    body = run_body("talkie-test:echo done")
    run(http, fast_url, body)
    for run_id in (body["runId"], "never-existed"):
        response = http.post(f"{fast_url}/api/talkie/runs/{run_id}/cancel", headers=AUTH)
        assert response.status_code == 200
        assert response.json() == {"ok": True}


def test_pings_while_silent(http: httpx.Client, devserver: Callable[..., str]) -> None:
    url = devserver(test_mode=True, dev_token=TEST_TOKEN, slow_seconds=1.0, ping_interval=0.02)
    body = run_body("talkie-test:slow")
    with http.stream("POST", f"{url}/api/talkie/run", json=body, headers=AUTH) as response:
        frames = list(iter_sse(response.iter_text()))
    comments = [payload for kind, payload in frames if kind == "comment"]
    assert comments and set(comments) == {"ping"}
    assert frames[-1][0] == "data"


def test_no_pings_when_busy(http: httpx.Client, fast_url: str) -> None:
    with http.stream(
        "POST", f"{fast_url}/api/talkie/run", json=run_body("talkie-test:echo x"), headers=AUTH
    ) as response:
        assert all(kind == "data" for kind, _ in iter_sse(response.iter_text()))
