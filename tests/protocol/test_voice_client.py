"""§10 voice endpoints of TalkieClient, and the signaling rule, against a stub server."""

from __future__ import annotations

import json
from typing import Any

import pytest
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from talkie_tui.core.errors import ConflictError, DiscoveryError
from talkie_tui.protocol.talkie.manifest import check_signaling_url
from tests.protocol.conftest import Connect, Serve
from tests.stub_server import ENDPOINTS, error_response, manifest_document, talkie_app

VOICE_ENDPOINTS = {
    "voiceSessions": "/api/talkie/voice/sessions",
    "voiceTool": "/api/talkie/voice/sessions/{voiceSessionId}/tools/{name}",
    "voiceTranscript": "/api/talkie/voice/sessions/{voiceSessionId}/transcript",
    "voiceUsage": "/api/talkie/voice/sessions/{voiceSessionId}/usage",
}


def _session(url: str = "https://api.openai.com/v1/realtime/calls") -> dict[str, Any]:
    return {
        "voiceSessionId": "v_1",
        "threadId": "t_1",
        "transport": "webrtc",
        "eventProtocol": "openai-realtime/1",
        "signaling": {"type": "sdp-post", "url": url},
        "clientSecret": "ek_secret",
        "expiresAt": "2026-10-22T10:01:00Z",
        "maxSeconds": 900,
        "warnSeconds": 60,
        "locale": "cs",
        "labels": {"search_records": "Hledám v CRM…\x1b[2J", "bad": 3},
        "consent": {"confirm": ["ano", "potvrzuji"], "refuse": ["ne", "zruš"]},
    }


def _voice_app(seen: list[tuple[str, Any]], session: dict[str, Any]) -> Any:
    async def record(request: Request) -> Any:
        body = json.loads(await request.body() or b"{}")
        seen.append((request.url.path, body))
        return body

    async def sessions(request: Request) -> Response:
        await record(request)
        return JSONResponse(session, status_code=201)

    async def tool(request: Request) -> Response:
        body = await record(request)
        if body["callId"] == "used":
            return error_response(409, "conflict", "This callId was already used.")
        card = {"type": "CUSTOM", "name": "talkie.card", "value": {"fallbackText": "Alfa"}}
        return JSONResponse({"ok": True, "output": "found 1 record", "events": [card, "x"]})

    async def transcript(request: Request) -> Response:
        await record(request)
        return Response(status_code=201)

    async def usage(request: Request) -> Response:
        body = await record(request)
        return JSONResponse({"ok": True, "remainingSeconds": 900 - body["seconds"]})

    routes = [
        Route(VOICE_ENDPOINTS["voiceSessions"], sessions, methods=["POST"]),
        Route(VOICE_ENDPOINTS["voiceTool"], tool, methods=["POST"]),
        Route(VOICE_ENDPOINTS["voiceTranscript"], transcript, methods=["POST"]),
        Route(VOICE_ENDPOINTS["voiceUsage"], usage, methods=["POST"]),
    ]
    voice = {"transports": ["webrtc"], "signalingHosts": ["api.openai.com", "127.0.0.1"]}
    return talkie_app(
        routes,
        manifest=lambda origin: manifest_document(
            origin,
            endpoints={**ENDPOINTS, **VOICE_ENDPOINTS},
            capabilities={"voice": voice},
        ),
    )


async def test_a_voice_session_and_its_calls(serve: Serve, connect: Connect) -> None:
    seen: list[tuple[str, Any]] = []
    client = await connect(serve(_voice_app(seen, _session())).origin)
    session = await client.voice_session("t_1", "cs")
    assert session.voice_session_id == "v_1" and session.max_seconds == 900
    assert session.labels == {"search_records": "Hledám v CRM…"}  # cleaned, junk dropped
    assert session.consent.confirm == ["ano", "potvrzuji"]
    assert "ek_secret" not in repr(session)

    result = await client.voice_tool(session, "search_records", "call_1", '{"q":"Alfa"}')
    assert result.output == "found 1 record" and len(result.events) == 1
    with pytest.raises(ConflictError):
        await client.voice_tool(session, "search_records", "used", "{}")
    await client.voice_transcript(session, "user", "Najdi Alfu", "item_1")
    usage = await client.voice_usage(session, 125.4, final=True)
    assert usage.remaining_seconds == 775

    assert seen[0] == ("/api/talkie/voice/sessions", {"threadId": "t_1", "locale": "cs"})
    assert seen[1] == (
        "/api/talkie/voice/sessions/v_1/tools/search_records",
        {"callId": "call_1", "arguments": '{"q":"Alfa"}'},
    )
    assert seen[3][1] == {"role": "user", "text": "Najdi Alfu", "itemId": "item_1"}
    assert seen[4][1] == {"seconds": 125, "final": True}


@pytest.mark.parametrize(
    ("url", "allow_http", "words"),
    [
        ("https://evil.example/v1/realtime/calls", False, "not one the server lists"),
        ("http://api.openai.com/v1/realtime/calls", False, "not https"),
        ("http://127.0.0.1:9/calls", False, "development switch"),
        ("ftp://api.openai.com/x", False, "not https"),
    ],
)
async def test_a_session_with_an_unsafe_signaling_url_is_refused(
    serve: Serve, connect: Connect, url: str, allow_http: bool, words: str
) -> None:
    client = await connect(serve(_voice_app([], _session(url))).origin)
    with pytest.raises(DiscoveryError, match=words):
        await client.voice_session(allow_http_signaling=allow_http)


async def test_a_loopback_provider_is_allowed_behind_the_development_switch(
    serve: Serve, connect: Connect
) -> None:
    client = await connect(serve(_voice_app([], _session("http://127.0.0.1:9/calls"))).origin)
    session = await client.voice_session(allow_http_signaling=True)
    assert session.signaling.url == "http://127.0.0.1:9/calls"


def test_signaling_hosts_must_be_a_list_of_names() -> None:
    with pytest.raises(DiscoveryError, match="none"):
        check_signaling_url("https://api.openai.com/x", "api.openai.com")
    check_signaling_url("https://API.openai.com/x", ["api.openai.com"])
