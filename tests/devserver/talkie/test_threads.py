"""Threads (§9): listing, reading, deleting."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from tests.helpers import AUTH, TEST_TOKEN, ask, assert_error, customs, new_id


def test_list_newest_first_and_at_most_50(
    http: httpx.Client, devserver: Callable[..., str]
) -> None:
    url = devserver(test_mode=True, dev_token=TEST_TOKEN)
    ids = [new_id("t") for _ in range(52)]
    for thread_id in ids:
        ask(http, url, "talkie-test:echo x", thread_id=thread_id)
    # A new message moves an old thread to the top.
    ask(http, url, "talkie-test:echo again", thread_id=ids[0])
    threads = http.get(f"{url}/api/talkie/threads", headers=AUTH).json()["threads"]
    assert len(threads) == 50
    assert [t["id"] for t in threads] == [ids[0], *reversed(ids[3:])]
    assert set(threads[0]) == {"id", "title", "channel", "createdAt", "updatedAt"}
    stamps = [t["updatedAt"] for t in threads]
    assert stamps == sorted(stamps, reverse=True)


def test_thread_with_messages_cards_and_actions(http: httpx.Client, fast_url: str) -> None:
    thread_id = new_id("t")
    card_events = ask(http, fast_url, "talkie-test:card", thread_id=thread_id)
    ask(http, fast_url, "talkie-test:action", thread_id=thread_id)
    body = http.get(f"{fast_url}/api/talkie/threads/{thread_id}", headers=AUTH).json()
    assert body["thread"]["id"] == thread_id
    assert body["thread"]["title"] == "talkie-test:card"
    messages = body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    shown = {"id", "role", "content", "createdAt", "cards", "channel"}
    for message in messages:
        # An answer a run wrote also has its events (a talkie extension: how it looked live).
        extension = {"events"} if message["role"] == "assistant" else set()
        assert set(message) == shown | extension
        assert message["channel"] == "chat"
    streamed = [e for e in card_events if e["type"] not in ("RUN_STARTED", "TEXT_MESSAGE_CONTENT")]
    kept = [e for e in messages[1]["events"] if e["type"] != "TEXT_MESSAGE_CONTENT"]
    assert [e["type"] for e in kept] == [
        e["type"] for e in streamed if not (e["type"] == "CUSTOM" and e["name"] == "talkie.usage")
    ]
    assert messages[1]["cards"] == customs(card_events, "talkie.card")
    assert messages[1]["content"] == "Here is the test record."
    started = next(e for e in card_events if e["type"] == "TEXT_MESSAGE_START")
    assert messages[1]["id"] == started["messageId"]
    (action,) = body["actions"]
    assert action["status"] == "pending" and action["threadId"] == thread_id


def test_delete_thread(http: httpx.Client, fast_url: str) -> None:
    thread_id = new_id("t")
    (action,) = customs(
        ask(http, fast_url, "talkie-test:action", thread_id=thread_id), "talkie.action"
    )
    response = http.delete(f"{fast_url}/api/talkie/threads/{thread_id}", headers=AUTH)
    assert response.status_code == 200 and response.json() == {"ok": True}
    assert_error(
        http.get(f"{fast_url}/api/talkie/threads/{thread_id}", headers=AUTH), 404, "not_found"
    )
    listed = http.get(f"{fast_url}/api/talkie/threads", headers=AUTH).json()["threads"]
    assert thread_id not in [t["id"] for t in listed]
    current = http.get(f"{fast_url}/api/talkie/actions/{action['id']}", headers=AUTH).json()
    assert current["status"] == "cancelled"
    assert_error(
        http.delete(f"{fast_url}/api/talkie/threads/{thread_id}", headers=AUTH), 404, "not_found"
    )


def test_unknown_thread_is_404(http: httpx.Client, fast_url: str) -> None:
    error = assert_error(
        http.get(f"{fast_url}/api/talkie/threads/nope", headers=AUTH), 404, "not_found"
    )
    assert "nope" in error["message"]
