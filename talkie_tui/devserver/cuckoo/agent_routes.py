"""`/v1/agent`: everything a backend does over HTTP (the socket is `agent_socket.py`)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from talkie_tui.devserver.cuckoo import shapes
from talkie_tui.devserver.cuckoo.bodies import PAGE_DEFAULT, PAGE_MAX, int_query
from talkie_tui.devserver.cuckoo.conversations import check_id
from talkie_tui.devserver.cuckoo.drafts import AGENT_FIELDS
from talkie_tui.devserver.cuckoo.errors import invalid
from talkie_tui.devserver.cuckoo.outbox import envelope
from talkie_tui.devserver.cuckoo.principals import agent_of
from talkie_tui.devserver.cuckoo.routing import (
    hub_of,
    no_content,
    read_field,
    read_json,
    send_draft,
)

EVENTS_DEFAULT = 100
EVENTS_MAX = 100


async def me(request: Request) -> JSONResponse:
    """GET /v1/agent/me"""
    agent = hub_of(request).storage.get_agent(agent_of(request))
    assert agent is not None
    return JSONResponse({"agent": shapes.agent_json(agent)})


async def events(request: Request) -> JSONResponse:
    """GET /v1/agent/events?since=evt_…&limit= — oldest first, whatever their delivery state."""
    hub = hub_of(request)
    agent_id = agent_of(request)
    since = request.query_params.get("since")
    since_seq = 0
    if since:
        check_id(since, "evt", "event")
        found = hub.storage.event_seq(agent_id, since)
        if found is None:
            raise invalid("invalid_since", "`since` is not one of your events.")
        since_seq = found
    limit = int_query(request, "limit", EVENTS_DEFAULT, 1, EVENTS_MAX)
    rows = hub.storage.events_since(agent_id, since_seq, limit)
    return JSONResponse({"events": [envelope(row) for row in rows]})


async def conversation(request: Request) -> JSONResponse:
    """GET /v1/agent/conversations/{id}"""
    hub = hub_of(request)
    agent_id = agent_of(request)
    row = hub.conversations.for_member(agent_id, request.path_params["conversation_id"])
    return JSONResponse({"conversation": hub.conversations.agent_view(row, agent_id)})


async def history(request: Request) -> JSONResponse:
    """GET …/messages?before=&limit= — newest first, signed; stops at the retention window."""
    hub = hub_of(request)
    row = hub.conversations.for_member(agent_of(request), request.path_params["conversation_id"])
    limit = int_query(request, "limit", PAGE_DEFAULT, 1, PAGE_MAX)
    before_seq = None
    before = request.query_params.get("before")
    if before:
        check_id(before, "msg", "message")
        found = hub.storage.seq_of(before)
        if found is None or found[0] != row["id"]:
            raise invalid("invalid_before", "`before` is not a message of this conversation.")
        before_seq = found[1]
    rows = hub.storage.page_before(
        row["id"], before_seq, limit + 1, hub.conversations.window_start()
    )
    more = len(rows) > limit
    rows = rows[:limit]
    return JSONResponse(
        {
            "messages": [hub.forms.agent_form(message) for message in rows],
            "next_before": rows[-1]["id"] if more else None,
        }
    )


async def send(request: Request) -> JSONResponse:
    """POST …/messages: a message (201), a replay (200), or the start of a stream."""
    hub = hub_of(request)
    return await send_draft(
        request, AGENT_FIELDS, agent_of(request), hub.chat.send_by_agent, hub.forms.agent_form_of
    )


async def typing(request: Request) -> Response:
    """POST …/typing {state: start|stop} → 204"""
    state = await read_field(request, "state")
    hub_of(request).chat.typing(agent_of(request), request.path_params["conversation_id"], state)
    return no_content()


async def activity(request: Request) -> Response:
    """POST …/activity {state: thinking|working|idle, label?} → 204"""
    body = await read_json(request, {"state", "label"})
    hub_of(request).chat.activity(
        agent_of(request),
        request.path_params["conversation_id"],
        body.get("state"),
        body.get("label"),
    )
    return no_content()


async def append(request: Request) -> Response:
    """POST /v1/agent/messages/{id}/append {text} → 204"""
    text = await read_field(request, "text")
    hub_of(request).streams.append(agent_of(request), request.path_params["message_id"], text)
    return no_content()


async def finish(request: Request) -> JSONResponse:
    """POST /v1/agent/messages/{id}/finish {buttons?, quick_replies?} → 200 {message}"""
    hub = hub_of(request)
    body = await read_json(request, {"buttons", "quick_replies"}, optional=True)
    row = hub.streams.finish(
        agent_of(request),
        request.path_params["message_id"],
        body.get("buttons"),
        body.get("quick_replies"),
    )
    return JSONResponse({"message": hub.forms.agent_form(row)})


CONVERSATION = "/v1/agent/conversations/{conversation_id}"
AGENT_ROUTES = [
    Route("/v1/agent/me", me, methods=["GET"]),
    Route("/v1/agent/events", events, methods=["GET"]),
    Route(CONVERSATION, conversation, methods=["GET"]),
    Route(f"{CONVERSATION}/messages", history, methods=["GET"]),
    Route(f"{CONVERSATION}/messages", send, methods=["POST"]),
    Route(f"{CONVERSATION}/typing", typing, methods=["POST"]),
    Route(f"{CONVERSATION}/activity", activity, methods=["POST"]),
    Route("/v1/agent/messages/{message_id}/append", append, methods=["POST"]),
    Route("/v1/agent/messages/{message_id}/finish", finish, methods=["POST"]),
]
