"""Test mode's own endpoints: drop every socket, lose a session's next events, and check that
a secret arrived."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from talkie_tui.devserver.minara.bodies import parse_json_body, read_body
from talkie_tui.devserver.minara.credentials import NAME
from talkie_tui.devserver.minara.errors import ApiError, invalid_request, not_found
from talkie_tui.devserver.minara.services import Services


def _services(request: Request) -> Services:
    services: Services = request.app.state.services
    return services


async def drop_sockets(request: Request) -> JSONResponse:
    """POST /v1/_test/drop_sockets – abort every open /v1/stream socket (no close frame)."""
    return JSONResponse({"dropped": _services(request).sockets.drop_all()})


async def lose_events(request: Request) -> JSONResponse:
    """POST /v1/_test/sessions/:id/lose_events {"count": N} – the session's next N events get
    their seq but never reach the buffer or a socket (a real gap); `last_seq` before them."""
    raw = await read_body(request)
    try:
        payload: Any = parse_json_body(raw)
    except ApiError:
        payload = None
    count = payload.get("count") if isinstance(payload, dict) else None
    if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= 1000:
        raise invalid_request("`count` must be a whole number from 1 to 1000.")
    session_id = request.path_params["session_id"]
    channel = _services(request).channels.get(session_id)
    if channel is None:
        raise not_found(f"Session {session_id}")
    channel.lose_next(count)
    return JSONResponse({"last_seq": channel.last_seq})


async def credential_state(request: Request) -> JSONResponse:
    """GET /v1/_test/credentials/:name – whether it was written, and its SHA-256 (never it)."""
    name = request.path_params["name"]
    if not NAME.fullmatch(name):
        raise invalid_request("A credential name is 1–64 letters, digits, `.`, `_` or `-`.")
    fingerprint = _services(request).credentials.fingerprint(name)
    return JSONResponse({"set": fingerprint is not None, "sha256": fingerprint})


TEST_ROUTES = [
    Route("/v1/_test/drop_sockets", drop_sockets, methods=["POST"]),
    Route("/v1/_test/sessions/{session_id}/lose_events", lose_events, methods=["POST"]),
    Route("/v1/_test/credentials/{name}", credential_state, methods=["GET"]),
]
