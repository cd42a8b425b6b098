"""HTTP endpoints of the gateway: health, sessions and search, turns, interactions, models,
credentials."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from talkie_tui.devserver.common import clock, sse
from talkie_tui.devserver.common.ids import new_id
from talkie_tui.devserver.common.sqlite import Row
from talkie_tui.devserver.minara.bodies import json_object, parse_json_body, read_body
from talkie_tui.devserver.minara.credentials import MAX_VALUE_CHARS, NAME
from talkie_tui.devserver.minara.errors import ApiError, invalid_request, not_found
from talkie_tui.devserver.minara.live_turn import LiveTurn, TurnRequestInfo
from talkie_tui.devserver.minara.models import available_models
from talkie_tui.devserver.minara.services import Services
from talkie_tui.devserver.minara.turn_request import TurnBody, parse_turn_body, resolve_attachments
from talkie_tui.devserver.minara.turns import PROTOCOL_VERSION

SESSIONS_LIMIT = 50
SESSIONS_MAX = 200
TITLE_CHARS = 60
ORIGIN = "api"


def _services(request: Request) -> Services:
    services: Services = request.app.state.services
    return services


def _int_param(request: Request, name: str, default: int, low: int, high: int) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise invalid_request(f"`{name}` must be an integer.") from None
    if not low <= value <= high:
        raise invalid_request(f"`{name}` must be between {low} and {high}.")
    return value


def _required_text(payload: dict[str, Any], name: str) -> str:
    value = payload.get(name)
    if not isinstance(value, str) or not value.strip():
        raise invalid_request(f"`{name}` is required (a non-empty string).")
    return value


def title_from(message: str, attachments: list[dict[str, Any]]) -> str:
    """A session title from its first message: the first line, shortened."""
    words = " ".join(message.split())
    if not words:
        return str(attachments[0]["filename"]) if attachments else "New chat"
    return words if len(words) <= TITLE_CHARS else words[: TITLE_CHARS - 1].rstrip() + "…"


# --- health ----------------------------------------------------------------------------------


async def healthz(request: Request) -> JSONResponse:
    """GET /healthz (no auth)"""
    return JSONResponse({"ok": True})


async def v1_healthz(request: Request) -> JSONResponse:
    """GET /v1/healthz (no auth)"""
    return JSONResponse({"ok": True, "ts": clock.epoch_ms()})


# --- sessions --------------------------------------------------------------------------------


def session_json(row: Row) -> dict[str, Any]:
    """A session as listed."""
    return {
        "id": row["id"],
        "title": row["title"],
        "kind": row["kind"],
        "origin": row["origin"],
        "created_at": row["created_at"],
        "updated_at": row["updated_at"],
        "message_count": row["message_count"],
    }


def message_json(row: Row) -> dict[str, Any]:
    """A message row of `GET /v1/sessions/:id`."""
    body: dict[str, Any] = {
        "id": row["id"],
        "role": row["role"],
        "content": row["content"],
        "created_at": row["created_at"],
    }
    if row["attachments"]:
        body["attachments"] = row["attachments"]
    if row["voice_input_key"]:
        body["voice_input_key"] = row["voice_input_key"]
    if row["metadata"] is not None:
        body["metadata"] = row["metadata"]
    return body


def _load_session(request: Request) -> Row:
    session_id = request.path_params["session_id"]
    row = _services(request).storage.get_session(session_id)
    if row is None:
        raise not_found(f"Session {session_id}")
    return row


async def list_sessions(request: Request) -> JSONResponse:
    """GET /v1/sessions?kind=&origin=&limit=&offset= – most recently updated first."""
    limit = _int_param(request, "limit", SESSIONS_LIMIT, 1, SESSIONS_MAX)
    offset = _int_param(request, "offset", 0, 0, 10**9)
    kind = request.query_params.get("kind") or None
    origin = request.query_params.get("origin") or None
    rows, total = _services(request).storage.list_sessions(limit, offset, kind, origin)
    return JSONResponse({"sessions": [session_json(row) for row in rows], "total": total})


async def create_session(request: Request) -> JSONResponse:
    """POST /v1/sessions {title?}"""
    payload = await json_object(request, empty_ok=True)
    title = payload.get("title", "New chat")
    if not isinstance(title, str) or not title.strip() or len(title) > 200:
        raise invalid_request("`title` must be a non-empty string of at most 200 characters.")
    now = clock.iso(clock.now())
    row = _services(request).storage.create_session(
        new_id("chat"), " ".join(title.split()), "chat", ORIGIN, now
    )
    return JSONResponse({"ok": True, "data": session_json(row)})


async def search_sessions(request: Request) -> JSONResponse:
    """GET /v1/sessions/search?q= – best match first, the match between « and »."""
    query = request.query_params.get("q", "")
    if not query.strip():
        raise invalid_request("`q` is required.")
    limit = _int_param(request, "limit", 20, 1, 100)
    rows = _services(request).storage.search(query, limit)
    results = [
        {
            "session_id": row["session_id"],
            "message_id": row["message_id"],
            "title": row["title"],
            "snippet": row["snippet"],
            "role": row["role"],
        }
        for row in rows
    ]
    return JSONResponse({"results": results})


async def session(request: Request) -> JSONResponse:
    """GET or DELETE /v1/sessions/:id"""
    services = _services(request)
    row = _load_session(request)
    if request.method == "DELETE":
        services.turns.interrupt(row["id"])
        services.channels.drop(row["id"])
        services.storage.delete_session(row["id"])
        return JSONResponse({"ok": True})
    channel = services.channels.get(row["id"])
    messages = services.storage.list_messages(row["id"])
    return JSONResponse(
        {
            "session": session_json(row),
            "messages": [message_json(message) for message in messages],
            "is_streaming": services.turns.active(row["id"]) is not None,
            "pending_questions": services.questions.pending_for(row["id"]),
            "last_seq": channel.last_seq if channel is not None else row["last_seq"],
        }
    )


# --- turns -----------------------------------------------------------------------------------


def _wants_event_stream(request: Request) -> bool:
    return sse.MEDIA_TYPE in request.headers.get("accept", "").lower()


def _answer(request: Request, session_row: Row, is_new: bool, log: LiveTurn | None) -> Response:
    body = {"session_id": session_row["id"], "kind": session_row["kind"], "is_new": is_new}
    if log is None or not _wants_event_stream(request):
        return JSONResponse(body)
    # The older revision: the turn's events as the response itself.
    services = _services(request)
    return StreamingResponse(
        sse.follow(log.log, services.config.sse_ping_interval, services.turns.stopping),
        media_type=sse.MEDIA_TYPE,
        headers={**sse.HEADERS, "X-Session-Id": session_row["id"]},
    )


def _stored_turn_log(services: Services, session_id: str, message_id: str) -> LiveTurn:
    """For a repeated request on the event stream: the answer's stored turn, or its live one."""
    live = services.turns.active(session_id)
    if live is not None and live.request.message_id == message_id:
        return live
    rows = services.storage.list_messages(session_id)
    index = next(i for i, row in enumerate(rows) if row["id"] == message_id)
    answer = next((row for row in rows[index + 1 :] if row["role"] == "assistant"), None)
    log = LiveTurn(answer["id"] if answer else "", session_id, TurnRequestInfo("", message_id))
    start = {"session_id": session_id, "protocol_version": PROTOCOL_VERSION}
    log.add_frame({"type": "start", "data": {**start, "turn_id": log.turn_id}})
    if answer is not None:
        metadata = answer["metadata"] or {}
        if answer["content"]:
            log.add_frame({"type": "text_delta", "data": {"text": answer["content"]}})
        if metadata.get("error"):
            log.add_frame({"type": "error", "data": metadata["error"]})
        else:
            done = {"interrupted": True} if metadata.get("interrupted") else {}
            log.add_frame({"type": "done", "data": done})
    log.log.finish()
    return log


