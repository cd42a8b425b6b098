"""`/v1/client`: what a person's app speaks — themselves, their conversations and messages,
stop, blocking an agent, devices, storage and API keys (media and the socket are in
their own modules)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from talkie_tui.devserver.common import clock
from talkie_tui.devserver.common.sqlite import Row
from talkie_tui.devserver.cuckoo import ids, shapes
from talkie_tui.devserver.cuckoo.bodies import PAGE_DEFAULT, PAGE_MAX, int_query, one_line, req_str
from talkie_tui.devserver.cuckoo.contacts import hidden_conversations
from talkie_tui.devserver.cuckoo.conversations import check_id
from talkie_tui.devserver.cuckoo.drafts import PERSON_FIELDS
from talkie_tui.devserver.cuckoo.errors import invalid, not_found
from talkie_tui.devserver.cuckoo.principals import principal_of, user_of
from talkie_tui.devserver.cuckoo.routing import created, hub_of, no_content, read_json, send_draft


async def me(request: Request) -> JSONResponse:
    """GET /v1/client/me"""
    user = hub_of(request).storage.get_user(user_of(request))
    assert user is not None
    return JSONResponse({"user": shapes.user_json(user)})


async def update_me(request: Request) -> JSONResponse:
    """PATCH /v1/client/me {display_name?} → the person (what the app changes about itself)."""
    hub = hub_of(request)
    user_id = user_of(request)
    body = await read_json(request, {"display_name"})
    if "display_name" in body:
        name = req_str(body, "display_name", "invalid_display_name")
        name = one_line(name, "display_name", "invalid_display_name", 1, 64)
        hub.storage.set_display_name(user_id, name, clock.iso(clock.now()))
    user = hub.storage.get_user(user_id)
    assert user is not None
    return JSONResponse({"user": shapes.user_json(user)})


async def storage(request: Request) -> JSONResponse:
    """GET /v1/client/me/storage: media used and budget, how long messages are kept."""
    hub = hub_of(request)
    config = hub.config
    return JSONResponse(
        {
            "media": {
                "used_bytes": hub.storage.used_bytes(user_of(request)),
                "budget_bytes": config.person_media_budget,
            },
            "messages": {
                "kept_days": round(config.retention_seconds / 86_400, 6),
                "kept_since": hub.conversations.window_start(),
            },
        }
    )


async def list_conversations(request: Request) -> JSONResponse:
    """GET /v1/client/conversations"""
    hub = hub_of(request)
    user_id = user_of(request)
    hidden = hidden_conversations(hub, user_id)  # the agents the person removed
    rows = [row for row in hub.storage.conversations_of(user_id) if row["id"] not in hidden]
    return JSONResponse(
        {"conversations": [hub.conversations.client_view(row, user_id) for row in rows]}
    )


async def get_conversation(request: Request) -> JSONResponse:
    """GET /v1/client/conversations/{id}"""
    hub = hub_of(request)
    user_id = user_of(request)
    row = hub.conversations.for_member(user_id, request.path_params["conversation_id"])
    return JSONResponse({"conversation": hub.conversations.client_view(row, user_id)})


def _cursor(request: Request, name: str, conversation_id: str) -> int | None:
    raw = request.query_params.get(name)
    if not raw:
        return None
    check_id(raw, "msg", "message")
    found = hub_of(request).storage.seq_of(raw)
    if found is None or found[0] != conversation_id:
        raise invalid(f"invalid_{name}", f"`{name}` is not a message of this conversation.")
    return found[1]


async def list_messages(request: Request) -> JSONResponse:
    """GET …/messages?before=&after=&limit= — newest first, or oldest first after a message."""
    hub = hub_of(request)
    row = hub.conversations.for_member(user_of(request), request.path_params["conversation_id"])
    limit = int_query(request, "limit", PAGE_DEFAULT, 1, PAGE_MAX)
    before = _cursor(request, "before", row["id"])
    after = _cursor(request, "after", row["id"])
    if before is not None and after is not None:
        raise invalid("invalid_cursor", "Give `before` or `after`, not both.")
    since = hub.conversations.window_start()
    next_before = next_after = None
    viewer = user_of(request)
    if after is not None:
        rows = hub.storage.page_after(row["id"], after, limit + 1, since, viewer)
        more = len(rows) > limit
        rows = rows[:limit]
        if more:
            next_after = rows[-1]["id"]
    else:
        rows = hub.storage.page_before(row["id"], before, limit + 1, since, viewer)
        more = len(rows) > limit
        rows = rows[:limit]
        if more:
            next_before = rows[-1]["id"]
    return JSONResponse(
        {
            "messages": [hub.forms.client_form(message) for message in rows],
            "next_before": next_before,
            "next_after": next_after,
            "trimmed": row["created_at"] < since,
        }
    )


async def send_message(request: Request) -> JSONResponse:
    """POST …/messages: send text and files, or tap a button (`action`) → 201, or 200 on replay."""
    hub = hub_of(request)
    return await send_draft(
        request, PERSON_FIELDS, user_of(request), hub.chat.send_by_person, hub.forms.client_form_of
    )


async def stop(request: Request) -> JSONResponse:
    """POST …/stop → {stopped: [Message]}; each agent hears `stop.requested`."""
    hub = hub_of(request)
    await read_json(request, (), optional=True)
    rows = hub.streams.stop(user_of(request), request.path_params["conversation_id"])
    return JSONResponse({"stopped": [hub.forms.client_form(row) for row in rows]})


async def mark_read(request: Request) -> Response:
    """POST …/read {message_id} → 204"""
    hub = hub_of(request)
    user_id = user_of(request)
    row = hub.conversations.for_member(user_id, request.path_params["conversation_id"])
    body = await read_json(request, {"message_id"})
    found = hub.storage.seq_of(req_str(body, "message_id", "invalid_message_id"))
    if found is None or found[0] != row["id"]:
        raise invalid("invalid_message_id", "Not a message of this conversation.", "message_id")
    hub.storage.mark_read(row["id"], user_id, found[1])
    hub.feeds.push(
        [user_id],
        "conversation.read",
        {"conversation_id": row["id"], "read_up_to": body["message_id"]},
    )
    return no_content()


# blocking


async def block_agent(request: Request) -> Response:
    """POST /v1/client/agents/{id}/block → 204; the agent leaves the person's conversation."""
    hub = hub_of(request)
    await read_json(request, (), optional=True)
    hub.conversations.block(user_of(request), request.path_params["agent_id"])
    return no_content()


