"""The schedule routes of both APIs: a person's (`/v1/client/…/schedules`: list, ask for one,
pause, resume, change, delete) and an agent's (`/v1/agent/…/schedules`: list, set one up,
confirm, name, change, pause, delete). The rules are `schedules.py`'s."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .principals import agent_of, user_of
from .routing import created, hub_of, no_content, read_json
from .schedules import schedule_json

CLIENT = "/v1/client/conversations/{conversation_id}/schedules"
AGENT = "/v1/agent/conversations/{conversation_id}/schedules"
PERSON_FIELDS = ("instruction", "cadence")
PERSON_CHANGES = ("paused", "instruction", "cadence")
AGENT_FIELDS = ("title", "instruction", "cadence")
AGENT_CHANGES = ("title", "instruction", "cadence", "status")


async def person_list(request: Request) -> JSONResponse:
    """GET /v1/client/…/schedules → {schedules}"""
    hub = hub_of(request)
    row = hub.conversations.for_member(user_of(request), request.path_params["conversation_id"])
    return JSONResponse({"schedules": hub.schedules.listed(row["id"])})


async def person_create(request: Request) -> JSONResponse:
    """POST /v1/client/…/schedules {instruction, cadence} → 201 {schedule} (pending)."""
    hub = hub_of(request)
    body = await read_json(request, PERSON_FIELDS)
    row = hub.schedules.request(user_of(request), request.path_params["conversation_id"], body)
    return created({"schedule": schedule_json(row)})


async def person_change(request: Request) -> JSONResponse:
    """PATCH /v1/client/…/schedules/{id} {paused?, instruction?, cadence?} → {schedule}"""
    hub = hub_of(request)
    body = await read_json(request, PERSON_CHANGES)
    params = request.path_params
    row = hub.schedules.change_by_person(
        user_of(request), params["conversation_id"], params["schedule_id"], body
    )
    return JSONResponse({"schedule": schedule_json(row)})


async def person_delete(request: Request) -> Response:
    """DELETE /v1/client/…/schedules/{id} → 204"""
    params = request.path_params
    hub_of(request).schedules.delete_by_person(
        user_of(request), params["conversation_id"], params["schedule_id"]
    )
    return no_content()


async def agent_list(request: Request) -> JSONResponse:
    """GET /v1/agent/…/schedules → {schedules}"""
    hub = hub_of(request)
    row = hub.conversations.for_member(agent_of(request), request.path_params["conversation_id"])
    return JSONResponse({"schedules": hub.schedules.listed(row["id"])})


async def agent_create(request: Request) -> JSONResponse:
    """POST /v1/agent/…/schedules {title, instruction, cadence} → 201 {schedule} (active)."""
    hub = hub_of(request)
    body = await read_json(request, AGENT_FIELDS)
    row = hub.schedules.create_by_agent(
        agent_of(request), request.path_params["conversation_id"], body
    )
    return created({"schedule": schedule_json(row)})


async def agent_change(request: Request) -> JSONResponse:
    """PATCH /v1/agent/…/schedules/{id} {title?, instruction?, cadence?, status?} → {schedule}"""
    hub = hub_of(request)
    body = await read_json(request, AGENT_CHANGES)
    params = request.path_params
    row = hub.schedules.change_by_agent(
        agent_of(request), params["conversation_id"], params["schedule_id"], body
    )
    return JSONResponse({"schedule": schedule_json(row)})


async def agent_delete(request: Request) -> Response:
    """DELETE /v1/agent/…/schedules/{id} → 204 (declining a request is deleting it)."""
    params = request.path_params
    hub_of(request).schedules.delete_by_agent(
        agent_of(request), params["conversation_id"], params["schedule_id"]
    )
    return no_content()


SCHEDULE_ROUTES = [
    Route(CLIENT, person_list, methods=["GET"]),
    Route(CLIENT, person_create, methods=["POST"]),
    Route(f"{CLIENT}/{{schedule_id}}", person_change, methods=["PATCH"]),
    Route(f"{CLIENT}/{{schedule_id}}", person_delete, methods=["DELETE"]),
    Route(AGENT, agent_list, methods=["GET"]),
    Route(AGENT, agent_create, methods=["POST"]),
    Route(f"{AGENT}/{{schedule_id}}", agent_change, methods=["PATCH"]),
    Route(f"{AGENT}/{{schedule_id}}", agent_delete, methods=["DELETE"]),
]
