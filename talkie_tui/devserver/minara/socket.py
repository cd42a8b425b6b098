"""`GET /v1/stream`: the multiplexed WebSocket of `minara-stream.md`.

One JSON object per text frame. Clients subscribe to `chat` channels by session id (with a
`fromSeq` to replay from), ping and pong; the server pings every `ping_interval` and closes a
socket it has not heard from for `idle_timeout` (code 4408). A bad or missing token is refused
after the upgrade with code 4401, which a browser can read.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from typing import TYPE_CHECKING, Any

from starlette.websockets import WebSocket, WebSocketDisconnect

from talkie_tui.devserver.common.http import bearer_token
from talkie_tui.devserver.common.json_input import JsonInputError, decode
from talkie_tui.devserver.common.tasks import until_first_ends
from talkie_tui.devserver.minara.auth import token_matches
from talkie_tui.devserver.minara.channels import Channel, Event

if TYPE_CHECKING:
    from talkie_tui.devserver.minara.channels import Channels
    from talkie_tui.devserver.minara.config import GatewayConfig
    from talkie_tui.devserver.minara.services import Services

logger = logging.getLogger(__name__)

CHANNEL = "chat"
CLOSE_UNAUTHORIZED = 4401
CLOSE_IDLE = 4408


def _dump(frame: dict[str, Any]) -> str:
    return json.dumps(frame, ensure_ascii=False, separators=(",", ":"))


class _Subscription:
    """One socket's subscription to one channel: events newer than `from_seq` go out."""

    def __init__(self, socket: StreamSocket, channel: Channel, from_seq: int) -> None:
        self.socket = socket
        self.channel = channel
        self.from_seq = from_seq

    def deliver(self, seq: int, event: Event) -> None:
        """Queue an event frame (only those after the subscription's `fromSeq`)."""
        if seq > self.from_seq:
            frame = {"type": "event", "channel": CHANNEL, "key": self.channel.key, "seq": seq}
            frame["event"] = event
            self.socket.send(frame)

    def channel_closed(self) -> None:
        """The session was deleted while subscribed."""
        self.socket.forget(self.channel.key)
        self.socket.send_error("not_found", "The session was deleted.", key=self.channel.key)


