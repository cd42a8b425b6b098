"""What every route of the hub needs: the hub itself and a request's JSON body."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, Response

from talkie_tui.devserver.cuckoo.bodies import json_body
from talkie_tui.devserver.cuckoo.services import Hub


def hub_of(connection: HTTPConnection) -> Hub:
    """The running hub."""
    hub: Hub = connection.app.state.hub
    return hub


async def read_json(
    request: Request, allowed: Collection[str], *, optional: bool = False
) -> dict[str, Any]:
    """The JSON object body of a request (capped, unknown fields refused)."""
    cap = hub_of(request).config.max_body_bytes
    return await json_body(request, allowed, cap=cap, optional=optional)


async def read_field(request: Request, name: str) -> Any:
    """The one field of a request's JSON body (None when it is left out)."""
    return (await read_json(request, {name})).get(name)


def created(body: dict[str, Any], is_new: bool = True) -> JSONResponse:
    """201 for something made now, 200 when an earlier request already made it."""
    return JSONResponse(body, status_code=201 if is_new else 200)


def no_content() -> Response:
    """204."""
    return Response(status_code=204)
