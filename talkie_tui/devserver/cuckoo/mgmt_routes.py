"""`/v1/mgmt`: an owner's agents, their binding (socket or webhook, with a secret shown once)
and their pairing codes. A session or an API key (or the dev header) unlocks it."""

from __future__ import annotations

import json
import re
import secrets
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from talkie_tui.devserver.common import clock
from talkie_tui.devserver.common.sqlite import Row
from talkie_tui.devserver.cuckoo import ids, shapes
from talkie_tui.devserver.cuckoo.addresses import url_problem
from talkie_tui.devserver.cuckoo.bodies import one_line, opt_bool, opt_str, req_str
from talkie_tui.devserver.cuckoo.conversations import check_id
from talkie_tui.devserver.cuckoo.errors import conflict, invalid, not_found
from talkie_tui.devserver.cuckoo.principals import user_of
from talkie_tui.devserver.cuckoo.routing import created, hub_of, no_content, read_json

HANDLE = re.compile(r"[a-z0-9][a-z0-9_-]{2,31}")
DISPLAY_NAME_CHARS = 80
DESCRIPTION_CHARS = 500
MAX_STARTERS = 4
STARTER_CHARS = 40
PAYLOAD_BYTES = 4096
MAX_USES = 1_000_000
CODE_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"
AGENT_FIELDS = (
    "handle",
    "display_name",
    "description",
    "starters",
    "supports_schedules",
    "listed",
)


def _starters(raw: Any) -> list[str]:
    if raw is None:
        return []
    if not isinstance(raw, list) or len(raw) > MAX_STARTERS:
        raise invalid("invalid_starters", f"At most {MAX_STARTERS} starters.", "starters")
    return [one_line(str(item), "starters", "invalid_starters", 1, STARTER_CHARS) for item in raw]


def owned_agent(request: Request) -> Row:
    """The agent in the path, if the caller owns it (else 404 `agent_not_found`)."""
    agent_id = check_id(request.path_params["agent_id"], "agt", "agent")
    agent = hub_of(request).storage.get_agent(agent_id)
    if agent is None or agent["owner_id"] != user_of(request):
        raise not_found("agent_not_found", "You have no such agent.")
    return agent


async def create_agent(request: Request) -> JSONResponse:
    """POST /v1/mgmt/agents {handle, display_name, description?, starters?, …} → 201."""
    hub = hub_of(request)
    body = await read_json(request, AGENT_FIELDS)
    handle = req_str(body, "handle", "invalid_handle")
    if not HANDLE.fullmatch(handle):
        raise invalid(
            "invalid_handle",
            "A handle is 3 to 32 of [a-z0-9_-], starting with a-z or 0-9.",
            "handle",
        )
    name = one_line(
        req_str(body, "display_name", "invalid_display_name"),
        "display_name",
        "invalid_display_name",
        1,
        DISPLAY_NAME_CHARS,
    )
    description = opt_str(body, "description", "invalid_description") or ""
    if len(description) > DESCRIPTION_CHARS:
        raise invalid(
            "invalid_description", f"At most {DESCRIPTION_CHARS} characters.", "description"
        )
    if hub.storage.handle_taken(handle):
        raise conflict("handle_taken", f"The handle {handle!r} is taken.", "handle")
    owner = user_of(request)
    agent = hub.storage.create_agent(
        {
            "id": ids.new_id("agt"),
            "handle": handle,
            "display_name": name,
            "description": description.strip(),
            "owner_id": owner,
            "starters": _starters(body.get("starters")),
            "supports_schedules": opt_bool(body, "supports_schedules"),
            "created_at": clock.iso(clock.now()),
        }
    )
    listed = opt_bool(body, "listed")
    if listed:  # in the public catalogue (`PATCH …/agents/{id}` changes it later)
        hub.storage.set_listed(agent["id"], True, agent["created_at"])
    conversation, _ = hub.conversations.open_dm(owner, agent["id"])
    shown = {**shapes.agent_json(agent), "listed": listed}
    return created({"agent": shown, "conversation_id": conversation["id"]})


async def list_agents(request: Request) -> JSONResponse:
    """GET /v1/mgmt/agents"""
    rows = hub_of(request).storage.agents_of(user_of(request))
    return JSONResponse({"agents": [shapes.agent_json(row) for row in rows]})


async def get_agent(request: Request) -> JSONResponse:
    """GET /v1/mgmt/agents/{id}"""
    agent = owned_agent(request)
    status = hub_of(request).presence.status_of(agent["id"])
    return JSONResponse({"agent": {**shapes.agent_json(agent), "status": status}})