def _repeat(request: Request, body: TurnBody) -> Response | None:
    """The answer to a request whose `client_message_id` is stored already, else None."""
    services = _services(request)
    if body.client_message_id is None:
        return None
    stored = services.storage.get_message(body.client_message_id)
    if stored is None:
        return None
    if body.session_id is not None and stored["session_id"] != body.session_id:
        raise ApiError(
            409, "conflict", "This client_message_id belongs to a message of another session."
        )
    row = services.storage.get_session(stored["session_id"])
    assert row is not None
    log = None
    if _wants_event_stream(request):
        log = _stored_turn_log(services, row["id"], stored["id"])
    return _answer(request, row, False, log)


async def chat_stream(request: Request) -> Response:
    """POST /v1/chat/stream – store the message, run the turn in the background."""
    services = _services(request)
    body = parse_turn_body(await read_body(request), services.config)
    attachments = resolve_attachments(body, services.files)
    repeated = _repeat(request, body)
    if repeated is not None:
        return repeated
    storage = services.storage
    now = clock.iso(clock.now())
    if body.session_id is not None:
        row = storage.get_session(body.session_id)
        if row is None:
            raise not_found(f"Session {body.session_id}")
        if services.turns.active(row["id"]) is not None:
            raise ApiError(
                409,
                "turn_in_progress",
                "A turn is already running in this session: interject, interrupt it, or wait.",
            )
        is_new = False
    else:
        title = title_from(body.message, attachments)
        row = storage.create_session(new_id("chat"), title, body.kind, ORIGIN, now)
        is_new = True
    message_id = body.client_message_id or new_id("msg")
    storage.add_message(
        row["id"],
        message_id,
        "user",
        body.message,
        now,
        attachments=attachments or None,
        voice_input_key=body.voice_input_key,
    )
    info = TurnRequestInfo(
        message=body.message,
        message_id=message_id,
        attachments=attachments,
        model=body.model,
        reasoning_effort=body.reasoning_effort,
    )
    turn = services.turns.start(row["id"], info)
    return _answer(request, row, is_new, turn)


