"""Shared test helpers: the dev token, run request bodies, SSE parsing."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Iterator
from typing import Any

import httpx

TEST_TOKEN = "test-token"
AUTH = {"Authorization": f"Bearer {TEST_TOKEN}"}


def new_id(prefix: str) -> str:
    """A unique client-side id."""
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


def run_body(
    text: str,
    *,
    thread_id: str | None = None,
    message_id: str | None = None,
    run_id: str | None = None,
) -> dict[str, Any]:
    """An AG-UI RunAgentInput with one new user message, as the Talkie client sends it."""
    return {
        "threadId": thread_id or new_id("t"),
        "runId": run_id or new_id("r"),
        "messages": [{"id": message_id or new_id("m"), "role": "user", "content": text}],
        "tools": [],
        "context": [],
        "state": {},
        "forwardedProps": {"talkie": {"channel": "chat"}},
        "protocolVersion": "1.0",
    }


def iter_sse(chunks: Iterable[str]) -> Iterator[tuple[str, str]]:
    """(kind, payload) per SSE frame: ("data", json text) or ("comment", text). LF framing only."""
    buffer = ""
    for chunk in chunks:
        buffer += chunk
        while "\n\n" in buffer:
            frame, buffer = buffer.split("\n\n", 1)
            for line in frame.split("\n"):
                if line.startswith("data: "):
                    yield "data", line[len("data: ") :]
                elif line.startswith(":"):
                    yield "comment", line[1:].strip()
    assert buffer == "", f"unterminated frame: {buffer!r}"


def events_of(response: httpx.Response) -> list[dict[str, Any]]:
    """All AG-UI events of a streamed response."""
    return [json.loads(data) for kind, data in iter_sse(response.iter_text()) if kind == "data"]


def run(
    client: httpx.Client, url: str, body: dict[str, Any], headers: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """POST run and read the whole event stream."""
    with client.stream(
        "POST",
        f"{url}/api/talkie/run",
        json=body,
        headers={"Accept": "text/event-stream", **(AUTH if headers is None else headers)},
    ) as response:
        assert response.status_code == 200, response.read()
        return events_of(response)


def ask(client: httpx.Client, url: str, text: str, **ids: str) -> list[dict[str, Any]]:
    """One run with a new user message."""
    return run(client, url, run_body(text, **ids))


def text_of(events: list[dict[str, Any]]) -> str:
    """The concatenated assistant text deltas."""
    return "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")


def types_of(events: list[dict[str, Any]]) -> list[str]:
    """The event types in order."""
    return [e["type"] for e in events]


def customs(events: list[dict[str, Any]], name: str) -> list[Any]:
    """The values of the CUSTOM events with this name."""
    return [e["value"] for e in events if e["type"] == "CUSTOM" and e["name"] == name]


def assert_error(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    """Check the §3 envelope and return its `error` object."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"}
    error: dict[str, Any] = body["error"]
    assert error["code"] == code
    assert isinstance(error["message"], str) and error["message"]
    assert isinstance(error["retryable"], bool)
    return error
