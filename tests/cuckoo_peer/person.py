"""The person's side of a Cuckoo hub over plain httpx, signed in by the dev header.

In dev mode `X-Dev-User: usr_<26 Crockford base32 chars>` stands in for a signed-in person. The
same person can own agents (`/v1/mgmt`) and chat with them (`/v1/client`), and watch the client
socket (`/v1/client/socket`), which only pushes `{"type", "data"}` frames.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections.abc import Callable
from typing import Any

import httpx
import websockets
from websockets.asyncio.client import ClientConnection, connect

CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"


def new_id(prefix: str) -> str:
    """`prefix_` + 26 lowercase Crockford base32 chars encoding a UUIDv7 (128 bits)."""
    millis = int(time.time() * 1000) & ((1 << 48) - 1)
    rand = int.from_bytes(os.urandom(10), "big")
    value = (millis << 80) | (0x7 << 76) | ((rand >> 68) & 0xFFF) << 64
    value |= (0b10 << 62) | (rand & ((1 << 62) - 1))
    chars = []
    for _ in range(26):
        chars.append(CROCKFORD[value & 31])
        value >>= 5
    return f"{prefix}_{''.join(reversed(chars))}"


def error_of(answer: httpx.Response) -> dict[str, Any]:
    """The `error` object of an error answer (asserting the envelope's shape on the way)."""
    body = answer.json()
    assert set(body) == {"error"}, body
    error = body["error"]
    assert isinstance(error.get("code"), str) and error["code"], error
    assert isinstance(error.get("message"), str) and error["message"], error
    assert isinstance(error.get("request_id"), str) and error["request_id"], error
    assert set(error) <= {"code", "message", "field", "request_id"}, error
    return dict(error)


class ClientSocket:
    """The person's live socket: collects every frame for the test to look through."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.frames: list[dict[str, Any]] = []
        self._changed = asyncio.Event()
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        with contextlib.suppress(websockets.ConnectionClosed):
            async for raw in self.ws:
                self.frames.append(json.loads(raw))
                self._changed.set()

    async def wait_frame(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 10.0
    ) -> dict[str, Any]:
        async def find() -> dict[str, Any]:
            while True:
                for frame in self.frames:
                    if predicate(frame):
                        return frame
                self._changed.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._changed.wait(), 0.5)

        return await asyncio.wait_for(find(), timeout)

    def of_type(self, frame_type: str) -> list[dict[str, Any]]:
        return [f for f in self.frames if f.get("type") == frame_type]

    async def close(self) -> None:
        await self.ws.close()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader


class Person:
    """One person on the hub: client API, management API and client socket."""

    def __init__(self, base_url: str, user_id: str | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.user_id = user_id or new_id("usr")
        self.http = httpx.AsyncClient(
            base_url=self.base_url,
            headers={"X-Dev-User": self.user_id},
            timeout=15.0,
            trust_env=False,
        )

    async def aclose(self) -> None:
        await self.http.aclose()

    # --- management ----------------------------------------------------------------------------

    async def create_agent(self, handle: str, display_name: str, **fields: Any) -> dict[str, Any]:
        """A new agent of this person's (`fields`: more of its settings, `supports_schedules`)."""
        body = {"handle": handle, "display_name": display_name, **fields}
        answer = await self.http.post("/v1/mgmt/agents", json=body)
        assert answer.status_code in (200, 201), answer.text
        body = answer.json()
        return dict(body.get("agent", body))

    async def bind(
        self, agent_id: str, mode: str = "socket", webhook_url: str | None = None
    ) -> tuple[dict[str, Any], str]:
        """Make (or replace) the agent's binding; returns the binding and its secret."""
        body: dict[str, Any] = {"mode": mode}
        if webhook_url is not None:
            body["webhook_url"] = webhook_url
        answer = await self.bind_raw(agent_id, body)
        assert answer.status_code in (200, 201), answer.text
        reply = answer.json()
        assert reply["secret"].startswith("bnd_sec_"), reply
        return reply["binding"], reply["secret"]

    async def bind_raw(self, agent_id: str, body: dict[str, Any]) -> httpx.Response:
        return await self.http.post(f"/v1/mgmt/agents/{agent_id}/binding", json=body)

    # --- the client API ------------------------------------------------------------------------

    async def send(self, conversation_id: str, text: str | None = None, **fields: Any):
        body: dict[str, Any] = dict(fields)
        if text is not None:
            body["text"] = text
        return await self.http.post(
            f"/v1/client/conversations/{conversation_id}/messages", json=body
        )

    async def say(self, conversation_id: str, text: str) -> dict[str, Any]:
        answer = await self.send(conversation_id, text)
        assert answer.status_code == 201, answer.text
        return dict(answer.json()["message"])

    async def say_to(self, conversation_id: str, text: str, reply_to: str) -> dict[str, Any]:
        answer = await self.send(conversation_id, text, reply_to=reply_to)
        assert answer.status_code == 201, answer.text
        return dict(answer.json()["message"])

    async def tap(self, conversation_id: str, source_message_id: str, button_id: str):
        return await self.send(
            conversation_id,
            action={"button_id": button_id, "source_message_id": source_message_id},
        )

    async def history(self, conversation_id: str, **params: Any) -> dict[str, Any]:
        answer = await self.http.get(
            f"/v1/client/conversations/{conversation_id}/messages", params=params
        )
        assert answer.status_code == 200, answer.text
        return dict(answer.json())

    async def message(self, conversation_id: str, message_id: str) -> dict[str, Any]:
        """One message as history shows it (the newest page)."""
        page = await self.history(conversation_id, limit=100)
        found = [m for m in page["messages"] if m["id"] == message_id]
        assert found, (message_id, page)
        return dict(found[0])

    async def conversations(self) -> list[dict[str, Any]]:
        answer = await self.http.get("/v1/client/conversations")
        assert answer.status_code == 200, answer.text
        return list(answer.json()["conversations"])

    async def stop(self, conversation_id: str) -> httpx.Response:
        return await self.http.post(f"/v1/client/conversations/{conversation_id}/stop")

    async def socket(self) -> ClientSocket:
        url = "ws://" + self.base_url.removeprefix("http://") + "/v1/client/socket"
        ws = await connect(
            url,
            additional_headers={"X-Dev-User": self.user_id},
            ping_interval=None,
            proxy=None,
            open_timeout=10,
            close_timeout=2,
        )
        return ClientSocket(ws)
