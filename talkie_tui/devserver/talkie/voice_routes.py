"""HTTP endpoints of §10 voice, and the test-mode endpoints that read what was recorded."""

from __future__ import annotations

import ipaddress
import json
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from talkie_tui.devserver.common.http import validated_body
from talkie_tui.devserver.talkie.errors import ApiError, invalid_request, not_found
from talkie_tui.devserver.talkie.manifest import VOICE_ENDPOINTS
from talkie_tui.devserver.talkie.routes import _services, _user_id
from talkie_tui.devserver.talkie.run_input import parse_json_body, read_body
from talkie_tui.devserver.talkie.voice import VoiceService

TEST_PREFIX = "/api/talkie/_test"


class _Body(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class SessionBody(_Body):
    """The body of POST voiceSessions."""

    thread_id: str | None = Field(default=None, alias="threadId", min_length=1, max_length=200)
    locale: str | None = Field(default=None, max_length=35)


class ToolBody(_Body):
    """The body of POST voiceTool."""

    call_id: str = Field(alias="callId", min_length=1, max_length=200)
    arguments: str = ""

    @field_validator("arguments", mode="before")
    @classmethod
    def _as_json_text(cls, value: object) -> object:
        # The spec sends the provider's JSON string; an object is accepted and encoded the same.
        if isinstance(value, dict):
            return json.dumps(value, ensure_ascii=False)
        return value


class TranscriptBody(_Body):
    """The body of POST voiceTranscript."""

    role: Literal["user", "assistant"]
    text: str = Field(min_length=1)
    item_id: str = Field(alias="itemId", min_length=1, max_length=200)


class UsageBody(_Body):
    """The body of POST voiceUsage."""

    seconds: float = Field(ge=0)
    final: bool = False


Body = TypeVar("Body", bound=_Body)


async def _body(request: Request, model: type[Body], *, empty_ok: bool = False) -> Body:
    raw = await read_body(request)
    payload: Any = {} if empty_ok and not raw.strip() else parse_json_body(raw)
    return validated_body(
        model,
        payload,
        what="request",
        invalid=invalid_request,
        not_an_object="The request body must be a JSON object.",
    )


def _voice(request: Request) -> VoiceService:
    voice = _services(request).voice
    if voice is None:
        raise not_found("Voice on this server")
    return voice


async def create_session(request: Request) -> JSONResponse:
    """POST voiceSessions"""
    voice = _voice(request)
    body = await _body(request, SessionBody, empty_ok=True)
    session = voice.create_session(_user_id(request), body.thread_id, body.locale)
    return JSONResponse(session, status_code=201)


async def call_tool(request: Request) -> JSONResponse:
    """POST voiceTool – run a tool the provider asked for."""
    voice = _voice(request)
    body = await _body(request, ToolBody)
    result = await voice.call_tool(
        _user_id(request),
        request.path_params["session_id"],
        request.path_params["name"],
        body.call_id,
        body.arguments,
    )
    return JSONResponse(result)


async def transcript(request: Request) -> JSONResponse:
    """POST voiceTranscript – store a final transcript (idempotent per itemId)."""
    voice = _voice(request)
    body = await _body(request, TranscriptBody)
    limit = _services(request).config.max_message_chars
    if len(body.text) > limit:
        raise ApiError(
            413,
            "too_large",
            f"The transcript is {len(body.text)} characters; the limit is {limit}.",
        )
    message_id = voice.add_transcript(
        _user_id(request), request.path_params["session_id"], body.role, body.text, body.item_id
    )
    return JSONResponse({"ok": True, "messageId": message_id}, status_code=201)


async def usage(request: Request) -> JSONResponse:
    """POST voiceUsage – seconds so far; answers with the seconds left."""
    voice = _voice(request)
    body = await _body(request, UsageBody)
    result = voice.report_usage(
        _user_id(request), request.path_params["session_id"], body.seconds, body.final
    )
    return JSONResponse(result)


# --- test mode -------------------------------------------------------------------------------


def _test_only(request: Request) -> None:
    """Test endpoints exist only in test mode, and answer only on this machine."""
    if not _services(request).config.test_mode:
        raise not_found(f"Endpoint {request.url.path}")
    host = request.client.host if request.client else ""
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise ApiError(403, "forbidden", "Test endpoints answer only on the loopback interface.")


async def inspect_voice_session(request: Request) -> JSONResponse:
    """GET /api/talkie/_test/voice/sessions/{id} – the session, usage reports and tool calls."""
    _test_only(request)
    voice = _voice(request)
    return JSONResponse(voice.inspect(_user_id(request), request.path_params["session_id"]))


async def list_decisions(request: Request) -> JSONResponse:
    """GET /api/talkie/_test/decisions – every human decision of the user, with its method."""
    _test_only(request)
    services = _services(request)
    rows = services.storage.list_decisions(_user_id(request))
    action_id = request.query_params.get("actionId")
    decisions = [
        {
            "actionId": row["action_id"],
            "decision": row["decision"],
            "method": row["method"],
            "decidedAt": row["created_at"],
        }
        for row in rows
        if action_id is None or row["action_id"] == action_id
    ]
    return JSONResponse({"decisions": decisions})


def _route_path(template: str) -> str:
    # Manifest templates name the placeholders in camelCase; the handlers use snake_case.
    return template.replace("{voiceSessionId}", "{session_id}")


VOICE_ROUTES = [
    Route(_route_path(VOICE_ENDPOINTS["voiceSessions"]), create_session, methods=["POST"]),
    Route(_route_path(VOICE_ENDPOINTS["voiceTool"]), call_tool, methods=["POST"]),
    Route(_route_path(VOICE_ENDPOINTS["voiceTranscript"]), transcript, methods=["POST"]),
    Route(_route_path(VOICE_ENDPOINTS["voiceUsage"]), usage, methods=["POST"]),
    Route(f"{TEST_PREFIX}/voice/sessions/{{session_id}}", inspect_voice_session, methods=["GET"]),
    Route(f"{TEST_PREFIX}/decisions", list_decisions, methods=["GET"]),
]
