"""The schedule routes of both APIs, one handler each for a person and an agent: a person's
(`/v1/client/…/schedules`: list, ask for one, pause, resume, change, delete) and an agent's
(`/v1/agent/…/schedules`: list, set one up, confirm, name, change, pause, delete). The rules
are `schedules.py`'s."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from talkie_tui.devserver.cuckoo.principals import agent_of, user_of
from talkie_tui.devserver.cuckoo.routing import created, hub_of, no_content, read_json
from talkie_tui.devserver.cuckoo.schedules import schedule_json

CLIENT = "/v1/client/conversations/{conversation_id}/schedules"
AGENT = "/v1/agent/conversations/{conversation_id}/schedules"
# What each side may send: to make one, to change one.
PERSON_FIELDS = (("instruction", "cadence"), ("paused", "instruction", "cadence"))
AGENT_FIELDS = (("title", "instruction", "cadence"), ("title", "instruction", "cadence", "status"))


def _asker(request: Request) -> tuple[str, bool]:
    """Who asks (a person's or an agent's id), and whether it is an agent."""
    if request.url.path.startswith("/v1/agent/"):
        return agent_of(request), True
    return user_of(request), False


async def list_schedules(request: Request) -> JSONResponse:
    """GET …/schedules → {schedules}"""
    hub = hub_of(request)
    member, _agent = _asker(request)
    row = hub.conversations.for_member(member, request.path_params["conversation_id"])
    return JSONResponse({"schedules": hub.schedules.listed(row["id"])})


async def create_schedule(request: Request) -> JSONResponse:
    """POST …/schedules → 201 {schedule}: a person's {instruction, cadence} (pending), an
    agent's {title, instruction, cadence} (active)."""
    schedules = hub_of(request).schedules
    member, agent = _asker(request)
    body = await read_json(request, (AGENT_FIELDS if agent else PERSON_FIELDS)[0])
    make = schedules.create_by_agent if agent else schedules.request
    row = make(member, request.path_params["conversation_id"], body)
    return created({"schedule": schedule_json(row)})


async def change_schedule(request: Request) -> JSONResponse:
    """PATCH …/schedules/{id} → {schedule}: a person's {paused?, instruction?, cadence?}, an
    agent's {title?, instruction?, cadence?, status?}."""
    schedules = hub_of(request).schedules
    member, agent = _asker(request)
    body = await read_json(request, (AGENT_FIELDS if agent else PERSON_FIELDS)[1])
    change = schedules.change_by_agent if agent else schedules.change_by_person
    params = request.path_params
    row = change(member, params["conversation_id"], params["schedule_id"], body)
    return JSONResponse({"schedule": schedule_json(row)})


async def delete_schedule(request: Request) -> Response:
    """DELETE …/schedules/{id} → 204 (an agent declines a request so)."""
    schedules = hub_of(request).schedules
    member, agent = _asker(request)
    delete = schedules.delete_by_agent if agent else schedules.delete_by_person
    delete(member, request.path_params["conversation_id"], request.path_params["schedule_id"])
    return no_content()


SCHEDULE_ROUTES = [
    route
    for base in (CLIENT, AGENT)
    for route in (
        Route(base, list_schedules, methods=["GET"]),
        Route(base, create_schedule, methods=["POST"]),
        Route(f"{base}/{{schedule_id}}", change_schedule, methods=["PATCH"]),
        Route(f"{base}/{{schedule_id}}", delete_schedule, methods=["DELETE"]),
    )
]
