"""The one request path of TalkieClient and its `BearerAuth` (§2.1), over real loopback HTTP.

The bearer goes to the issuer origin only (not to a download or logo on another port, not
after a redirect); a 401 on any kind of request (REST, the run, a download, the logo) is
answered by one refresh and one retry; a second 401 is final, with no loop. Network failures
become TransportError in one place (`network_errors`).
"""

from __future__ import annotations

import asyncio
import ssl
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
import pytest
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from talkie_tui.core.errors import ServerError, TransportError, UnauthorizedError
from talkie_tui.core.tokens import StaticToken
from talkie_tui.protocol.net.bearer import BearerAuth
from talkie_tui.protocol.net.failures import describe_transport_error, network_errors
from talkie_tui.protocol.net.http import make_http_client
from talkie_tui.protocol.talkie.client import TalkieClient
from talkie_tui.protocol.talkie.logo import fetch_logo
from talkie_tui.protocol.talkie.manifest import MANIFEST_PATH
from talkie_tui.protocol.talkie.models import Action
from talkie_tui.protocol.talkie.run_request import RunRequest
from talkie_tui.protocol.talkie.voice_models import VoiceSession
from tests.protocol.conftest import Connect, Serve
from tests.protocol.test_client import ACTION, RotatingTokens, finished_run
from tests.stub_server import (
    ENDPOINTS,
    Streamer,
    StubServer,
    error_response,
    manifest_document,
    small_buffer_client,
    sse_response,
    talkie_app,
)

LOGO = b"\x89PNG\r\n\x1a\n" + b"\0" * 32  # what fetch_logo checks: the PNG signature
FILE = b"%PDF-1.7 quarterly report"
VOICE_ENDPOINTS = {
    "voiceSessions": "/api/talkie/voice/sessions",
    "voiceTool": "/api/talkie/voice/sessions/{voiceSessionId}/tools/{name}",
    "voiceTranscript": "/api/talkie/voice/sessions/{voiceSessionId}/transcript",
    "voiceUsage": "/api/talkie/voice/sessions/{voiceSessionId}/usage",
}
SESSION = {
    "voiceSessionId": "v_1",
    "threadId": "t_1",
    "transport": "webrtc",
    "eventProtocol": "openai-realtime/1",
    "signaling": {"type": "sdp-post", "url": "https://api.openai.com/v1/realtime/calls"},
    "clientSecret": "ek_secret",
    "expiresAt": "2026-10-22T10:01:00Z",
}


class Refusing:
    """ASGI wrapper: the first `times` requests to each path (but the manifest) get 401."""

    def __init__(self, app: ASGIApp, times: int) -> None:
        self.app = app
        self.times = times
        self.refused: Counter[str] = Counter()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] == "http" and path != MANIFEST_PATH and self.refused[path] < self.times:
            self.refused[path] += 1
            while (await receive()).get("more_body"):
                pass  # the request body is read (and recorded) before the answer
            await error_response(401, "unauthorized", "The token has expired.")(
                scope, receive, send
            )
            return
        await self.app(scope, receive, send)


def _json(body: Any, status: int = 200) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        await request.body()
        return JSONResponse(body, status_code=status)

    return endpoint


def _bytes(body: bytes, media_type: str) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        return Response(body, media_type=media_type)

    return endpoint


async def _thread(request: Request) -> Response:
    if request.method == "DELETE":
        return JSONResponse({"ok": True})
    return JSONResponse({"thread": {"id": "t_1"}, "messages": [], "actions": []})


async def _run(request: Request) -> Response:
    await request.body()
    return sse_response(finished_run())


def everything_app() -> ASGIApp:
    """A talkie/1 stub answering every endpoint the client calls, a file and a logo."""
    routes = [
        Route(ENDPOINTS["status"], _json({})),
        Route(ENDPOINTS["threads"], _json({"threads": []})),
        Route(ENDPOINTS["thread"], _thread, methods=["GET", "DELETE"]),
        # Action ids may hold a "/" (one encoded segment on the wire).
        Route(
            "/api/talkie/actions/{aid:path}/decision",
            _json({"action": ACTION, "events": []}),
            methods=["POST"],
        ),
        Route("/api/talkie/actions/{aid:path}", _json(ACTION)),
        Route(ENDPOINTS["cancelRun"], _json({"ok": True}), methods=["POST"]),
        Route(ENDPOINTS["run"], _run, methods=["POST"]),
        Route(VOICE_ENDPOINTS["voiceSessions"], _json(SESSION, 201), methods=["POST"]),
        Route(
            VOICE_ENDPOINTS["voiceTool"],
            _json({"ok": True, "output": "done", "events": []}),
            methods=["POST"],
        ),
        Route(VOICE_ENDPOINTS["voiceTranscript"], _json({"ok": True}, 201), methods=["POST"]),
        Route(
            VOICE_ENDPOINTS["voiceUsage"],
            _json({"ok": True, "remainingSeconds": 60}),
            methods=["POST"],
        ),
        Route("/files/report.pdf", _bytes(FILE, "application/pdf")),
        Route("/brand/logo.png", _bytes(LOGO, "image/png")),
    ]

    def manifest(origin: str) -> dict[str, Any]:
        return manifest_document(
            origin,
            endpoints={**ENDPOINTS, **VOICE_ENDPOINTS},
            capabilities={
                "voice": {"transports": ["webrtc"], "signalingHosts": ["api.openai.com"]}
            },
            brand={"logo": "/brand/logo.png"},
        )

    return talkie_app(routes, manifest=manifest)


