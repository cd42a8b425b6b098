"""The gateway's wire as the checks see it: raw HTTP answers and a raw stream socket.

The checks judge the gateway, so they read exactly what it sent: a raw request keeps the
status and body, and the socket hands over each frame as the JSON object it was.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import httpx
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from talkie_tui.conformance.http import fetch
from talkie_tui.conformance.report import CheckFailed, show
from talkie_tui.conformance.sockets import close_code
from talkie_tui.conformance.wire import Answer
from talkie_tui.protocol.talkie.client import USER_AGENT

__all__ = ["MinaraWire", "Socket", "Turn"]

FRAME_WAIT = 15.0  # the longest a check waits for the next frame of a turn
TURN_WAIT = 60.0  # the longest a turn may take
MAX_FRAME = 1024 * 1024 + 4096
END_TYPES = ("done", "error")


class MinaraWire:
    """Raw HTTP to the gateway's routes and raw sockets to `/v1/stream`, with the token."""

    def __init__(self, base: str, token: str | None, http: httpx.AsyncClient) -> None:
        self.base = base.rstrip("/")
        self.token = token
        self.http = http

    def url(self, path: str, params: Mapping[str, str | int] | None = None) -> str:
        """The absolute URL of a gateway path."""
        query = f"?{urlencode(params)}" if params else ""
        return f"{self.base}{path}{query}"

    async def request(
        self,
        method: str,
        path: str,
        params: Mapping[str, str | int] | None = None,
        *,
        json_body: object = None,
        content: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        token: str | None = "",
    ) -> Answer:
        """Send a request and return its raw answer; `token=None` sends none, `""` the one
        given on the command line, anything else that token."""
        bearer = self.token if token == "" else token
        sent = {"Authorization": f"Bearer {bearer}"} if bearer else {}
        return await fetch(
            self.http,
            method,
            self.url(path, params),
            origin=self.base,
            headers={**sent, **(headers or {})},
            json_body=json_body,
            content=content,
        )

    async def json(self, method: str, path: str, what: str, **kwargs: Any) -> dict[str, Any]:
        """A request whose answer must be 200 with a JSON object; that object."""
        answer = await self.request(method, path, **kwargs)
        if answer.status != 200:
            raise CheckFailed(f"{what}: expected HTTP 200, got {answer.describe()}")
        data = answer.json()
        if not isinstance(data, dict):
            raise CheckFailed(f"{what}: the answer is not a JSON object: {show(answer.text)}")
        return data

    async def start_turn(self, message: str, **fields: Any) -> dict[str, Any]:
        """`POST /v1/chat/stream`: its `{session_id, kind, is_new}` answer, else a failure."""
        answer = await self.request(
            "POST", "/v1/chat/stream", json_body={"message": message, **fields}
        )
        data = answer.json()
        if answer.status == 200 and answer.media_type == "text/event-stream":
            shown = "an event stream (the older SSE revision of the gateway)"
        elif answer.status != 200 or not isinstance(data, dict) or not data.get("session_id"):
            shown = answer.describe()
        else:
            return dict(data)
        raise CheckFailed(
            f'POST /v1/chat/stream answered {shown}; minara-chat.md: "The gateway responds '
            'immediately with { session_id, kind, is_new } and runs the turn in the background"'
        )

    def socket_url(self, token: str | None) -> str:
        """`ws(s)://…/v1/stream`, with `?token=` when a token is given."""
        base = "ws" + self.base[4:] if self.base.startswith("http") else self.base
        return f"{base}/v1/stream" + (f"?{urlencode({'token': token})}" if token else "")

    @asynccontextmanager
    async def socket(self, *, token: str | None = "") -> AsyncIterator[Socket]:
        """An open `/v1/stream` socket (the token as `?token=`, as a browser sends it)."""
        bearer = self.token if token == "" else token
        try:
            connection = await connect(
                self.socket_url(bearer),
                user_agent_header=USER_AGENT,
                max_size=MAX_FRAME,
                open_timeout=10,
                ping_interval=None,
            )
        except (OSError, InvalidHandshake, TimeoutError) as error:
            raise CheckFailed(f"GET /v1/stream did not open a WebSocket: {error}") from error
        try:
            yield Socket(connection)
        finally:
            await connection.close()


