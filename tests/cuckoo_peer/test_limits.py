"""Bounds the text names: rate limits, the idle stream, the 8000 clamp, frame and page caps."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from tests.cuckoo_peer.person import error_of


@pytest.mark.hub(person_send_rate=(0.5, 3))
async def test_too_fast_is_429_with_retry_after(chat_with: Any) -> None:
    chat = await chat_with(connect=False)
    for i in range(3):
        await chat.person.say(chat.conversation_id, f"burst {i}")
    answer = await chat.person.send(chat.conversation_id, "one too many")
    assert answer.status_code == 429, answer.text
    assert error_of(answer)["code"] == "rate_limited"
    retry_after = answer.headers.get("Retry-After")
    assert retry_after is not None and float(retry_after) > 0, answer.headers


@pytest.mark.hub(stream_idle_seconds=1.0)
async def test_an_idle_stream_is_finished_by_the_hub_and_marked_truncated(chat_with: Any) -> None:
    chat = await chat_with()
    watch = await chat.person.socket()
    try:
        started = await chat.backend.post_message(chat.conversation_id, stream=True)
        message_id = started.json()["message"]["id"]
        assert (await chat.backend.append(message_id, "cut sh")).status_code == 204
        completed = await watch.wait_frame(
            lambda f: (
                f.get("type") == "message.completed" and f["data"]["message"]["id"] == message_id
            ),
            timeout=15,
        )
    finally:
        await watch.close()
    assert completed["data"]["message"]["truncated"] is True
    in_history = await chat.person.message(chat.conversation_id, message_id)
    assert in_history["status"] == "complete"
    assert in_history["truncated"] is True
    assert in_history["body"]["text"] == "cut sh"
    late = await chat.backend.append(message_id, "ort")
    assert late.status_code == 409 and error_of(late)["code"] == "not_streaming"


async def test_stream_text_beyond_8000_is_clamped_and_marked_truncated(chat_with: Any) -> None:
    chat = await chat_with(connect=False)
    started = await chat.backend.post_message(chat.conversation_id, stream=True)
    message_id = started.json()["message"]["id"]
    first = await chat.backend.append(message_id, "a" * 7999)
    assert first.status_code == 204, first.text
    second = await chat.backend.append(message_id, "b" * 10)
    assert second.status_code == 204, second.text  # clamped, not refused
    finished = await chat.backend.finish(message_id)
    assert finished.status_code == 200, finished.text
    done = finished.json()["message"]
    assert done["body"]["text"] == "a" * 7999 + "b"
    assert done["truncated"] is True


async def test_a_stream_under_8000_is_not_truncated(chat_with: Any) -> None:
    chat = await chat_with(connect=False)
    started = await chat.backend.post_message(chat.conversation_id, stream=True)
    message_id = started.json()["message"]["id"]
    assert (await chat.backend.append(message_id, "a" * 8000)).status_code == 204
    done = (await chat.backend.finish(message_id)).json()["message"]
    assert len(done["body"]["text"]) == 8000
    assert done["truncated"] is False


async def test_a_frame_over_64_kib_sends_nothing(chat_with: Any) -> None:
    chat = await chat_with()
    backend = chat.backend
    frame = {"op": "send", "cid": "big", "conversation_id": chat.conversation_id}
    frame["text"] = "x" * (65 * 1024)
    await backend.send_raw(json.dumps(frame))
    # Either the socket is closed (1009) or the send is refused; never a message.
    await asyncio.sleep(1.0)
    if backend.connected:
        refused = [r for r in backend.replies if r.get("reply_to_cid") == "big"]
        assert refused and refused[0]["ok"] is False, backend.replies
    else:
        assert backend.close_codes[-1] == 1009, backend.close_codes
    page = await chat.person.history(chat.conversation_id)
    assert page["messages"] == []


@pytest.mark.hub(person_send_rate=(1000.0, 1000))
async def test_events_page_by_at_most_100_oldest_first(chat_with: Any) -> None:
    chat = await chat_with(connect=False)
    texts = [f"m{i:03}" for i in range(120)]
    for text in texts:
        await chat.person.say(chat.conversation_id, text)

    seen: list[dict[str, Any]] = []
    sizes: list[int] = []
    since: str | None = None  # the first page starts at the beginning (the owner's join)
    for _ in range(10):
        answer = await chat.backend.events_since(since, limit=100)
        assert answer.status_code == 200, answer.text
        page = answer.json()["events"]
        if not page:
            break
        sizes.append(len(page))
        seen.extend(page)
        since = page[-1]["id"]
    assert sizes == [100, 22], sizes  # two joins and 120 messages, 100 at a time
    got = [e["data"]["message"]["body"]["text"] for e in seen if e["type"] == "message.created"]
    assert got == texts
    assert len({e["id"] for e in seen}) == len(seen)
    too_many = await chat.backend.events_since(None, limit=101)
    assert too_many.status_code in (200, 422), too_many.text
    if too_many.status_code == 200:
        assert len(too_many.json()["events"]) <= 100
    else:
        error_of(too_many)

    # And a socket that connects now is given all of them, in order, a lease at a time.
    await chat.backend.connect()
    await chat.backend.wait_until(
        lambda: len(chat.backend.events_of("message.created")) >= 120, timeout=30
    )
    on_socket = [
        e["data"]["message"]["body"]["text"] for e in chat.backend.events_of("message.created")
    ]
    assert on_socket[:120] == texts


async def test_limits_count_characters_not_bytes(chat_with: Any) -> None:
    chat = await chat_with(connect=False)
    backend = chat.backend
    for label in ("é" * 40, "日" * 40):
        answer = await backend.post_message(
            chat.conversation_id, text="pick", buttons=[[{"id": "a", "label": label}]]
        )
        assert answer.status_code == 201, answer.text
    answer = await backend.post_message(chat.conversation_id, text="日" * 8000)
    assert answer.status_code == 201, answer.text
    started = await backend.post_message(chat.conversation_id, stream=True)
    message_id = started.json()["message"]["id"]
    assert (await backend.append(message_id, "é" * 8000)).status_code == 204
    done = (await backend.finish(message_id)).json()["message"]
    assert done["body"]["text"] == "é" * 8000
    assert done["truncated"] is False


@pytest.mark.hub(agent_send_rate=(1.0, 2))
async def test_an_agent_too_fast_is_429_over_http_and_refused_on_the_socket(
    chat_with: Any,
) -> None:
    chat = await chat_with()
    backend = chat.backend
    for i in range(2):
        answer = await backend.post_message(chat.conversation_id, text=f"{i}")
        assert answer.status_code == 201, answer.text
    answer = await backend.post_message(chat.conversation_id, text="too fast")
    assert answer.status_code == 429, answer.text
    assert error_of(answer)["code"] == "rate_limited"
    assert float(answer.headers["Retry-After"]) > 0
    reply = await backend.send(chat.conversation_id, "too fast again")
    assert reply["ok"] is False and reply["error"]["code"] == "rate_limited", reply


@pytest.mark.hub(stream_idle_seconds=1.0)
async def test_a_stream_that_keeps_talking_is_not_idle(chat_with: Any) -> None:
    chat = await chat_with(connect=False)
    started = await chat.backend.post_message(chat.conversation_id, stream=True)
    message_id = started.json()["message"]["id"]
    for i in range(8):  # 3.2 s in all, never 1 s quiet
        answer = await chat.backend.append(message_id, f"{i}")
        assert answer.status_code == 204, (i, answer.text)
        await asyncio.sleep(0.4)
    done = await chat.backend.finish(message_id)
    assert done.status_code == 200, done.text
    assert done.json()["message"]["body"]["text"] == "01234567"
    assert done.json()["message"]["truncated"] is False