class StreamSocket:
    """One client's `/v1/stream` connection."""

    def __init__(self, websocket: WebSocket, config: GatewayConfig, channels: Channels) -> None:
        self.websocket = websocket
        self._config = config
        self._channels = channels
        self._outbox: asyncio.Queue[str] = asyncio.Queue()
        self._subscriptions: dict[str, _Subscription] = {}
        self._last_heard = time.monotonic()

    # sending

    def send(self, frame: dict[str, Any]) -> None:
        """Queue a frame for the writer."""
        self._outbox.put_nowait(_dump(frame))

    def send_error(self, code: str, message: str, *, key: str | None = None) -> None:
        """Queue an error frame (the socket stays open)."""
        frame: dict[str, Any] = {"type": "error"}
        if key is not None:
            frame.update({"channel": CHANNEL, "key": key})
        frame.update({"code": code, "message": message})
        self.send(frame)

    def forget(self, key: str) -> None:
        """Drop a subscription without touching its channel."""
        self._subscriptions.pop(key, None)

    # the connection

    async def run(self) -> None:
        """Serve the socket until the client leaves, it goes idle, or it is dropped."""
        try:
            await until_first_ends(self._read(), self._write(), self._keepalive())
        finally:
            for subscription in self._subscriptions.values():
                subscription.channel.unsubscribe(subscription)
            self._subscriptions.clear()

    def abort(self) -> bool:
        """Cut the TCP connection at once, without a close frame; False if that is not possible."""
        # Starlette hands the server's own `receive` through unchanged: uvicorn's protocol
        # object, whose transport can be aborted (ASGI itself has no way to drop a socket).
        protocol = getattr(self.websocket._receive, "__self__", None)
        transport = getattr(protocol, "transport", None)
        if transport is None or not hasattr(transport, "abort"):
            return False
        transport.abort()
        return True

    async def _write(self) -> None:
        while True:
            text = await self._outbox.get()
            try:
                await self.websocket.send_text(text)
            except (WebSocketDisconnect, RuntimeError, OSError):
                return

    async def _keepalive(self) -> None:
        while True:
            idle = time.monotonic() - self._last_heard
            if idle >= self._config.idle_timeout:
                with contextlib.suppress(RuntimeError, OSError, WebSocketDisconnect):
                    await self.websocket.close(CLOSE_IDLE, "nothing heard from the client")
                return
            await asyncio.sleep(min(self._config.ping_interval, self._config.idle_timeout - idle))
            if time.monotonic() - self._last_heard < self._config.idle_timeout:
                self.send({"type": "ping"})

    async def _read(self) -> None:
        while True:
            message = await self.websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
            self._last_heard = time.monotonic()
            text = message.get("text")
            if text is None:
                self.send_error("bad_frame", "Frames are JSON text; binary frames are not used.")
                continue
            limit = self._config.max_frame_bytes
            if len(text) > limit // 4 and len(text.encode()) > limit:
                self.send_error("bad_frame", f"A frame may be at most {limit} bytes.")
                continue
            self._handle(text)

    # frames from the client

    def _handle(self, text: str) -> None:
        try:
            frame = decode(text)
        except JsonInputError as error:
            self.send_error("bad_frame", f"A frame must be one JSON object: {error}")
            return
        kind = frame.get("type") if isinstance(frame, dict) else None
        if kind == "ping":
            self.send({"type": "pong"})
        elif kind == "pong":
            pass  # hearing it is enough: _last_heard was updated
        elif kind == "subscribe":
            self._subscribe(frame)
        elif kind == "unsubscribe":
            self._unsubscribe(frame)
        elif isinstance(kind, str):
            self.send_error("bad_frame", f"Unknown frame type {kind!r}.")
        else:
            self.send_error("bad_frame", "A frame must be a JSON object with a `type`.")

    def _target(self, frame: dict[str, Any]) -> tuple[str, str] | None:
        channel, key = frame.get("channel"), frame.get("key")
        if not isinstance(channel, str) or not isinstance(key, str) or not key:
            self.send_error("bad_frame", f"`{frame['type']}` needs a `channel` and a `key`.")
            return None
        return channel, key

    def _subscribe(self, frame: dict[str, Any]) -> None:
        target = self._target(frame)
        if target is None:
            return
        channel_name, key = target
        from_seq = frame.get("fromSeq", 0)
        if not isinstance(from_seq, int) or isinstance(from_seq, bool) or from_seq < 0:
            self.send_error("bad_frame", "`fromSeq` must be an integer of 0 or more.", key=key)
            return
        channel = self._channels.get(key) if channel_name == CHANNEL else None
        if channel is None:
            what = f"session {key}" if channel_name == CHANNEL else f"channel {channel_name!r}"
            self.send_error("not_found", f"There is no {what}.", key=key)
            return
        self._drop_subscription(key)
        subscription = _Subscription(self, channel, from_seq)
        # Replay and registration in one synchronous step: nothing can be appended between.
        self.send(
            {
                "type": "subscribed",
                "channel": CHANNEL,
                "key": key,
                "firstSeq": channel.first_seq,
                "lastSeq": channel.last_seq,
            }
        )
        for seq, event in channel.after(from_seq):
            subscription.deliver(seq, event)
        channel.subscribe(subscription)
        self._subscriptions[key] = subscription

    def _unsubscribe(self, frame: dict[str, Any]) -> None:
        target = self._target(frame)
        if target is not None:
            self._drop_subscription(target[1])

    def _drop_subscription(self, key: str) -> None:
        subscription = self._subscriptions.pop(key, None)
        if subscription is not None:
            subscription.channel.unsubscribe(subscription)


async def stream(websocket: WebSocket) -> None:
    """GET /v1/stream"""
    services: Services = websocket.app.state.services
    given = websocket.query_params.get("token") or bearer_token(
        websocket.headers.get("authorization")
    )
    await websocket.accept()
    if not token_matches(services.config.auth_token, given):
        await websocket.close(CLOSE_UNAUTHORIZED, "unauthorized")
        return
    socket = StreamSocket(websocket, services.config, services.channels)
    services.sockets.add(socket)
    try:
        await socket.run()
    finally:
        services.sockets.discard(socket)
