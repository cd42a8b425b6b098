"""Voice sessions (§10.1) whose signaling URL points where the client secret must not go.

The client sends `clientSecret` only to an `https` URL on a host the manifest lists in
`capabilities.voice.signalingHosts` (plain http only to a loopback provider behind the
development switch), never after a redirect, and never the user's bearer token.
A stub "provider" on 127.0.0.2 records what it receives.
"""

from __future__ import annotations

from typing import Any

import pytest
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from talkie_tui.core.errors import DiscoveryError, TalkieError
from talkie_tui.voice.call import VoiceCall
from tests.helpers import TEST_TOKEN
from tests.hostile.kit import bearers, controls, hostile, hostile_app, shown, sink_app
from tests.protocol.conftest import Connect, Serve
from tests.stub_server import ANOTHER_LOOPBACK, ENDPOINTS, StubServer, manifest_document
from tests.voice.fakes import scripted_audio

pytestmark = pytest.mark.hostile

SECRET = "ek_do_not_leak"
VOICE_ENDPOINTS = {
    "voiceSessions": "/api/talkie/voice/sessions",
    "voiceUsage": "/api/talkie/voice/sessions/{voiceSessionId}/usage",
}


def voice_server(signaling_url: str, hosts: list[str], voice_sessions: str | None = None) -> Any:
    """A talkie/1 server whose voice sessions send the client to `signaling_url`."""

    async def sessions(request: Request) -> Response:
        await request.body()
        session = {
            "voiceSessionId": "v_1",
            "threadId": "t_1",
            "signaling": {"type": "sdp-post", "url": signaling_url},
            "clientSecret": SECRET,
            "labels": {"search": hostile("label")},
            "consent": {"confirm": [hostile("ano")], "refuse": ["ne"]},
        }
        return JSONResponse(session, status_code=201)

    async def usage(request: Request) -> Response:
        await request.body()
        return JSONResponse({"ok": True})

    def manifest(origin: str) -> dict[str, Any]:
        endpoints = {**ENDPOINTS, **VOICE_ENDPOINTS}
        if voice_sessions is not None:
            endpoints["voiceSessions"] = voice_sessions
        voice = {"transports": ["webrtc"], "signalingHosts": hosts}
        return manifest_document(origin, endpoints=endpoints, capabilities={"voice": voice})

    routes = [
        Route(VOICE_ENDPOINTS["voiceSessions"], sessions, methods=["POST"]),
        Route("/api/talkie/voice/sessions/{voiceSessionId}/usage", usage, methods=["POST"]),
    ]
    return hostile_app(routes=routes, manifest=manifest)


def provider(serve: Serve, host: str = ANOTHER_LOOPBACK) -> StubServer:
    """A stub speech provider that records every request (and answers 201 "v=0")."""
    return serve(sink_app(Response("v=0\r\n", status_code=201, media_type="application/sdp")), host)


def everything(server: StubServer) -> str:
    """Every header and body the server received, as one text."""
    return "".join(f"{r.headers}{r.body!r}" for r in server.requests)


CASES = {
    # case: (signaling URL on the stub provider, signalingHosts, development switch)
    "unlisted host": ("{stub}/calls", ["api.openai.com", "127.0.0.1"], False),
    "unlisted host, development switch on": ("{stub}/calls", ["api.openai.com"], True),
    "listed host over http": ("{stub}/calls", [ANOTHER_LOOPBACK], False),
    "userinfo naming a listed host": (
        "http://api.openai.com@{host}/calls",
        ["api.openai.com"],
        True,
    ),
    "listed name as a prefix": (
        "https://api.openai.com.evil.example/calls",
        ["api.openai.com"],
        False,
    ),
}


@pytest.mark.parametrize("case", list(CASES))
async def test_the_client_secret_goes_only_to_a_listed_https_host(
    serve: Serve, connect: Connect, case: str
) -> None:
    """§10.1 MUST: unlisted host or http: refused, provider gets nothing, secret unquoted."""
    stub = provider(serve)
    template, hosts, allow_http = CASES[case]
    url = template.format(stub=stub.origin, host=f"{ANOTHER_LOOPBACK}:{stub.port}")
    server = serve(voice_server(url, hosts))
    client = await connect(server.origin)
    with pytest.raises(DiscoveryError) as refused:
        await client.voice_session(allow_http_signaling=allow_http)
    assert "voice was not started" in refused.value.message
    assert SECRET not in refused.value.message
    assert stub.requests == []


async def test_a_refused_provider_never_opens_the_devices_or_gets_the_secret(
    serve: Serve, connect: Connect
) -> None:
    """§10.1 through the call (as the TUI starts it): refused before audio or WebRTC."""
    stub = provider(serve)
    server = serve(voice_server(stub.url("/v1/realtime/calls"), ["api.openai.com"]))
    client = await connect(server.origin)
    audio = scripted_audio()
    call = VoiceCall(
        client, microphone=audio.microphone, speaker=audio.speaker, listener=lambda u: None
    )
    with pytest.raises(TalkieError) as refused:
        await call.start()
    assert "not one the server lists" in refused.value.message
    assert not audio.microphone.running and not audio.speaker.running
    assert stub.requests == []


async def test_voice_endpoints_on_another_origin_are_not_used_unaccepted(
    serve: Serve, connect: Connect
) -> None:
    """§1/§10: a voiceSessions endpoint on another origin is not called without acceptance."""
    elsewhere = serve(sink_app(), ANOTHER_LOOPBACK)
    server = serve(voice_server("https://api.openai.com/x", [], elsewhere.url("/sessions")))
    client = await connect(server.origin)
    with pytest.raises(DiscoveryError, match="another site"):
        await client.voice_session()
    assert elsewhere.requests == []


async def test_the_provider_gets_the_secret_only_and_no_redirect_is_followed(
    serve: Serve, connect: Connect
) -> None:
    """§10.1/§2.1: the provider gets the secret (never the token); its redirect not followed."""
    third = serve(sink_app(), "127.0.0.3")

    async def bounce(request: Request) -> Response:
        await request.body()
        return RedirectResponse(third.url("/calls"), status_code=307)

    from starlette.applications import Starlette

    stub = serve(Starlette(routes=[Route("/calls", bounce, methods=["POST"])]), ANOTHER_LOOPBACK)
    server = serve(voice_server(stub.url("/calls"), [ANOTHER_LOOPBACK]))
    client = await connect(server.origin)
    audio = scripted_audio()
    call = VoiceCall(
        client,
        microphone=audio.microphone,
        speaker=audio.speaker,
        listener=lambda u: None,
        allow_http_signaling=True,
    )
    with pytest.raises(Exception, match="refused the call") as failed:
        await call.start()
    assert controls(str(failed.value)) == []
    assert bearers(stub.requests) == [f"Bearer {SECRET}"]
    assert stub.requests[0].headers["content-type"] == "application/sdp"
    assert third.requests == []
    assert TEST_TOKEN not in everything(stub)
    assert SECRET not in everything(server)
    assert not audio.microphone.running and not audio.speaker.running
    # What the session said reaches the person cleaned (labels, consent words).
    assert call.session is not None
    assert call.session.labels["search"] == shown("label")
    assert call.session.consent.confirm == [shown("ano")]