@dataclass
class Socket:
    """One open stream socket: send frames, read them (pings answered on the way)."""

    connection: ClientConnection
    unknown: list[dict[str, Any]] = field(default_factory=list)  # frames of unknown types

    async def send(self, frame: Mapping[str, Any]) -> None:
        """Send one frame."""
        await self.connection.send(json.dumps(frame))

    async def subscribe(self, key: str, from_seq: int, **extra: Any) -> None:
        """Subscribe the chat channel of `key` from `from_seq`."""
        frame = {"type": "subscribe", "channel": "chat", "key": key, "fromSeq": from_seq}
        await self.send({**frame, **extra})

    async def frame(self, wait: float = FRAME_WAIT) -> dict[str, Any]:
        """The next frame that is not a ping (which is answered with a pong)."""
        while True:
            try:
                async with asyncio.timeout(wait):
                    data = await self.connection.recv()
            except TimeoutError:
                raise CheckFailed(f"no frame on the stream socket within {wait:g} s") from None
            except ConnectionClosed as closed:
                code = closed.rcvd.code if closed.rcvd is not None else "none"
                raise CheckFailed(f"the gateway closed the stream socket (code {code})") from None
            try:
                frame = json.loads(data)
            except ValueError:
                raise CheckFailed(
                    f'a frame is not JSON: {show(data)}; minara-stream.md: "Text frames, one '
                    'JSON object each"'
                ) from None
            if not isinstance(frame, dict):
                raise CheckFailed(f"a frame is not a JSON object: {show(data)}")
            if frame.get("type") == "ping":
                await self.send({"type": "pong"})
                continue
            return frame

    async def subscribed(self, key: str) -> dict[str, Any]:
        """Wait for the `subscribed` frame of `key` (an error frame fails the check)."""
        while True:
            frame = await self.frame()
            kind = frame.get("type")
            if kind == "subscribed" and frame.get("key") == key:
                for name in ("firstSeq", "lastSeq"):
                    if type(frame.get(name)) is not int:
                        raise CheckFailed(
                            f"the subscribed frame's {name} is {show(frame.get(name))}, not an "
                            "integer (minara-stream.md: {type: subscribed, channel, key, "
                            "firstSeq, lastSeq})"
                        )
                return frame
            if kind == "error" and frame.get("key") == key:
                raise CheckFailed(
                    f"subscribing to {show(key)} answered the error frame {show(frame)}"
                )
            if kind == "event":
                raise CheckFailed("an event frame arrived before the subscribed frame")
            self.unknown.append(frame)

    async def closed_with(self, wait: float = FRAME_WAIT) -> int | None:
        """The close code once the gateway closes the socket (frames before it are read)."""
        return await close_code(self.connection, wait)


@dataclass
class Turn:
    """The event frames of one channel as read, in order: `(seq, event)`."""

    key: str
    subscribed: dict[str, Any]
    events: list[tuple[int, dict[str, Any]]] = field(default_factory=list)

    @property
    def ended(self) -> bool:
        """True once a `done` or `error` event was read."""
        return bool(self.events) and self.events[-1][1].get("type") in END_TYPES

    @property
    def last_seq(self) -> int:
        """The seq of the last event read (the subscription's `fromSeq` before any)."""
        return self.events[-1][0] if self.events else self.subscribed.get("lastSeq", 0)

    @property
    def text(self) -> str:
        """The concatenated `text_delta` texts."""
        return "".join(
            str(event.get("data", {}).get("text", ""))
            for _, event in self.events
            if event.get("type") == "text_delta"
        )

    async def read(
        self, socket: Socket, *, until_end: bool = True, count: int = 0, wait: float = TURN_WAIT
    ) -> Turn:
        """Read event frames of this key until the turn ends (or `count` more arrived)."""
        deadline = time.monotonic() + wait
        wanted = len(self.events) + count
        while not self.ended and (until_end or len(self.events) < wanted):
            left = deadline - time.monotonic()
            if left <= 0:
                raise CheckFailed(
                    f"the turn did not end in done or error within {wait:g} s "
                    f"({len(self.events)} events read)"
                )
            frame = await socket.frame(min(left, FRAME_WAIT))
            if frame.get("type") != "event" or frame.get("key") != self.key:
                continue
            seq, event = frame.get("seq"), frame.get("event")
            if type(seq) is not int or not isinstance(event, dict):
                raise CheckFailed(
                    f"an event frame without an integer seq and an event object: {show(frame)}"
                )
            self.events.append((seq, event))
        return self


async def follow(wire: MinaraWire, key: str, from_seq: int = 0) -> Turn:
    """Subscribe to `key` from `from_seq` on a new socket and read until the turn ends."""
    async with wire.socket() as socket:
        await socket.subscribe(key, from_seq)
        turn = Turn(key, await socket.subscribed(key))
        return await turn.read(socket)
