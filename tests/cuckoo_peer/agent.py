"""A small Cuckoo agent backend, from the protocol text alone (websockets + httpx, no talkie code).

`AgentBackend` holds the socket (`/v1/agent/socket`, the binding secret as a bearer header):
events are handled, then acknowledged (`{"ack": id}`) after the work; requests go out as
`op` frames with a `cid` and are matched by `reply_to_cid`; redelivered events are recognised by
id and acknowledged again without repeating the work; close codes 4001 and 4002 are final.
Its `http` client speaks the agent's HTTP API (catch-up with `/events?since=`, sends, streams).

`WebhookReceiver` is the other transport: a starlette app under uvicorn on 127.0.0.1 (port 0,
its own thread) that checks `X-Cuckoo-Signature` (`sha256=` + hex HMAC-SHA256 keyed with the
SHA-256 of the binding secret, over `timestamp + "." + body`) in constant time.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import itertools
import json
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import uvicorn
import websockets
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from websockets.asyncio.client import ClientConnection, connect

FINAL_CLOSE_CODES = frozenset({4001, 4002})
"""4001: a newer socket took over; 4002: the binding was revoked or replaced. Never retried."""

Handler = Callable[["AgentBackend", dict[str, Any]], Awaitable[None]]


def _ws_url(base_url: str, path: str) -> str:
    base = base_url.rstrip("/")
    if base.startswith("https://"):
        return "wss://" + base.removeprefix("https://") + path
    return "ws://" + base.removeprefix("http://") + path


class SocketRefused(Exception):
    """The hub answered the upgrade with an HTTP error (e.g. 403 binding_not_socket)."""

    def __init__(self, status: int, body: bytes) -> None:
        super().__init__(f"socket refused: {status} {body[:200]!r}")
        self.status = status
        self.body = body

    @property
    def error(self) -> dict[str, Any]:
        try:
            return dict(json.loads(self.body)["error"])
        except (ValueError, KeyError, TypeError):
            return {}


class AgentBackend:
    """An agent backend on the hub's agent socket, with an HTTP client beside it."""

    def __init__(
        self,
        base_url: str,
        secret: str,
        *,
        handler: Handler | None = None,
        ack: bool = True,
        reconnect: bool = False,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.secret = secret
        self.handler = handler
        self.auto_ack = ack
        self.reconnect = reconnect
        self.http = httpx.AsyncClient(
            base_url=self.base_url,
            headers={"Authorization": f"Bearer {secret}"},
            timeout=15.0,
            trust_env=False,
        )
        self.received: list[dict[str, Any]] = []  # every event frame, redeliveries included
        self.handled: dict[str, dict[str, Any]] = {}  # event id -> event, work done once
        self.acked: list[str] = []
        self.replies: list[dict[str, Any]] = []  # every reply frame
        self.stray: list[dict[str, Any]] = []  # replies matching no pending cid, other frames
        self.close_codes: list[int | None] = []
        self.connects = 0
        self.final: int | None = None
        self._working: set[str] = set()
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._cids = itertools.count(1)
        self._ws: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._runner: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._changed = asyncio.Condition()

    # --- the socket ---------------------------------------------------------------------------

    async def connect(self) -> None:
        """Open the socket and start reading; raise `SocketRefused` on an HTTP answer."""
        await self.connect_once()
        if self.reconnect and self._runner is None:
            self._runner = asyncio.create_task(self._stay_connected())

    @property
    def connected(self) -> bool:
        return self._reader is not None and not self._reader.done()

    async def _stay_connected(self) -> None:
        """Reconnect after a dropped socket, never after 4001/4002."""
        delay = 0.2
        while True:
            if self._reader is not None:
                await asyncio.shield(self._reader)
            if self.final is not None or not self.reconnect:
                return
            await asyncio.sleep(delay)
            delay = min(delay * 2, 2.0)
            with contextlib.suppress(OSError, SocketRefused, websockets.WebSocketException):
                await self.connect_once()
                delay = 0.2

    async def connect_once(self) -> None:
        try:
            ws = await connect(
                _ws_url(self.base_url, "/v1/agent/socket"),
                additional_headers={"Authorization": f"Bearer {self.secret}"},
                ping_interval=None,  # the hub pings; the library answers
                proxy=None,
                open_timeout=10,
                close_timeout=2,
                max_size=2**20,
            )
        except websockets.InvalidStatus as refused:
            raise SocketRefused(refused.response.status_code, refused.response.body) from None
        self._ws = ws
        self.connects += 1
        self._reader = asyncio.create_task(self._read(ws))

    async def _read(self, ws: ClientConnection) -> None:
        try:
            async for raw in ws:
                try:
                    frame = json.loads(raw)
                except ValueError:
                    self.stray.append({"unparsed": raw})
                    continue
                await self._dispatch(frame)
        except websockets.ConnectionClosed:
            pass
        finally:
            code = ws.close_code  # the code the hub sent, 1006 when the line just dropped
            self.close_codes.append(code)
            if code in FINAL_CLOSE_CODES:
                self.final = code
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(ConnectionError(f"socket closed ({code})"))
            self._pending.clear()
            await self._notify()

    async def _dispatch(self, frame: dict[str, Any]) -> None:
        if "reply_to_cid" in frame or "ok" in frame:
            self.replies.append(frame)
            future = self._pending.pop(str(frame.get("reply_to_cid")), None)
            if future is not None and not future.done():
                future.set_result(frame)
            else:
                self.stray.append(frame)
        elif "id" in frame and "type" in frame:
            self.received.append(frame)
            task = asyncio.create_task(self._handle(frame))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        else:
            self.stray.append(frame)
        await self._notify()

    async def _handle(self, event: dict[str, Any]) -> None:
        """Do the work once per event id, acknowledge after it (and again on a redelivery)."""
        event_id = event["id"]
        if event_id in self._working:
            return  # the first delivery is still being worked on; its ack will follow
        if event_id not in self.handled:
            self._working.add(event_id)
            try:
                if self.handler is not None:
                    await self.handler(self, event)
                self.handled[event_id] = event
            finally:
                self._working.discard(event_id)
        if self.auto_ack:
            with contextlib.suppress(websockets.ConnectionClosed, ConnectionError):
                await self.ack(event_id)
        await self._notify()

    async def ack(self, event_id: str) -> None:
        await self._send_frame({"ack": event_id})
        self.acked.append(event_id)

    async def _send_frame(self, frame: dict[str, Any]) -> None:
        if self._ws is None:
            raise ConnectionError("not connected")
        await self._ws.send(json.dumps(frame))

    async def send_raw(self, text: str) -> None:
        if self._ws is None:
            raise ConnectionError("not connected")
        await self._ws.send(text)

    async def request(self, frame: dict[str, Any], timeout: float = 10.0) -> dict[str, Any]:
        """Send a frame with a fresh `cid` and wait for its `reply_to_cid` reply."""
        cid = f"c{next(self._cids)}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[cid] = future
        try:
            await self._send_frame({**frame, "cid": cid})
            return await asyncio.wait_for(future, timeout)
        finally:
            self._pending.pop(cid, None)

    async def send(self, conversation_id: str, text: str | None = None, **fields: Any) -> dict:
        frame: dict[str, Any] = {"op": "send", "conversation_id": conversation_id, **fields}
        if text is not None:
            frame["text"] = text
        return await self.request(frame)

    async def stream_start(self, conversation_id: str, **fields: Any) -> dict[str, Any]:
        return await self.request(
            {"op": "stream.start", "conversation_id": conversation_id, **fields}
        )

    async def stream_delta(self, message_id: str, text: str) -> None:
        """No reply unless it fails (a failure lands in `replies`/`stray`)."""
        await self._send_frame({"op": "stream.delta", "message_id": message_id, "text": text})

    async def stream_end(self, message_id: str, **fields: Any) -> dict[str, Any]:
        return await self.request({"op": "stream.end", "message_id": message_id, **fields})

    async def typing(self, conversation_id: str, state: str) -> dict[str, Any]:
        return await self.request(
            {"op": "typing", "conversation_id": conversation_id, "state": state}
        )

    async def drop(self) -> None:
        """Lose the connection (no close frame) but keep the reconnect policy."""
        if self._ws is not None:
            self._ws.transport.abort()

    async def kill(self) -> None:
        """Drop the connection as a crash would: no close frame, nothing acknowledged."""
        self.reconnect = False
        if self._ws is not None:
            self._ws.transport.abort()
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        for task in list(self._tasks):
            task.cancel()

    async def disconnect(self) -> None:
        """Close the socket cleanly (1000); the HTTP client stays usable."""
        self.reconnect = False
        if self._runner is not None:
            self._runner.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._runner
            self._runner = None
        if self._ws is not None:
            with contextlib.suppress(Exception):
                await self._ws.close()
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(self._reader, 5)
        for task in list(self._tasks):
            task.cancel()

    async def close(self) -> None:
        await self.disconnect()
        await self.http.aclose()

    # --- waiting --------------------------------------------------------------------------------

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    async def wait_until(self, predicate: Callable[[], Any], timeout: float = 10.0) -> Any:
        """Wait until `predicate()` is truthy (re-checked on every frame and close)."""

        async def check() -> Any:
            async with self._changed:
                while True:
                    value = predicate()
                    if value:
                        return value
                    # Woken by frames; the short timeout re-checks time-based conditions.
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._changed.wait(), 0.5)

        return await asyncio.wait_for(check(), timeout)

    async def wait_event(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 10.0
    ) -> dict[str, Any]:
        return await self.wait_until(
            lambda: next((e for e in self.received if predicate(e)), None), timeout
        )

    def events_of(self, event_type: str) -> list[dict[str, Any]]:
        return [e for e in self.received if e["type"] == event_type]

    # --- HTTP ----------------------------------------------------------------------------------

    async def me(self) -> dict[str, Any]:
        answer = await self.http.get("/v1/agent/me")
        answer.raise_for_status()
        return dict(answer.json())

    async def events_since(self, since: str | None = None, **params: Any) -> httpx.Response:
        if since is not None:
            params["since"] = since
        return await self.http.get("/v1/agent/events", params=params)

    async def post_message(self, conversation_id: str, **body: Any) -> httpx.Response:
        return await self.http.post(
            f"/v1/agent/conversations/{conversation_id}/messages", json=body
        )

    async def append(self, message_id: str, text: str) -> httpx.Response:
        return await self.http.post(f"/v1/agent/messages/{message_id}/append", json={"text": text})

    async def finish(self, message_id: str, **body: Any) -> httpx.Response:
        return await self.http.post(f"/v1/agent/messages/{message_id}/finish", json=body)


