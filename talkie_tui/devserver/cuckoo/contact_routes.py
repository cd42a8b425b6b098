"""`/v1/client/contacts` (the agents a person reaches: pinned, muted until a time, archived,
removed) and `/v1/client/agents/{id}/report`."""

from __future__ import annotations

from datetime import datetime

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from talkie_tui.devserver.common import clock
from talkie_tui.devserver.cuckoo.bodies import opt_bool, opt_str
from talkie_tui.devserver.cuckoo.contacts import REASONS, contact_of, contacts_of
from talkie_tui.devserver.cuckoo.conversations import check_id
from talkie_tui.devserver.cuckoo.errors import invalid, not_found
from talkie_tui.devserver.cuckoo.principals import user_of
from talkie_tui.devserver.cuckoo.reach_store import CHOICES
from talkie_tui.devserver.cuckoo.routing import created, hub_of, no_content, read_json

NOTE_CHARS = 1000


async def list_contacts(request: Request) -> JSONResponse:
    """GET /v1/client/contacts → {contacts: [Contact]}, pinned first."""
    return JSONResponse({"contacts": contacts_of(hub_of(request), user_of(request))})


def _agent_id(request: Request) -> str:
    return check_id(request.path_params["agent_id"], "agt", "agent")


def _muted_until(raw: object) -> str | None:
    """An ISO 8601 time with an offset (stored in UTC), or None to unmute."""
    if raw is None:
        return None
    problem = invalid(
        "invalid_muted_until", "`muted_until` is a time with its offset, or null.", "muted_until"
    )
    if not isinstance(raw, str):
        raise problem
    try:
        moment = datetime.fromisoformat(raw.replace("Z", "+00:00"))
        if moment.tzinfo is None:
            raise problem
        return clock.iso(moment)
    except (ValueError, OverflowError):  # not a time, or one UTC cannot hold (year 1 or 9999)
        raise problem from None


async def update_contact(request: Request) -> JSONResponse:
    """PATCH /v1/client/contacts/{id} {muted_until?, pinned?, archived?} → {contact}."""
    hub = hub_of(request)
    user_id = user_of(request)
    agent_id = _agent_id(request)
    body = await read_json(request, CHOICES)
    contact_of(hub, user_id, agent_id)  # 404 unless it is one
    choices: dict[str, object] = {}
    for name in ("pinned", "archived"):
        if name in body:
            choices[name] = int(opt_bool(body, name))
    if "muted_until" in body:
        choices["muted_until"] = _muted_until(body["muted_until"])
    if choices:
        hub.storage.set_contact(user_id, agent_id, **choices)
    return JSONResponse({"contact": contact_of(hub, user_id, agent_id)})


async def remove_contact(request: Request) -> Response:
    """DELETE /v1/client/contacts/{id} → 204: out of the person's lists until added again."""
    hub = hub_of(request)
    user_id = user_of(request)
    agent_id = _agent_id(request)
    contact_of(hub, user_id, agent_id)
    hub.storage.set_contact(user_id, agent_id, removed=1, pinned=0, archived=0, muted_until=None)
    return no_content()


async def report_agent(request: Request) -> JSONResponse:
    """POST /v1/client/agents/{id}/report {reason, note?, message_id?} → 201 {report}."""
    hub = hub_of(request)
    user_id = user_of(request)
    agent_id = _agent_id(request)
    body = await read_json(request, {"reason", "note", "message_id"})
    if hub.storage.get_agent(agent_id) is None:
        raise not_found("agent_not_found", "There is no such agent.")
    reason = body.get("reason")
    if reason not in REASONS:
        raise invalid("invalid_reason", f"`reason` is one of {', '.join(REASONS)}.", "reason")
    note = opt_str(body, "note", "invalid_note")
    if note is not None:
        note = note.strip() or None
        if note is not None and len(note) > NOTE_CHARS:
            raise invalid("invalid_note", f"A note is at most {NOTE_CHARS} characters.", "note")
    message_id = opt_str(body, "message_id", "invalid_message_id")
    if message_id is not None:
        _check_reported_message(request, user_id, agent_id, message_id)
    report = {
        "user_id": user_id,
        "agent_id": agent_id,
        "reason": reason,
        "note": note,
        "message_id": message_id,
        "created_at": clock.iso(clock.now()),
    }
    hub.storage.add_report(report)
    shown = {name: report[name] for name in ("agent_id", "reason", "note", "message_id")}
    return created({"report": {**shown, "created_at": report["created_at"]}})


def _check_reported_message(request: Request, user_id: str, agent_id: str, message_id: str) -> None:
    """The message a report is about: the agent's, in the person's conversation with it."""
    hub = hub_of(request)
    check_id(message_id, "msg", "message")
    message = hub.storage.get_message(message_id)
    conversation = hub.storage.dm_between(user_id, agent_id)
    if (
        message is None
        or conversation is None
        or message["conversation_id"] != conversation["id"]
        or message["sender_id"] != agent_id
    ):
        raise invalid(
            "invalid_message_id",
            "The report's message is not the agent's, in your conversation with it.",
            "message_id",
        )


CONTACT_ROUTES = [
    Route("/v1/client/contacts", list_contacts, methods=["GET"]),
    Route("/v1/client/contacts/{agent_id}", update_contact, methods=["PATCH"]),
    Route("/v1/client/contacts/{agent_id}", remove_contact, methods=["DELETE"]),
    Route("/v1/client/agents/{agent_id}/report", report_agent, methods=["POST"]),
]