async def _download(client: TalkieClient) -> bytes:
    async with client.open_stream("/files/report.pdf") as response:
        return await response.aread()


async def _logo(client: TalkieClient) -> bytes:
    logo = await fetch_logo(client)
    if logo is None:  # fetch_logo swallows every failure: make it visible to the test
        raise UnauthorizedError("no logo", status=401, code="unauthorized", retryable=False)
    return logo


async def _run_to_the_end(client: TalkieClient) -> list[Any]:
    return [event async for event in client.run(RunRequest("hello", message_id="m_same"))]


_session = VoiceSession.model_validate(SESSION)
_action = Action.model_validate(ACTION)

# (what, the path the request goes to, the call)
CALLS: list[tuple[str, str, Callable[[TalkieClient], Awaitable[Any]]]] = [
    ("status", ENDPOINTS["status"], lambda c: c.status()),
    ("threads", ENDPOINTS["threads"], lambda c: c.threads()),
    ("thread", "/api/talkie/threads/t_1", lambda c: c.thread("t_1")),
    ("delete", "/api/talkie/threads/t_2", lambda c: c.delete_thread("t_2")),
    ("action", "/api/talkie/actions/a%2F77", lambda c: c.action("a/77")),
    ("decide", "/api/talkie/actions/a%2F77/decision", lambda c: c.decide(_action, "confirm")),
    ("cancel", "/api/talkie/runs/r_1/cancel", lambda c: c.cancel_run("r_1")),
    ("voice session", VOICE_ENDPOINTS["voiceSessions"], lambda c: c.voice_session()),
    (
        "voice tool",
        "/api/talkie/voice/sessions/v_1/tools/lookup",
        lambda c: c.voice_tool(_session, "lookup", "call_1", "{}"),
    ),
    (
        "voice transcript",
        "/api/talkie/voice/sessions/v_1/transcript",
        lambda c: c.voice_transcript(_session, "user", "hi", "item_1"),
    ),
    (
        "voice usage",
        "/api/talkie/voice/sessions/v_1/usage",
        lambda c: c.voice_usage(_session, 12.0),
    ),
    ("run", ENDPOINTS["run"], _run_to_the_end),
    ("download", "/files/report.pdf", _download),
    ("logo", "/brand/logo.png", _logo),
]
CALL_IDS = [what for what, _path, _call in CALLS]


def bearers_to(stub: StubServer, path: str) -> list[str | None]:
    """The Authorization header of every request `stub` saw for `path` (raw, still encoded)."""
    return [
        r.headers.get("authorization")
        for r in stub.requests
        if r.raw_path.split(b"?")[0].decode() == path
    ]


# --- one refresh on 401, for every kind of request ----------------------------------------


@pytest.mark.parametrize("refusals", [1, 2], ids=["then accepted", "then refused again"])
@pytest.mark.parametrize(("what", "path", "call"), CALLS, ids=CALL_IDS)
async def test_a_401_on_any_request_refreshes_once(
    serve: Serve,
    connect: Connect,
    what: str,
    path: str,
    call: Callable[[TalkieClient], Awaitable[Any]],
    refusals: int,
) -> None:
    """§2.1 for runs, REST, downloads and the logo alike: refresh once, retry with the new
    token; when that is refused too, UnauthorizedError (sign in again) and no third request."""
    stub = serve(Refusing(everything_app(), times=refusals))
    tokens = RotatingTokens("old", "new", "newer")
    client = await connect(stub.origin, token=None, tokens=tokens)
    manifests = stub.paths().count(MANIFEST_PATH)

    if refusals == 1:
        await call(client)
    else:
        with pytest.raises(UnauthorizedError):
            await call(client)

    assert tokens.rejected == ["old"]
    assert bearers_to(stub, path) == ["Bearer old", "Bearer new"]
    # The token was the question, not the manifest: it is not fetched again.
    assert stub.paths().count(MANIFEST_PATH) == manifests