def _session_of(request: Request, payload: dict[str, Any]) -> str:
    session_id = _required_text(payload, "session_id")
    if _services(request).storage.get_session(session_id) is None:
        raise not_found(f"Session {session_id}")
    return session_id


async def interrupt(request: Request) -> JSONResponse:
    """POST /v1/chat/interrupt {session_id} – idempotent."""
    session_id = _session_of(request, await json_object(request))
    stopped = _services(request).turns.interrupt(session_id)
    return JSONResponse({"status": "interrupted" if stopped else "no_active_turn"})


async def interject(request: Request) -> JSONResponse:
    """POST /v1/chat/interject {session_id, message}"""
    payload = await json_object(request)
    _required_text(payload, "session_id")
    message = _required_text(payload, "message")
    session_id = _session_of(request, payload)
    if len(message) > _services(request).config.max_message_chars:
        raise invalid_request("`message` is too long.")
    if not _services(request).turns.interject(session_id, message):
        return JSONResponse({"status": "no_active_turn"}, status_code=409)
    return JSONResponse({"status": "injected"})


# --- interactions, models, credentials --------------------------------------------------------


async def answer_interaction(request: Request) -> JSONResponse:
    """POST /v1/interactions/:id/answer {answers: [{questionIndex, selected_labels|free_text}]}"""
    raw = await read_body(request)
    try:
        payload: Any = parse_json_body(raw)
    except ApiError:
        payload = None  # reported after the 404 for a question that is not pending
    _services(request).questions.answer(request.path_params["interaction_id"], payload)
    return JSONResponse({"ok": True, "status": "answered"})


async def models(request: Request) -> JSONResponse:
    """GET /v1/llm/available-models"""
    return JSONResponse(available_models())


async def put_credential(request: Request) -> JSONResponse:
    """PUT /v1/credentials/:name {value} – kept in memory only, never echoed or logged."""
    name = request.path_params["name"]
    if not NAME.fullmatch(name):
        raise invalid_request("A credential name is 1–64 letters, digits, `.`, `_` or `-`.")
    value = (await json_object(request)).get("value")
    if not isinstance(value, str) or not value or len(value) > MAX_VALUE_CHARS:
        raise invalid_request(f"`value` must be a string of 1–{MAX_VALUE_CHARS} characters.")
    _services(request).credentials.put(name, value)
    return JSONResponse({"ok": True})


ROUTES = [
    Route("/healthz", healthz, methods=["GET"]),
    Route("/v1/healthz", v1_healthz, methods=["GET"]),
    Route("/v1/sessions", list_sessions, methods=["GET"]),
    Route("/v1/sessions", create_session, methods=["POST"]),
    Route("/v1/sessions/search", search_sessions, methods=["GET"]),
    Route("/v1/sessions/{session_id}", session, methods=["GET", "DELETE"]),
    Route("/v1/chat/stream", chat_stream, methods=["POST"]),
    Route("/v1/chat/interrupt", interrupt, methods=["POST"]),
    Route("/v1/chat/interject", interject, methods=["POST"]),
    Route("/v1/interactions/{interaction_id}/answer", answer_interaction, methods=["POST"]),
    Route("/v1/llm/available-models", models, methods=["GET"]),
    Route("/v1/credentials/{name}", put_credential, methods=["PUT"]),
]
