"""Raw HTTP and WebSocket helpers for the gateway tests (httpx and `websockets` only)."""

from __future__ import annotations

import json
import struct
import time
from contextlib import ExitStack
from types import TracebackType
from typing import Any

import httpx
from websockets.sync.client import ClientConnection, connect

from tests.helpers import AUTH, TEST_TOKEN

END_TYPES = ("done", "error")
RECV_TIMEOUT = 10.0


def ws_url(base_url: str, token: str | None = TEST_TOKEN) -> str:
    """The `/v1/stream` URL of a gateway, with `?token=` when given."""
    url = base_url.replace("http://", "ws://", 1) + "/v1/stream"
    return f"{url}?token={token}" if token is not None else url


def start_turn(http: httpx.Client, url: str, message: str, **fields: Any) -> dict[str, Any]:
    """POST /v1/chat/stream; the JSON answer (asserting 200)."""
    response = http.post(f"{url}/v1/chat/stream", json={"message": message, **fields}, headers=AUTH)
    assert response.status_code == 200, response.text
    return dict(response.json())


def session_detail(http: httpx.Client, url: str, session_id: str) -> dict[str, Any]:
    """GET /v1/sessions/:id (asserting 200)."""
    response = http.get(f"{url}/v1/sessions/{session_id}", headers=AUTH)
    assert response.status_code == 200, response.text
    return dict(response.json())


def wait_until_idle(http: httpx.Client, url: str, session_id: str, timeout: float = 10) -> dict:
    """Poll the session until its turn ended; its detail."""
    deadline = time.monotonic() + timeout
    while True:
        detail = session_detail(http, url, session_id)
        if not detail["is_streaming"]:
            return detail
        assert time.monotonic() < deadline, "the turn did not end"
        time.sleep(0.02)


class Socket:
    """A `/v1/stream` client: JSON frames in and out, server pings skipped unless asked for."""

    def __init__(
        self,
        base_url: str,
        token: str | None = TEST_TOKEN,
        *,
        headers: dict[str, str] | None = None,
        keep_pings: bool = False,
    ) -> None:
        self.keep_pings = keep_pings
        self._stack = ExitStack()
        self.ws: ClientConnection = self._stack.enter_context(
            connect(
                ws_url(base_url, token),
                additional_headers=headers,
                max_size=8 * 2**20,
                open_timeout=5,
            )
        )

    def __enter__(self) -> Socket:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stack.close()

    def send(self, frame: dict[str, Any]) -> None:
        """Send one JSON frame."""
        self.ws.send(json.dumps(frame))

    def recv(self, timeout: float = RECV_TIMEOUT) -> dict[str, Any]:
        """The next frame (server pings skipped unless `keep_pings`)."""
        while True:
            frame = json.loads(self.ws.recv(timeout=timeout))
            if self.keep_pings or frame != {"type": "ping"}:
                return dict(frame)

    def subscribe(self, key: str, from_seq: int = 0) -> dict[str, Any]:
        """Subscribe to a session's chat channel; the `subscribed` frame."""
        self.send({"type": "subscribe", "channel": "chat", "key": key, "fromSeq": from_seq})
        frame = self.recv()
        assert frame["type"] == "subscribed", frame
        return frame

    def events(self, key: str, *, until: tuple[str, ...] = END_TYPES) -> list[tuple[int, dict]]:
        """(seq, event) of one channel up to and including the first of `until`."""
        found: list[tuple[int, dict]] = []
        while True:
            frame = self.recv()
            if frame["type"] != "event" or frame["key"] != key:
                continue
            found.append((frame["seq"], frame["event"]))
            if frame["event"]["type"] in until:
                return found

    def next_event(self, key: str) -> tuple[int, dict]:
        """The next event frame of a channel: (seq, event)."""
        while True:
            frame = self.recv()
            if frame["type"] == "event" and frame["key"] == key:
                return frame["seq"], frame["event"]


def run_turn(
    http: httpx.Client, url: str, message: str, **fields: Any
) -> tuple[str, list[tuple[int, dict]]]:
    """Start a turn, follow it on a socket from seq 0 to its end: (session id, events)."""
    answer = start_turn(http, url, message, **fields)
    with Socket(url) as socket:
        socket.subscribe(answer["session_id"])
        return answer["session_id"], socket.events(answer["session_id"])


def types_of(events: list[tuple[int, dict]]) -> list[str]:
    """The event types, in order."""
    return [event["type"] for _, event in events]


def text_of(events: list[tuple[int, dict]]) -> str:
    """The concatenated text deltas."""
    return "".join(event["data"]["text"] for _, event in events if event["type"] == "text_delta")


def wav(samples: list[int] | Any, rate: int = 16_000) -> bytes:
    """A mono 16-bit PCM WAV of the given samples (a numpy int16 array or a list)."""
    data = (
        bytes(samples.astype("<i2").tobytes())
        if hasattr(samples, "astype")
        else struct.pack(f"<{len(samples)}h", *samples)
    )
    header = struct.pack("<4sI4s", b"RIFF", 36 + len(data), b"WAVE")
    fmt = struct.pack("<4sIHHIIHH", b"fmt ", 16, 1, 1, rate, rate * 2, 2, 16)
    return header + fmt + struct.pack("<4sI", b"data", len(data)) + data