async def unblock_agent(request: Request) -> Response:
    """DELETE /v1/client/agents/{id}/block → 204; the agent joins again (no pair token)."""
    hub_of(request).conversations.unblock(user_of(request), request.path_params["agent_id"])
    return no_content()


# devices


def _device_json(row: Row, current: str | None) -> dict[str, Any]:
    return {
        "id": row["id"],
        "name": row["name"],
        "last_seen_at": row["last_seen_at"],
        "created_at": row["created_at"],
        "expires_at": row["expires_at"],
        "current": row["id"] == current,
    }


async def list_devices(request: Request) -> JSONResponse:
    """GET /v1/client/devices"""
    principal = principal_of(request)
    rows = hub_of(request).storage.sessions_of(user_of(request))
    return JSONResponse({"devices": [_device_json(row, principal.session_id) for row in rows]})


async def delete_device(request: Request) -> Response:
    """DELETE /v1/client/devices/{id} → 204, or 404 `device_not_found`."""
    device_id = request.path_params["device_id"]
    hub = hub_of(request)
    if not hub.storage.delete_session(user_of(request), device_id):
        raise not_found("device_not_found", "There is no such device.")
    await hub.feeds.end_sessions(user_of(request), [device_id])
    return no_content()


async def delete_other_devices(request: Request) -> Response:
    """DELETE /v1/client/devices → 204: every device but the caller's is signed out."""
    principal = principal_of(request)
    hub = hub_of(request)
    user_id = user_of(request)
    signed_out = hub.storage.delete_other_sessions(user_id, principal.session_id)
    await hub.feeds.end_sessions(user_id, signed_out)
    return no_content()


# API keys


def _key_json(row: Row) -> dict[str, Any]:
    return {"id": row["id"], "name": row["name"], "created_at": row["created_at"]}


async def create_api_key(request: Request) -> JSONResponse:
    """POST /v1/client/api-keys {name} → {api_key, key} (the key is shown once)."""
    hub = hub_of(request)
    body = await read_json(request, {"name"})
    name = one_line(req_str(body, "name", "invalid_name"), "name", "invalid_name", 1, 80)
    key = ids.new_secret(ids.API_KEY)
    row = {
        "id": ids.new_id("key"),
        "user_id": user_of(request),
        "name": name,
        "token_hash": ids.secret_hash(key),
        "created_at": clock.iso(clock.now()),
    }
    hub.storage.create_api_key(row)
    return created({"api_key": _key_json(row), "key": key})


async def list_api_keys(request: Request) -> JSONResponse:
    """GET /v1/client/api-keys"""
    rows = hub_of(request).storage.api_keys_of(user_of(request))
    return JSONResponse({"api_keys": [_key_json(row) for row in rows]})


async def delete_api_key(request: Request) -> Response:
    """DELETE /v1/client/api-keys/{id} → 204"""
    key_id = request.path_params["key_id"]
    if not hub_of(request).storage.revoke_api_key(user_of(request), key_id, clock.iso(clock.now())):
        raise not_found("api_key_not_found", "There is no such API key.")
    return no_content()


CONVERSATION = "/v1/client/conversations/{conversation_id}"
CLIENT_ROUTES = [
    Route("/v1/client/me", me, methods=["GET"]),
    Route("/v1/client/me", update_me, methods=["PATCH"]),
    Route("/v1/client/me/storage", storage, methods=["GET"]),
    Route("/v1/client/conversations", list_conversations, methods=["GET"]),
    Route(CONVERSATION, get_conversation, methods=["GET"]),
    Route(f"{CONVERSATION}/messages", list_messages, methods=["GET"]),
    Route(f"{CONVERSATION}/messages", send_message, methods=["POST"]),
    Route(f"{CONVERSATION}/stop", stop, methods=["POST"]),
    Route(f"{CONVERSATION}/read", mark_read, methods=["POST"]),
    Route("/v1/client/agents/{agent_id}/block", block_agent, methods=["POST"]),
    Route("/v1/client/agents/{agent_id}/block", unblock_agent, methods=["DELETE"]),
    Route("/v1/client/devices", list_devices, methods=["GET"]),
    Route("/v1/client/devices", delete_other_devices, methods=["DELETE"]),
    Route("/v1/client/devices/{device_id}", delete_device, methods=["DELETE"]),
    Route("/v1/client/api-keys", create_api_key, methods=["POST"]),
    Route("/v1/client/api-keys", list_api_keys, methods=["GET"]),
    Route("/v1/client/api-keys/{key_id}", delete_api_key, methods=["DELETE"]),
]
