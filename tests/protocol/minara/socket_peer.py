"""A small Minara stream socket for tests, written with `websockets` only (no gateway code).

`SocketPeer` serves `/v1/stream` on 127.0.0.1, port 0, in the test's event loop. It keeps one
event buffer per key (`emit` appends an event with the next seq and sends it to the keys'
subscribers) and answers `subscribe` as `minara-stream.md` says: `subscribed` with firstSeq and
lastSeq, then the buffered events after fromSeq. A test bends it: `drop()` aborts every socket
(TCP closed, no close frame), `first_seq` pretends older events were dropped, `on_subscribe`
and `mangle` let a test send what it likes (gaps, duplicates, bad frames).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed


@dataclass
class Seen:
    """One connection as the peer saw it."""

    path: str
    headers: dict[str, str]
    frames: list[dict[str, Any]] = field(default_factory=list)


def event_frame(key: str, seq: int, event: dict[str, Any]) -> str:
    return json.dumps({"type": "event", "channel": "chat", "key": key, "seq": seq, "event": event})


class SocketPeer:
    """See the module docstring."""

    def __init__(self, token: str | None = None) -> None:
        self.token = token
        self.buffers: dict[str, list[dict[str, Any]]] = {}
        self.first_seq: dict[str, int] = {}
        self.seen: list[Seen] = []
        self.subscribers: dict[str, set[ServerConnection]] = {}
        self.on_subscribe: Callable[[ServerConnection, dict[str, Any]], Awaitable[bool]] | None = (
            None
        )
        self.mangle: Callable[[str, int, dict[str, Any]], list[str] | None] | None = None
        self.silent = False  # answer nothing, not even pings
        self._server: Server | None = None
        self.subscribed = asyncio.Event()

    async def __aenter__(self) -> SocketPeer:
        self._server = await serve(self._handle, "127.0.0.1", 0, max_size=None, ping_interval=None)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    @property
    def url(self) -> str:
        assert self._server is not None
        port = next(iter(self._server.sockets)).getsockname()[1]
        return f"ws://127.0.0.1:{port}/v1/stream"

    def last_seq(self, key: str) -> int:
        return len(self.buffers.get(key, []))

    async def emit(self, key: str, event_type: str, **data: Any) -> int:
        """Append an event to `key`'s buffer and send it to its subscribers; its seq."""
        buffer = self.buffers.setdefault(key, [])
        event = {"type": event_type, "data": data}
        buffer.append(event)
        seq = len(buffer)
        for connection in list(self.subscribers.get(key, ())):
            await self._send_event(connection, key, seq, event)
        return seq

    async def _send_event(
        self, connection: ServerConnection, key: str, seq: int, event: dict[str, Any]
    ) -> None:
        frames = self.mangle(key, seq, event) if self.mangle else None
        for frame in frames if frames is not None else [event_frame(key, seq, event)]:
            try:
                await connection.send(frame)
            except ConnectionClosed:
                return

    def drop(self) -> int:
        """Abort every open socket (no close frame); how many there were."""
        connections = {c for group in self.subscribers.values() for c in group}
        for connection in connections:
            connection.transport.abort()
        self.subscribers.clear()
        return len(connections)

    async def close_all(self, code: int, reason: str = "") -> None:
        for connection in {c for group in self.subscribers.values() for c in group}:
            await connection.close(code, reason)

    async def _handle(self, connection: ServerConnection) -> None:
        request = connection.request
        assert request is not None
        seen = Seen(request.path, {k.lower(): v for k, v in request.headers.raw_items()})
        self.seen.append(seen)
        if self.token is not None:
            query_ok = f"token={self.token}" in request.path
            header_ok = seen.headers.get("authorization") == f"Bearer {self.token}"
            if not (query_ok or header_ok):
                await connection.close(4401, "unauthorized")
                return
        try:
            async for message in connection:
                frame = json.loads(message)
                seen.frames.append(frame)
                if self.silent:
                    continue
                if frame.get("type") == "ping":
                    await connection.send('{"type":"pong"}')
                elif frame.get("type") == "subscribe":
                    await self._subscribe(connection, frame)
                elif frame.get("type") == "unsubscribe":
                    self.subscribers.get(frame["key"], set()).discard(connection)
        except ConnectionClosed:
            pass
        finally:
            for group in self.subscribers.values():
                group.discard(connection)

    async def _subscribe(self, connection: ServerConnection, frame: dict[str, Any]) -> None:
        key, from_seq = frame["key"], frame["fromSeq"]
        if self.on_subscribe is not None and not await self.on_subscribe(connection, frame):
            return
        buffer = self.buffers.setdefault(key, [])
        first = self.first_seq.get(key, 1)
        await connection.send(
            json.dumps(
                {
                    "type": "subscribed",
                    "channel": "chat",
                    "key": key,
                    "firstSeq": first if buffer else len(buffer) + 1,
                    "lastSeq": len(buffer),
                }
            )
        )
        seq = max(from_seq + 1, first)
        while seq <= len(buffer):  # events emitted meanwhile are replayed too
            await self._send_event(connection, key, seq, buffer[seq - 1])
            seq += 1
        self.subscribers.setdefault(key, set()).add(connection)  # no await since the check
        self.subscribed.set()
