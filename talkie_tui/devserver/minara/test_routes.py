"""Test mode's own endpoints: drop every socket, and check that a secret arrived."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from .credentials import NAME
from .errors import invalid_request
from .services import Services


def _services(request: Request) -> Services:
    services: Services = request.app.state.services
    return services


async def drop_sockets(request: Request) -> JSONResponse:
    """POST /v1/_test/drop_sockets – abort every open /v1/stream socket (no close frame)."""
    return JSONResponse({"dropped": _services(request).sockets.drop_all()})


async def credential_state(request: Request) -> JSONResponse:
    """GET /v1/_test/credentials/:name – whether it was written, and its SHA-256 (never it)."""
    name = request.path_params["name"]
    if not NAME.fullmatch(name):
        raise invalid_request("A credential name is 1–64 letters, digits, `.`, `_` or `-`.")
    fingerprint = _services(request).credentials.fingerprint(name)
    return JSONResponse({"set": fingerprint is not None, "sha256": fingerprint})


TEST_ROUTES = [
    Route("/v1/_test/drop_sockets", drop_sockets, methods=["POST"]),
    Route("/v1/_test/credentials/{name}", credential_state, methods=["GET"]),
]