async def test_the_retried_run_is_the_same_message(serve: Serve, connect: Connect) -> None:
    """§5 idempotency makes the retry safe: the second POST carries the same ids and body."""
    stub = serve(Refusing(everything_app(), times=1))
    client = await connect(stub.origin, token=None, tokens=RotatingTokens("old", "new"))

    events = await _run_to_the_end(client)

    runs = [r.body for r in stub.requests if r.path == ENDPOINTS["run"]]
    assert len(runs) == 2 and runs[0] == runs[1] and b'"m_same"' in runs[0]
    assert type(events[-1]).__name__ == "RunFinishedEvent"


async def test_a_pasted_token_is_not_retried(serve: Serve, connect: Connect) -> None:
    """A development token has no refresh: one request, then UnauthorizedError."""
    stub = serve(Refusing(everything_app(), times=1))
    client = await connect(stub.origin, token="pasted")

    with pytest.raises(UnauthorizedError, match="expired"):
        await _download(client)
    assert bearers_to(stub, "/files/report.pdf") == ["Bearer pasted"]


async def test_a_refresh_that_gives_the_same_token_is_not_retried(
    serve: Serve, connect: Connect
) -> None:
    """Sending the refused token again cannot help: the 401 is the answer."""
    stub = serve(Refusing(everything_app(), times=1))
    tokens = RotatingTokens("only", "only")
    client = await connect(stub.origin, token=None, tokens=tokens)

    with pytest.raises(UnauthorizedError):
        await client.status()
    assert tokens.rejected == ["only"]
    assert bearers_to(stub, ENDPOINTS["status"]) == ["Bearer only"]


async def test_a_huge_401_body_is_not_read_before_the_retry(serve: Serve, connect: Connect) -> None:
    """The refused answer is dropped after 64 kB; httpx would otherwise read all of it."""
    page = Streamer([b"{"], b" " * 4096, 50 * 1024 * 1024)
    calls = {"n": 0}

    async def status(request: Request) -> Response:
        calls["n"] += 1
        if calls["n"] == 1:
            return StreamingResponse(page.body(), status_code=401, media_type="application/json")
        return JSONResponse({})

    stub = serve(talkie_app([Route(ENDPOINTS["status"], status)]), small_buffers=True)
    async with small_buffer_client() as http:
        client = await connect(
            stub.origin, token=None, tokens=RotatingTokens("old", "new"), http=http
        )
        await client.status()

    assert page.wait_abandoned() and page.sent < 1024 * 1024
    assert bearers_to(stub, ENDPOINTS["status"]) == ["Bearer old", "Bearer new"]


async def test_a_new_token_source_is_used_from_the_next_request(
    serve: Serve, connect: Connect
) -> None:
    """`client.tokens = …` after a new sign-in: the next request carries the new bearer."""
    stub = serve(everything_app())
    client = await connect(stub.origin, token="first")
    await client.status()
    client.tokens = StaticToken("second")
    await client.status()
    client.tokens = None
    await client.status()

    assert bearers_to(stub, ENDPOINTS["status"]) == ["Bearer first", "Bearer second", None]


# --- the issuer origin only ---------------------------------------------------------------


async def test_a_download_on_another_port_gets_no_bearer(serve: Serve, connect: Connect) -> None:
    """§2.1: another port of 127.0.0.1 is another origin; the bearer stays home."""
    other = serve(talkie_app([Route("/files/report.pdf", _bytes(FILE, "application/pdf"))]))
    stub = serve(everything_app())
    tokens = RotatingTokens("old", "new")
    client = await connect(stub.origin, token=None, tokens=tokens)
    assert other.origin != stub.origin and other.host == stub.host

    async with client.open_stream(other.url("/files/report.pdf")) as response:
        assert await response.aread() == FILE
    assert await _download(client) == FILE

    assert bearers_to(other, "/files/report.pdf") == [None]
    assert bearers_to(stub, "/files/report.pdf") == ["Bearer old"]


async def test_a_401_from_another_origin_is_no_reason_to_refresh(
    serve: Serve, connect: Connect
) -> None:
    """A foreign host's 401 says nothing about our token: no refresh, no retry."""
    other = serve(Refusing(talkie_app(), times=1_000))
    stub = serve(everything_app())
    tokens = RotatingTokens("old", "new")
    client = await connect(stub.origin, token=None, tokens=tokens)

    with pytest.raises(UnauthorizedError):
        async with client.open_stream(other.url("/files/report.pdf")):
            pass
    assert tokens.rejected == []
    assert bearers_to(other, "/files/report.pdf") == [None]


