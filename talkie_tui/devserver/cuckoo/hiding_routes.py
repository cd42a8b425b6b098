"""`/v1/client`: a person hides a message, or clears a conversation, for themselves only (the
agent keeps every message; the person's pages, list and unread count leave them out)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from talkie_tui.devserver.cuckoo.conversations import check_id
from talkie_tui.devserver.cuckoo.errors import not_found
from talkie_tui.devserver.cuckoo.principals import user_of
from talkie_tui.devserver.cuckoo.routing import hub_of, no_content, read_json

CONVERSATION = "/v1/client/conversations/{conversation_id}"


async def hide_message(request: Request) -> Response:
    """DELETE …/messages/{id} → 204: the message is hidden for the person (again: 204)."""
    hub = hub_of(request)
    user_id = user_of(request)
    row = hub.conversations.for_member(user_id, request.path_params["conversation_id"])
    message_id = check_id(request.path_params["message_id"], "msg", "message")
    message = hub.storage.get_message(message_id)
    if message is None or message["conversation_id"] != row["id"]:
        raise not_found("message_not_found", "There is no such message here.")
    hub.storage.hide_message(user_id, message_id)
    return no_content()


async def clear(request: Request) -> Response:
    """POST …/clear → 204: every message so far is hidden for the person."""
    hub = hub_of(request)
    await read_json(request, (), optional=True)
    user_id = user_of(request)
    row = hub.conversations.for_member(user_id, request.path_params["conversation_id"])
    hub.storage.clear_conversation(row["id"], user_id)
    return no_content()


HIDING_ROUTES = [
    Route(f"{CONVERSATION}/messages/{{message_id}}", hide_message, methods=["DELETE"]),
    Route(f"{CONVERSATION}/clear", clear, methods=["POST"]),
]
