"""What every route of the hub needs: the hub itself, a request's JSON body, and a member's
message sent by a POST."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, Response

from talkie_tui.devserver.cuckoo.bodies import json_body
from talkie_tui.devserver.cuckoo.drafts import Draft, Sent
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


async def send_draft(
    request: Request,
    fields: Collection[str],
    sender: str,
    send: Callable[[str, str, Draft], Sent],
    form: Callable[[Sent], dict[str, Any]],
) -> JSONResponse:
    """POST …/messages of a member (an agent or a person): the body's draft sent by `sender`
    through `send`, answered as `form` shows it, 201 when made, 200 on a replay."""
    hub = hub_of(request)
    body = await read_json(request, fields)
    with hub.storage.grouped():
        sent = send(sender, request.path_params["conversation_id"], Draft.of(body))
        answer = {"message": form(sent)}
    await hub.storage.durable()  # the 201 goes out once the message and its events are stored
    return created(answer, sent.created)