async def test_an_https_logo_on_another_origin_gets_no_bearer(
    serve: Serve, connect: Connect, certificate: tuple[str, str]
) -> None:
    """§1 brand: an https logo elsewhere is fetched, but without the token."""
    certfile, _keyfile = certificate
    logo_host = serve(talkie_app([Route("/logo.png", _bytes(LOGO, "image/png"))]), tls=certificate)
    stub = serve(
        talkie_app(
            manifest=lambda o: manifest_document(o, brand={"logo": logo_host.url("/logo.png")})
        )
    )
    context = ssl.create_default_context(cafile=certfile)
    async with make_http_client(verify=context, trust_env=False) as http:
        client = await connect(
            stub.origin, token=None, tokens=RotatingTokens("old", "new"), http=http
        )
        assert await fetch_logo(client) == LOGO

    assert logo_host.origin.startswith("https://127.0.0.1:")
    assert bearers_to(logo_host, "/logo.png") == [None]


async def test_a_download_redirected_elsewhere_is_not_followed(
    serve: Serve, connect: Connect
) -> None:
    """TalkieClient follows no redirect, so the bearer cannot travel with one."""
    other = serve(talkie_app([Route("/landing", _bytes(FILE, "application/pdf"))]))

    async def bounce(request: Request) -> Response:
        return RedirectResponse(other.url("/landing"), status_code=302)

    stub = serve(talkie_app([Route("/files/report.pdf", bounce)]))
    client = await connect(stub.origin)

    with pytest.raises(ServerError, match="redirected") as failed:
        await _download(client)
    assert failed.value.code == "redirect"
    assert other.requests == []


async def test_the_auth_on_a_client_that_follows_redirects_keeps_the_bearer_home(
    serve: Serve,
) -> None:
    """With follow_redirects=True the auth flow runs once per request, not per hop: httpx
    drops the header on the hop to another origin, and that origin's 401 triggers no refresh."""
    other = serve(Refusing(talkie_app(), times=1_000))

    async def bounce(request: Request) -> Response:
        return RedirectResponse(other.url("/landing"), status_code=307)

    issuer = serve(talkie_app([Route("/bounce", bounce)]))
    tokens = RotatingTokens("old", "new")
    auth = BearerAuth(issuer.origin, tokens)
    async with httpx.AsyncClient(auth=auth, follow_redirects=True) as http:
        response = await http.get(issuer.url("/bounce"))

    assert response.status_code == 401 and not BearerAuth.retried(response)
    assert bearers_to(issuer, "/bounce") == ["Bearer old"]
    assert bearers_to(other, "/landing") == [None]
    assert tokens.rejected == []


def test_the_auth_refuses_a_synchronous_client() -> None:
    """Token sources are async: a sync client would silently go without the bearer."""
    auth = BearerAuth("http://127.0.0.1:9", StaticToken("t"))
    with httpx.Client(auth=auth) as http, pytest.raises(TypeError, match="AsyncClient"):
        http.get("http://127.0.0.1:9/")


def test_an_unparsable_url_is_not_the_issuer() -> None:
    auth = BearerAuth("http://127.0.0.1:9")
    assert auth.goes_to_issuer("http://127.0.0.1:9/x")
    assert not auth.goes_to_issuer("http://[::1")
    assert "127.0.0.1:9" in repr(auth)


# --- network failures, converted in one place ----------------------------------------------


@pytest.fixture
async def cut_body() -> AsyncIterator[str]:
    """A raw HTTP server that promises 100 kB of body, sends 10 bytes, and hangs up."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n0123456789")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}/files/cut.pdf"
    server.close()


async def test_a_connection_lost_mid_download_is_a_transport_error(
    serve: Serve, connect: Connect, cut_body: str
) -> None:
    """Reading the body inside `open_stream` raises TransportError, not an httpx error."""
    client = await connect(serve(talkie_app()).origin)
    with pytest.raises(TransportError) as failed:
        async with client.open_stream(cut_body) as response:
            async for _chunk in response.aiter_bytes():
                pass
    assert failed.value.retryable
    assert isinstance(failed.value.__cause__, httpx.HTTPError)


def test_network_errors_converts_httpx_failures_only() -> None:
    request = httpx.Request("GET", "http://127.0.0.1:9/")
    connect_error = httpx.ConnectError("refused", request=request)
    with (
        pytest.raises(TransportError, match="Could not connect to the server") as failed,
        network_errors("the server"),
    ):
        raise connect_error
    assert isinstance(failed.value.__cause__, httpx.ConnectError)
    with pytest.raises(ValueError), network_errors("the server"):
        raise ValueError("not a network failure")
    error = describe_transport_error(httpx.ReadTimeout("slow", request=request), "X")
    assert isinstance(error, TransportError) and "did not answer in time" in error.message
