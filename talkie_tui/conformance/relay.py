"""A relay between a peer and a server (HTTP and WebSockets) whose hooks may change traffic.

`talkie conformance agent` puts one between the agent under test and its hub, to deliver an
event twice or drop a socket as a network would; the tests build broken servers on it. With
no hook overridden it forwards every request and frame unchanged.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

__all__ = ["Json", "Relay"]

Json = dict[str, Any]
_FORWARDED = ("authorization", "accept", "content-type", "x-dev-user")
_METHODS = ["GET", "POST", "DELETE", "PUT", "PATCH"]


class Relay:
    """Forwards HTTP and the sockets at `socket_paths` to `upstream`; subclasses change it."""

    socket_paths: tuple[str, ...] = ()

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self._http: httpx.AsyncClient | None = None

    def app(self) -> Starlette:
        """The ASGI app to serve."""
        sockets = [WebSocketRoute(path, self.socket) for path in self.socket_paths]
        return Starlette(routes=[*sockets, Route("/{path:path}", self.handle, methods=_METHODS)])

    @property
    def http(self) -> httpx.AsyncClient:
        """The client to the upstream (made on first use, in the relay's event loop)."""
        if self._http is None:
            self._http = httpx.AsyncClient(timeout=httpx.Timeout(30.0), trust_env=False)
        return self._http

    # --- hooks -------------------------------------------------------------------------------

    async def intercept(self, request: Request, body: bytes) -> Response | None:
        """Answer a request without the upstream; None forwards it."""
        return None

    def request_json(self, path: str, data: Json) -> Json:
        """Change a JSON request body before it is forwarded."""
        return data

    def answer_json(self, path: str, status: int, data: Any) -> tuple[int, Any]:
        """Change a JSON answer (status and body) before it goes back."""
        return status, data

    async def client_frame(self, frame: Json, upstream: ClientConnection) -> Json | None:
        """Change a frame the peer sent (None drops it)."""
        return frame

    async def server_frames(self, frame: Json, websocket: WebSocket) -> list[Json]:
        """The frames to send the peer for one the server sent."""
        return [frame]

    def close_code(self, code: int) -> int | None:
        """The close code to pass on for the server's (None keeps the peer's socket open)."""
        return code

    # --- HTTP --------------------------------------------------------------------------------

    async def forward(self, request: Request, body: bytes) -> httpx.Response:
        """Send the request on to the upstream as it came."""
        headers = {k: v for k, v in request.headers.items() if k.lower() in _FORWARDED}
        return await self.http.request(
            request.method,
            self.upstream + request.url.path,
            params=request.query_params,
            content=body,
            headers=headers,
        )

    async def handle(self, request: Request) -> Response:
        """Answer one request: a hook's own answer, or the upstream's (through the hooks)."""
        body = await request.body()
        special = await self.intercept(request, body)
        if special is not None:
            return special
        path = request.url.path
        if body and request.headers.get("content-type", "").startswith("application/json"):
            with contextlib.suppress(ValueError):
                data = json.loads(body)
                if isinstance(data, dict):
                    body = json.dumps(self.request_json(path, data)).encode()
        upstream = await self.forward(request, body)
        if upstream.headers.get("content-type", "").startswith("application/json"):
            status, answer = self.answer_json(path, upstream.status_code, upstream.json())
            if answer is not None:
                return JSONResponse(answer, status_code=status)
            return Response(status_code=status)
        return Response(
            upstream.content,
            status_code=upstream.status_code,
            media_type=upstream.headers.get("content-type"),
        )

    # --- sockets -----------------------------------------------------------------------------

    def socket_url(self, websocket: WebSocket) -> str:
        """The upstream socket's URL for the peer's."""
        query = websocket.url.query
        base = "ws" + self.upstream[4:] if self.upstream.startswith("http") else self.upstream
        return base + websocket.url.path + (f"?{query}" if query else "")

    async def socket(self, websocket: WebSocket) -> None:
        """Relay frames both ways; the server's refusal or close code goes to the peer."""
        headers = {k: v for k, v in websocket.headers.items() if k.lower() in _FORWARDED}
        try:
            upstream = await connect(
                self.socket_url(websocket),
                additional_headers=headers,
                ping_interval=None,
                max_size=None,
            )
        except InvalidStatus as refused:
            await websocket.send_denial_response(
                Response(
                    refused.response.body,
                    status_code=refused.response.status_code,
                    media_type="application/json",
                )
            )
            return
        await websocket.accept()
        async with upstream:
            await self._pump(websocket, upstream)

    async def _pump(self, websocket: WebSocket, upstream: ClientConnection) -> None:
        async def up() -> None:
            with contextlib.suppress(WebSocketDisconnect, ConnectionClosed):
                while True:
                    text = await websocket.receive_text()
                    try:
                        frame = json.loads(text)
                    except ValueError:
                        await upstream.send(text)
                        continue
                    changed = (
                        await self.client_frame(frame, upstream)
                        if isinstance(frame, dict)
                        else frame
                    )
                    if changed is not None:
                        await upstream.send(json.dumps(changed))
            await upstream.close()

        async def down() -> None:
            with contextlib.suppress(ConnectionClosed, WebSocketDisconnect):
                async for text in upstream:
                    frame = json.loads(text)
                    frames = (
                        await self.server_frames(frame, websocket)
                        if isinstance(frame, dict)
                        else [frame]
                    )
                    for item in frames:
                        await websocket.send_text(json.dumps(item))
            code = self.close_code(upstream.close_code or 1000)
            if code is None:
                await asyncio.Event().wait()  # keep the peer's socket open (until it leaves)
                return
            with contextlib.suppress(Exception):
                await websocket.close(code)

        tasks = [asyncio.create_task(up()), asyncio.create_task(down())]
        _, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
