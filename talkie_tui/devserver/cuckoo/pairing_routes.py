"""Adding an agent: `/v1/client/pair/{code}` (what a pairing code adds, then accepting it), the
public catalogue (`/v1/client/catalogue`, an entry added with `…/add`), and the owner's choice
to list an agent there (`listed` on `PATCH /v1/mgmt/agents/{id}`)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from talkie_tui.devserver.common import clock
from talkie_tui.devserver.common.sqlite import Row
from talkie_tui.devserver.cuckoo import shapes
from talkie_tui.devserver.cuckoo.bodies import opt_bool
from talkie_tui.devserver.cuckoo.contacts import add_agent, public_agent
from talkie_tui.devserver.cuckoo.conversations import check_id
from talkie_tui.devserver.cuckoo.errors import invalid, not_found
from talkie_tui.devserver.cuckoo.mgmt_routes import owned_agent
from talkie_tui.devserver.cuckoo.principals import user_of
from talkie_tui.devserver.cuckoo.routing import hub_of, read_json


def _live_code(request: Request) -> Row:
    token = hub_of(request).storage.pair_token_by_code(request.path_params["code"])
    if token is None:
        raise not_found("pair_code_not_found", "That code is unknown or used up.")
    return token


def _accepted(request: Request, conversation: Row, is_new: bool) -> JSONResponse:
    """`PairAccepted`: the conversation as the person sees it, and whether it is new to them."""
    hub = hub_of(request)
    view = hub.conversations.client_view(conversation, user_of(request))
    return JSONResponse({"conversation": view, "new": is_new})


async def resolve_code(request: Request) -> JSONResponse:
    """GET /v1/client/pair/{code} → `PairResolve`: the agent the code adds, and the code."""
    token = _live_code(request)
    agent = hub_of(request).storage.get_agent(token["agent_id"])
    assert agent is not None
    return JSONResponse(
        {
            "agent": public_agent(agent),
            "pair_token": {"id": token["id"], "label": token["label"]},
        }
    )


async def accept_code(request: Request) -> JSONResponse:
    """POST /v1/client/pair/{code}/accept → {conversation, new}; the agent hears the code."""
    hub = hub_of(request)
    await read_json(request, (), optional=True)
    token = _live_code(request)
    conversation, is_new = add_agent(hub, user_of(request), token["agent_id"], token)
    if is_new:
        hub.storage.use_pair_token(token["id"])
    return _accepted(request, conversation, is_new)


def _listed_agent(request: Request) -> Row:
    agent_id = check_id(request.path_params["agent_id"], "agt", "agent")
    hub = hub_of(request)
    agent = hub.storage.get_agent(agent_id)
    if agent is None or not hub.storage.is_listed(agent_id):
        raise not_found("agent_not_found", "The catalogue has no such agent.")
    return agent


async def catalogue(request: Request) -> JSONResponse:
    """GET /v1/client/catalogue → {agents: [CatalogueEntry]}: the agents listed publicly."""
    rows = hub_of(request).storage.listed_agents()
    return JSONResponse({"agents": [_entry(row) for row in rows]})


def _entry(row: Row) -> dict[str, Any]:
    return {**public_agent(row), "supports_schedules": bool(row["supports_schedules"])}


async def add_from_catalogue(request: Request) -> JSONResponse:
    """POST /v1/client/catalogue/{id}/add → `PairAccepted`; the agent joins with no code."""
    hub = hub_of(request)
    await read_json(request, (), optional=True)
    agent = _listed_agent(request)
    conversation, is_new = add_agent(hub, user_of(request), agent["id"])
    return _accepted(request, conversation, is_new)


async def update_agent(request: Request) -> JSONResponse:
    """PATCH /v1/mgmt/agents/{id} {listed?} → {agent}: the owner lists it publicly, or not."""
    hub = hub_of(request)
    agent = owned_agent(request)
    body = await read_json(request, {"listed"})
    if "listed" in body:
        if body["listed"] is None:
            raise invalid("invalid_listed", "`listed` must be true or false.", "listed")
        hub.storage.set_listed(agent["id"], opt_bool(body, "listed"), clock.iso(clock.now()))
    return JSONResponse({"agent": agent_with_listing(request, agent)})


def agent_with_listing(request: Request, agent: Row) -> dict[str, Any]:
    """An agent as the management API shows it, with whether it is in the catalogue."""
    listed = hub_of(request).storage.is_listed(agent["id"])
    return {**shapes.agent_json(agent), "listed": listed}


PAIRING_ROUTES = [
    Route("/v1/client/pair/{code}", resolve_code, methods=["GET"]),
    Route("/v1/client/pair/{code}/accept", accept_code, methods=["POST"]),
    Route("/v1/client/catalogue", catalogue, methods=["GET"]),
    Route("/v1/client/catalogue/{agent_id}/add", add_from_catalogue, methods=["POST"]),
    Route("/v1/mgmt/agents/{agent_id}", update_agent, methods=["PATCH"]),
]