async def create_binding(request: Request) -> JSONResponse:
    """POST …/binding {mode, webhook_url?} → {binding, secret}; the old binding is revoked."""
    hub = hub_of(request)
    agent = owned_agent(request)
    body = await read_json(request, {"mode", "webhook_url"})
    mode = body.get("mode")
    if mode not in ("socket", "webhook"):
        raise invalid("invalid_mode", "`mode` is socket or webhook.", "mode")
    url = body.get("webhook_url")
    if mode == "webhook":
        problem = url_problem(url, hub.config.dev)
        if problem is not None:
            raise invalid("invalid_webhook_url", problem, "webhook_url")
    elif url is not None:
        raise invalid("invalid_webhook_url", "A socket binding has no webhook_url.", "webhook_url")
    secret = ids.new_secret(ids.BINDING_SECRET)
    row = {
        "id": ids.new_id("bnd"),
        "agent_id": agent["id"],
        "mode": mode,
        "webhook_url": url,
        "secret_hash": ids.secret_hash(secret),
        "created_at": clock.iso(clock.now()),
    }
    revoked = hub.storage.replace_binding(row)
    await hub.links.end(agent["id"], revoked)
    binding = hub.storage.live_binding(agent["id"])
    assert binding is not None
    hub.presence.announce(agent["id"])
    hub.webhooks.wake()
    return created({"binding": shapes.binding_json(binding), "secret": secret})


async def get_binding(request: Request) -> JSONResponse:
    """GET …/binding → {binding|null}"""
    agent = owned_agent(request)
    binding = hub_of(request).storage.live_binding(agent["id"])
    return JSONResponse({"binding": shapes.binding_json(binding) if binding else None})


async def delete_binding(request: Request) -> Response:
    """DELETE …/binding → 204 (an open socket is closed with 4002)."""
    hub = hub_of(request)
    agent = owned_agent(request)
    revoked = hub.storage.revoke_bindings(agent["id"], clock.iso(clock.now()))
    if not revoked:
        raise not_found("no_binding", "This agent has no binding.")
    await hub.links.end(agent["id"], revoked)
    hub.presence.announce(agent["id"])
    return no_content()


def pair_token_json(row: Row) -> dict[str, Any]:
    """A pairing code as its owner sees it."""
    return {
        "id": row["id"],
        "agent_id": row["agent_id"],
        "code": row["code"],
        "label": row["label"],
        "payload": row["payload"],
        "max_uses": row["max_uses"],
        "uses": row["uses"],
        "created_at": row["created_at"],
    }


async def create_pair_token(request: Request) -> JSONResponse:
    """POST …/pair-tokens {label?, payload?, max_uses?} → 201 {pair_token, code}."""
    hub = hub_of(request)
    agent = owned_agent(request)
    body = await read_json(request, {"label", "payload", "max_uses"}, optional=True)
    label = opt_str(body, "label", "invalid_label")
    payload = body.get("payload")
    if payload is not None and len(json.dumps(payload).encode()) >= PAYLOAD_BYTES:
        raise invalid("invalid_payload", f"A payload is under {PAYLOAD_BYTES} bytes.", "payload")
    max_uses = body.get("max_uses")
    if max_uses is not None and (
        not isinstance(max_uses, int) or isinstance(max_uses, bool) or not 1 <= max_uses <= MAX_USES
    ):
        raise invalid("invalid_max_uses", f"`max_uses` is 1 to {MAX_USES}.", "max_uses")
    code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(10))
    row = hub.storage.create_pair_token(
        {
            "id": ids.new_id("tok"),
            "agent_id": agent["id"],
            "code": code,
            "label": label,
            "payload": payload,
            "max_uses": max_uses,
            "created_at": clock.iso(clock.now()),
        }
    )
    return created({"pair_token": pair_token_json(row), "code": code})


async def list_pair_tokens(request: Request) -> JSONResponse:
    """GET …/pair-tokens"""
    agent = owned_agent(request)
    rows = hub_of(request).storage.pair_tokens_of(agent["id"])
    return JSONResponse({"pair_tokens": [pair_token_json(row) for row in rows]})


async def delete_pair_token(request: Request) -> Response:
    """DELETE …/pair-tokens/{tid} → 204"""
    agent = owned_agent(request)
    token_id = request.path_params["token_id"]
    if not hub_of(request).storage.revoke_pair_token(agent["id"], token_id, clock.iso(clock.now())):
        raise not_found("pair_token_not_found", "There is no such pairing code.")
    return no_content()


AGENT = "/v1/mgmt/agents/{agent_id}"
MGMT_ROUTES = [
    Route("/v1/mgmt/agents", create_agent, methods=["POST"]),
    Route("/v1/mgmt/agents", list_agents, methods=["GET"]),
    Route(AGENT, get_agent, methods=["GET"]),
    Route(f"{AGENT}/binding", create_binding, methods=["POST"]),
    Route(f"{AGENT}/binding", get_binding, methods=["GET"]),
    Route(f"{AGENT}/binding", delete_binding, methods=["DELETE"]),
    Route(f"{AGENT}/pair-tokens", create_pair_token, methods=["POST"]),
    Route(f"{AGENT}/pair-tokens", list_pair_tokens, methods=["GET"]),
    Route(f"{AGENT}/pair-tokens/{{token_id}}", delete_pair_token, methods=["DELETE"]),
]
