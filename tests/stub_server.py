"""Small real HTTP servers for protocol tests.

A `StubServer` runs an ASGI app (usually a few Starlette routes) under uvicorn on a loopback
address, port 0, in a background thread, and records every request it saw. `127.0.0.2` is
loopback on Linux too, so two stubs on `127.0.0.1` and `127.0.0.2` are two different origins.

`talkie_app` builds a minimal talkie/1 server: a manifest whose issuer is the origin the
request came to, plus the routes a test needs. `Streamer` sends a response body piece by piece
and records how much of it went out before the client hung up.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = [
    "ANOTHER_LOOPBACK",
    "ENDPOINTS",
    "UVICORN_PINGS",
    "ConnectionDropper",
    "CuttingProxy",
    "SeenRequest",
    "Streamer",
    "StubServer",
    "envelope",
    "error_response",
    "manifest_document",
    "small_buffer_client",
    "sse_frame",
    "sse_response",
    "talkie_app",
]

ANOTHER_LOOPBACK = "127.0.0.2"

ENDPOINTS = {
    "status": "/api/talkie/status",
    "run": "/api/talkie/run",
    "cancelRun": "/api/talkie/runs/{runId}/cancel",
    "threads": "/api/talkie/threads",
    "thread": "/api/talkie/threads/{threadId}",
    "action": "/api/talkie/actions/{actionId}",
    "decision": "/api/talkie/actions/{actionId}/decision",
}


@dataclass
class SeenRequest:
    """One request as the server received it."""

    method: str
    path: str
    raw_path: bytes
    headers: dict[str, str]
    body: bytes = b""

    def json(self) -> Any:
        """The request body as JSON."""
        return json.loads(self.body)


class _Recorder:
    """ASGI middleware that keeps every HTTP request (method, raw path, headers, body)."""

    def __init__(self, app: ASGIApp, seen: list[SeenRequest]) -> None:
        self.app = app
        self.seen = seen

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = SeenRequest(
            method=scope["method"],
            path=scope["path"],
            raw_path=scope.get("raw_path") or scope["path"].encode(),
            headers={k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]},
        )
        self.seen.append(request)

        async def recording_receive() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                request.body += message.get("body", b"")
            return message

        await self.app(scope, recording_receive, send)


# uvicorn's own WebSocket pings: every 20 s, the socket closed when an answer is 20 s late.
UVICORN_PINGS = (20.0, 20.0)

# Socket buffers for tests that measure how much of a body went out before the client left:
# without them the kernel alone can absorb tens of megabytes on loopback.
SMALL_BUFFER = 64 * 1024


class _QuickServer(uvicorn.Server):
    """uvicorn.Server that stops within milliseconds: it notices `should_exit` every 10 ms
    (not 100 ms) and closes connections at once instead of waiting for them gracefully."""

    async def main_loop(self) -> None:
        counter = 0
        while not await self.on_tick(counter):
            counter = (counter + 1) % 864000
            await asyncio.sleep(0.01)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()
        for server in self.servers:
            await server.wait_closed()


class StubServer:
    """An ASGI app served by uvicorn on `host`, an ephemeral port, in a daemon thread.

    With `small_buffers`, the server's send buffer is fixed at SMALL_BUFFER, so `Streamer.sent`
    is close to what the client actually received. `tls=(certfile, keyfile)` serves https.
    `pings=(interval, timeout)` is how the server pings its WebSockets (an interval of None:
    never).
    """

    def __init__(
        self,
        app: ASGIApp,
        host: str = "127.0.0.1",
        small_buffers: bool = False,
        tls: tuple[str, str] | None = None,
        pings: tuple[float | None, float | None] = UVICORN_PINGS,
    ) -> None:
        self.host = host
        self.scheme = "https" if tls else "http"
        self.requests: list[SeenRequest] = []
        self.small_buffers = small_buffers
        certfile, keyfile = tls or (None, None)
        config = uvicorn.Config(
            _Recorder(app, self.requests),
            host=host,
            port=0,
            log_level="critical",
            lifespan="off",
            access_log=False,
            # h11 and asyncio's loop, as before httptools and uvloop were installed (for the
            # Cuckoo hub): uvicorn's "auto" would pick them, and httptools' uvicorn refuses to
            # send header values hostile tests need (a Location with control bytes).
            http="h11",
            loop="asyncio",
            ssl_certfile=certfile,
            ssl_keyfile=keyfile,
            ws_ping_interval=pings[0],
            ws_ping_timeout=pings[1],
        )
        self._server = _QuickServer(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self.port = 0

    @property
    def origin(self) -> str:
        """`scheme://host:port`."""
        return f"{self.scheme}://{self.host}:{self.port}"

    def url(self, path: str = "") -> str:
        """An absolute URL on this server."""
        return self.origin + path

    def start(self) -> StubServer:
        """Start serving; returns once the socket listens."""
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the stub server on {self.host} did not start")
            time.sleep(0.005)
        listener = self._server.servers[0].sockets[0]
        if self.small_buffers:  # accepted connections inherit it
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SMALL_BUFFER)
        self.port = listener.getsockname()[1]
        return self

    def stop(self) -> None:
        """Stop serving and wait for the thread."""
        self.ask_to_stop()
        self.join()

    def ask_to_stop(self) -> None:
        """Tell the server to stop (without waiting, so several can stop at once)."""
        self._server.should_exit = True

    def join(self) -> None:
        """Wait for the server thread to end."""
        self._thread.join(timeout=10)

    def paths(self, method: str | None = None) -> list[str]:
        """The paths requested so far (optionally only those of one method)."""
        return [r.path for r in self.requests if method is None or r.method == method]


class ConnectionDropper:
    """A TCP server that reads each HTTP request whole, then closes without answering.

    It stands for a server (or proxy) that fails before the response starts; `bodies` holds
    the body of every request it swallowed.
    """

    def __init__(self, host: str = ANOTHER_LOOPBACK) -> None:
        self.host = host
        self.bodies: list[bytes] = []
        self._socket = socket.create_server((host, 0))
        self._socket.settimeout(0.1)
        self.port = self._socket.getsockname()[1]
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def origin(self) -> str:
        """`http://host:port`."""
        return f"http://{self.host}:{self.port}"

    def _serve(self) -> None:
        while not self._stopping.is_set():
            try:
                connection, _ = self._socket.accept()
            except TimeoutError:
                continue
            with connection:
                self.bodies.append(_read_request_body(connection))

    def stop(self) -> None:
        """Stop accepting and close the socket."""
        self._stopping.set()
        self._thread.join(timeout=5)
        self._socket.close()


class CuttingProxy:
    """A TCP proxy on 127.0.0.1 (run in the test's event loop) that cuts the connection of a
    run once the answer has started: the client sees its stream break off mid-answer while
    the server behind goes on (§5 "disconnect is not cancel")."""

    def __init__(self, target: str, cut_after: bytes = b"TEXT_MESSAGE_CONTENT") -> None:
        url = httpx.URL(target)
        self._target = (url.host, url.port or 80)
        self._cut_after = cut_after
        self._server: asyncio.Server | None = None
        self.cuts = 0

    async def __aenter__(self) -> CuttingProxy:
        self._server = await asyncio.start_server(self._connection, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._server is not None
        self._server.close()

    @property
    def origin(self) -> str:
        """`http://127.0.0.1:port` of the proxy."""
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    async def _connection(self, client_in: asyncio.StreamReader, client_out: Any) -> None:
        server_in, server_out = await asyncio.open_connection(*self._target)
        carrying_run = asyncio.Event()

        async def upstream() -> None:
            while data := await client_in.read(65536):
                if b"POST /api/talkie/run " in data:
                    carrying_run.set()
                server_out.write(data)
                await server_out.drain()

        async def downstream() -> None:
            while data := await server_in.read(65536):
                client_out.write(data)
                await client_out.drain()
                if carrying_run.is_set() and self._cut_after in data:
                    self.cuts += 1
                    return

        forward = asyncio.ensure_future(upstream())
        try:
            await downstream()
        finally:
            forward.cancel()
            for writer in (client_out, server_out):
                writer.close()


def small_buffer_client(**options: Any) -> httpx.AsyncClient:
    """An HTTP client whose receive buffer is SMALL_BUFFER (see StubServer `small_buffers`)."""
    options_ = [(socket.SOL_SOCKET, socket.SO_RCVBUF, SMALL_BUFFER)]
    transport = httpx.AsyncHTTPTransport(socket_options=options_)
    return httpx.AsyncClient(transport=transport, **options)


def _read_request_body(connection: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = connection.recv(65536)
        if not chunk:
            return b""
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        (
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        ),
        0,
    )
    while len(body) < length:
        chunk = connection.recv(65536)
        if not chunk:
            break
        body += chunk
    return body


# --- talkie/1 pieces ------------------------------------------------------------------------


def manifest_document(issuer: str, **overrides: Any) -> dict[str, Any]:
    """A valid talkie/1 manifest for `issuer`; keyword arguments replace top-level fields."""
    document: dict[str, Any] = {
        "spec": "talkie/1",
        "issuer": issuer,
        "serverId": "stub.test",
        "name": "Stub server",
        "auth": {"token": {"hint": "any token"}},
        "endpoints": dict(ENDPOINTS),
        "limits": {"maxMessageChars": 4000},
    }
    document.update(overrides)
    return document


def envelope(code: str, message: str, *, retryable: bool = False) -> dict[str, Any]:
    """A §3 error body."""
    return {"error": {"code": code, "message": message, "retryable": retryable}}


def error_response(
    status: int, code: str, message: str = "failed", *, retryable: bool = False
) -> JSONResponse:
    """A §3 error response."""
    return JSONResponse(envelope(code, message, retryable=retryable), status_code=status)


def _origin_of(request: Request) -> str:
    return f"{request.url.scheme}://{request.url.netloc}"


ManifestFactory = Callable[[str], Mapping[str, Any] | None]


def talkie_app(
    routes: Iterable[BaseRoute] = (),
    *,
    manifest: ManifestFactory | None = None,
    cache_control: str | None = None,
) -> Starlette:
    """A talkie/1 server: `routes` plus `/.well-known/talkie.json`.

    `manifest(origin)` builds the document (by default `manifest_document(origin)`), so a test
    can change it between requests (None: 404); a route in `routes` for the manifest path
    replaces it.
    """
    build = manifest or manifest_document

    async def serve_manifest(request: Request) -> Response:
        document = build(_origin_of(request))
        if document is None:
            return Response("Not Found", status_code=404)
        headers = {"Cache-Control": cache_control} if cache_control else None
        return JSONResponse(dict(document), headers=headers)

    return Starlette(routes=[*routes, Route("/.well-known/talkie.json", serve_manifest)])


# --- server-sent events ---------------------------------------------------------------------


def sse_frame(event: Mapping[str, Any], newline: str = "\n") -> str:
    """One SSE frame carrying an AG-UI event."""
    return f"data: {json.dumps(event, ensure_ascii=False)}{newline}{newline}"


@dataclass
class Streamer:
    """A response body sent piece by piece; records what went out and whether the client left.

    `pieces` are sent in order with `delay` seconds between them; when `repeat` is set, it is
    sent after the pieces over and over, up to `limit` bytes in all.
    """

    pieces: list[bytes] = field(default_factory=list)
    repeat: bytes = b""
    limit: int = 0
    delay: float = 0.0
    sent: int = 0
    finished: bool = False
    abandoned: threading.Event = field(default_factory=threading.Event)

    async def body(self) -> AsyncIterator[bytes]:
        """The generator handed to StreamingResponse."""
        try:
            for piece in self.pieces:
                yield piece
                self.sent += len(piece)
                if self.delay:
                    await asyncio.sleep(self.delay)
            while self.repeat and self.sent < self.limit:
                yield self.repeat
                self.sent += len(self.repeat)
                await asyncio.sleep(0)
            self.finished = True
        finally:
            if not self.finished:
                self.abandoned.set()

    def wait_abandoned(self, timeout: float = 5.0) -> bool:
        """True once the server noticed the client went away before the body ended."""
        return self.abandoned.wait(timeout)


def sse_response(
    body: str | bytes | Streamer, media_type: str = "text/event-stream", **kwargs: Any
) -> StreamingResponse:
    """A streaming event-stream response from text, bytes or a Streamer."""
    if isinstance(body, Streamer):
        return StreamingResponse(body.body(), media_type=media_type, **kwargs)
    data = body.encode() if isinstance(body, str) else body
    return StreamingResponse(iter([data]), media_type=media_type, **kwargs)