# --- handlers -----------------------------------------------------------------------------------


def is_person_message(event: dict[str, Any]) -> bool:
    return (
        event["type"] == "message.created" and event["data"]["message"]["sender"]["kind"] == "user"
    )


async def echo(backend: AgentBackend, event: dict[str, Any]) -> None:
    """Answer a person's message with `echo: <text>` over the socket, as a reply to it."""
    if not is_person_message(event):
        return
    message = event["data"]["message"]
    text = message["body"].get("text", "")
    reply = await backend.send(
        event["data"]["conversation"]["id"], f"echo: {text}", reply_to=message["id"]
    )
    assert reply["ok"], reply


# --- the webhook transport ----------------------------------------------------------------------


def webhook_signature(secret: str, timestamp: str, body: bytes) -> str:
    """`sha256=` + hex HMAC-SHA256 over `timestamp + "." + body`, keyed with SHA-256(secret)."""
    key = hashlib.sha256(secret.encode()).digest()
    mac = hmac.new(key, timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    return f"sha256={mac}"


def verify_webhook(
    secret: str, timestamp: str, body: bytes, signature: str, *, tolerance: float = 300.0
) -> bool:
    """Constant-time check of the signature, and a timestamp near now."""
    expected = webhook_signature(secret, timestamp, body)
    if not hmac.compare_digest(expected.encode(), signature.encode()):
        return False
    try:
        return abs(time.time() - int(timestamp)) <= tolerance
    except ValueError:
        return False


@dataclass
class Delivery:
    """One POST the receiver got, and how it answered."""

    headers: dict[str, str]
    body: bytes
    valid: bool
    status: int = 0
    event: dict[str, Any] = field(default_factory=dict)
    at: float = field(default_factory=time.monotonic)


class WebhookReceiver:
    """The hub posts events here; 2xx after the work, anything else asks for a retry."""

    def __init__(
        self,
        *,
        fail_first: int = 0,
        redirect: bool = False,
        slow_first: float = 0.0,
        handler: Callable[[dict[str, Any]], Awaitable[None]] | None = None,
    ) -> None:
        self.secret: str | None = None  # known once the binding is made
        self.fail_first = fail_first  # answer 500 to the first N deliveries of each event
        self.redirect = redirect  # answer 307 to /elsewhere (which must never be reached)
        self.elsewhere: list[bytes] = []
        self.slow_first = slow_first  # sleep this long before answering each first delivery
        self.handler = handler
        self.deliveries: list[Delivery] = []
        self.handled: set[str] = set()
        self._attempts: dict[str, int] = {}
        self._lock = threading.Lock()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.url = ""

    async def _hook(self, request: Request) -> Response:
        body = await request.body()
        # The hub may post an event that was due before the binding was made (the owner's DM
        # opens with the agent) as soon as the binding exists: before the test knows its secret.
        for _ in range(100):
            if self.secret is not None:
                break
            await asyncio.sleep(0.02)
        headers = {k.lower(): v for k, v in request.headers.items()}
        timestamp = headers.get("x-cuckoo-timestamp", "")
        signature = headers.get("x-cuckoo-signature", "")
        valid = self.secret is not None and verify_webhook(self.secret, timestamp, body, signature)
        delivery = Delivery(headers=headers, body=body, valid=valid)
        event: Any = None
        if valid:
            with contextlib.suppress(ValueError):
                event = json.loads(body)
        # Whole before it is seen: the test reads `deliveries` from another thread.
        delivery.event = event if isinstance(event, dict) else {}
        delivery.status = 401 if not valid else 422 if not delivery.event else 0
        with self._lock:
            self.deliveries.append(delivery)
        if delivery.status:
            return Response(status_code=delivery.status)
        event_id = str(event.get("id"))
        with self._lock:
            attempt = self._attempts.get(event_id, 0) + 1
            self._attempts[event_id] = attempt
        if attempt == 1 and self.slow_first:
            await asyncio.sleep(self.slow_first)
        if attempt <= self.fail_first:
            delivery.status = 500
            return Response(status_code=500)
        if self.redirect:
            delivery.status = 307
            return Response(status_code=307, headers={"Location": "/elsewhere"})
        if event_id not in self.handled:
            if self.handler is not None:
                await self.handler(event)
            self.handled.add(event_id)
        delivery.status = 204
        return Response(status_code=204)

    def start(self) -> str:
        async def elsewhere(request: Request) -> Response:
            self.elsewhere.append(await request.body())
            return Response(status_code=204)

        app = Starlette(
            routes=[
                Route("/hook", self._hook, methods=["POST"]),
                Route("/elsewhere", elsewhere, methods=["GET", "POST"]),
            ]
        )
        config = uvicorn.Config(
            app, host="127.0.0.1", port=0, log_level="warning", lifespan="off", access_log=False
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the webhook receiver did not start")
            time.sleep(0.01)
        port = self._server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}/hook"
        return self.url

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)

    def for_event(self, event_id: str) -> list[Delivery]:
        with self._lock:
            return [d for d in self.deliveries if d.headers.get("x-cuckoo-event-id") == event_id]

    async def wait_until(self, predicate: Callable[[], Any], timeout: float = 10.0) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError("webhook condition not met")
            await asyncio.sleep(0.05)
