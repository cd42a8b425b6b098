"""TalkieClient over real HTTP: the run request (§5), retries, the bearer's origin (§2.1),
redirects, stream limits, and the REST endpoints (§4, §8, §9) against stub servers."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import httpx
import pytest
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

from talkie_tui.core.errors import (
    ConflictError,
    ExpiredError,
    ServerError,
    StaleError,
    TalkieError,
    TooLargeError,
    TransportError,
    UnauthorizedError,
)
from talkie_tui.core.tokens import StaticToken
from talkie_tui.protocol.talkie.client import TalkieClient
from talkie_tui.protocol.talkie.events import StreamTruncated
from talkie_tui.protocol.talkie.manifest import MANIFEST_PATH, ForeignEndpointError
from talkie_tui.protocol.talkie.models import Action
from talkie_tui.protocol.talkie.run_request import RunRequest, new_id
from tests.helpers import TEST_TOKEN
from tests.protocol.conftest import Connect, Serve
from tests.protocol.replay import kinds
from tests.stub_server import (
    ANOTHER_LOOPBACK,
    ENDPOINTS,
    ConnectionDropper,
    Streamer,
    StubServer,
    error_response,
    manifest_document,
    small_buffer_client,
    sse_frame,
    sse_response,
    talkie_app,
)

RUN = ENDPOINTS["run"]
Handler = Callable[[Request], Awaitable[Response]]


def finished_run(text: str = "Hi", thread_id: str = "t_1") -> str:
    """A complete, successful event stream."""
    events = [
        {"type": "RUN_STARTED", "threadId": thread_id, "runId": "r_1"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m_a", "delta": text},
        {"type": "RUN_FINISHED", "threadId": thread_id, "runId": "r_1"},
    ]
    return "".join(sse_frame(event) for event in events)


def answers(*responses: Response | Handler) -> Handler:
    """A handler giving these responses in turn (the last one repeats)."""
    queue = list(responses)

    async def handler(request: Request) -> Response:
        await request.body()
        response = queue.pop(0) if len(queue) > 1 else queue[0]
        return response if isinstance(response, Response) else await response(request)

    return handler


def run_server(serve: Serve, *responses: Response | Handler, **app: Any) -> StubServer:
    """A stub whose run endpoint answers with `responses` in turn."""
    return serve(talkie_app([Route(RUN, answers(*responses), methods=["POST"])], **app))


async def collect(client: TalkieClient, request: RunRequest) -> list[Any]:
    return [event async for event in client.run(request)]


def bodies(stub: StubServer, path: str = RUN) -> list[dict[str, Any]]:
    return [r.json() for r in stub.requests if r.path == path]


class RotatingTokens:
    """An OAuth-like token source: each refresh hands out the next token."""

    def __init__(self, *tokens: str) -> None:
        self.tokens = list(tokens)
        self.rejected: list[str] = []

    async def token(self) -> str | None:
        return self.tokens[0] if self.tokens else None

    async def refresh(self, rejected: str) -> str | None:
        self.rejected.append(rejected)
        self.tokens.pop(0)
        return await self.token()


@pytest.fixture
def dropper() -> Iterator[ConnectionDropper]:
    """A server on another loopback origin that drops every connection unanswered."""
    server = ConnectionDropper()
    yield server
    server.stop()


# --- the run request (§5) ------------------------------------------------------------------


async def test_run_posts_one_new_user_message_as_agui_input(serve: Serve, connect: Connect) -> None:
    """§5: POST run, Accept text/event-stream, RunAgentInput with only the new user message."""
    stub = run_server(serve, sse_response(finished_run()))
    client = await connect(stub.origin)
    request = RunRequest("Co mám dnes za schůzky?", thread_id="t_123")

    events = await collect(client, request)

    (seen,) = [r for r in stub.requests if r.path == RUN]
    assert seen.method == "POST"
    assert seen.headers["accept"] == "text/event-stream"
    assert seen.headers["content-type"] == "application/json"
    assert seen.headers["authorization"] == f"Bearer {TEST_TOKEN}"
    assert seen.json() == {
        "threadId": "t_123",
        "runId": request.run_id,
        "messages": [
            {"id": request.message_id, "role": "user", "content": "Co mám dnes za schůzky?"}
        ],
        "tools": [],
        "context": [],
        "state": {},
        "forwardedProps": {"talkie": {"channel": "chat"}},
        "protocolVersion": "1.0",
    }
    assert kinds(events) == ["RUN_STARTED", "TEXT_MESSAGE_CONTENT", "RUN_FINISHED"]
    assert request.finished and request.thread_id == "t_1"


def test_client_generated_ids_are_unique_and_prefixed() -> None:
    """§5: threadId (new thread), runId and the message id are generated by the client."""
    request = RunRequest("x")
    assert request.thread_id.startswith("t_") and request.run_id.startswith("r_")
    assert request.message_id.startswith("m_")
    assert len({new_id("m") for _ in range(100)}) == 100


async def test_retry_before_the_stream_resends_the_same_ids(serve: Serve, connect: Connect) -> None:
    """§5 idempotent retry: a 503 before the stream is retried with the same message id."""
    unavailable = error_response(503, "upstream_unavailable", "busy", retryable=True)
    stub = run_server(serve, unavailable, unavailable, sse_response(finished_run("Hotovo")))
    client = await connect(stub.origin)
    request = RunRequest("hello")

    events = await collect(client, request)

    sent = bodies(stub)
    assert len(sent) == 3 and sent[0] == sent[1] == sent[2]
    assert sent[0]["messages"][0]["id"] == request.message_id
    assert kinds(events)[-1] == "RUN_FINISHED"


async def test_dropped_connections_before_the_stream_are_retried_with_the_same_ids(
    serve: Serve, connect: Connect, dropper: ConnectionDropper
) -> None:
    """§5: a send that fails on the network is retried (same ids), then reported."""
    stub = serve(
        talkie_app(
            manifest=lambda origin: manifest_document(
                origin, endpoints={"run": dropper.origin + "/run"}
            )
        )
    )
    client = await connect(stub.origin, accepted_origins={dropper.origin})
    request = RunRequest("hello")

    with pytest.raises(TransportError) as failed:
        await collect(client, request)

    assert failed.value.retryable
    sent = [json.loads(body) for body in dropper.bodies]
    assert len(sent) == 3 and all(body == sent[0] for body in sent)
    assert sent[0]["messages"][0]["id"] == request.message_id


@pytest.mark.parametrize(
    ("response", "error"),
    [
        (error_response(400, "invalid_request"), ServerError),
        (error_response(409, "conflict"), ConflictError),
        (error_response(413, "too_large"), TooLargeError),
        (error_response(429, "rate_limited", retryable=True), ServerError),
        (error_response(503, "upstream_unavailable", retryable=False), ServerError),
    ],
)
async def test_other_errors_before_the_stream_are_not_retried(
    serve: Serve, connect: Connect, response: Response, error: type[Exception]
) -> None:
    """Only retryable 502/503/504 answers are retried; everything else is raised at once."""
    stub = run_server(serve, response)
    client = await connect(stub.origin)

    with pytest.raises(error):
        await collect(client, RunRequest("hello"))
    assert len(bodies(stub)) == 1


async def test_a_message_over_max_message_chars_is_not_sent(serve: Serve, connect: Connect) -> None:
    """§3/§1 limits: a message longer than limits.maxMessageChars is refused locally."""
    stub = run_server(
        serve,
        sse_response(finished_run()),
        manifest=lambda origin: manifest_document(origin, limits={"maxMessageChars": 10}),
    )
    client = await connect(stub.origin)

    await collect(client, RunRequest("x" * 10))
    with pytest.raises(TooLargeError, match="at most 10"):
        await collect(client, RunRequest("x" * 11))
    assert len(bodies(stub)) == 1


@pytest.mark.parametrize("media_type", ["application/json", "text/html"])
async def test_a_success_that_is_not_an_event_stream_is_an_error(
    serve: Serve, connect: Connect, media_type: str
) -> None:
    """§5: the answer is `200 text/event-stream`; anything else is reported, not parsed."""
    stub = run_server(serve, Response("{}", media_type=media_type))
    client = await connect(stub.origin)

    with pytest.raises(ServerError, match="instead of an event stream") as failed:
        await collect(client, RunRequest("hello"))
    assert failed.value.code == "invalid_response"


async def test_event_stream_with_charset_parameter_is_accepted(
    serve: Serve, connect: Connect
) -> None:
    """AG-UI: compare only the media type before `;`."""
    stub = run_server(serve, sse_response(finished_run(), "text/event-stream; charset=utf-8"))
    client = await connect(stub.origin)
    assert kinds(await collect(client, RunRequest("x")))[-1] == "RUN_FINISHED"


async def test_a_huge_error_page_before_the_stream_is_not_read_whole(
    serve: Serve, connect: Connect
) -> None:
    """An error body (e.g. a proxy page) is read up to 64 kB, then the connection is dropped."""
    page = Streamer([b"<html>"], b"<p>error</p>" * 5000, 50 * 1024 * 1024)

    async def run(request: Request) -> Response:
        return StreamingResponse(page.body(), status_code=500, media_type="text/html")

    stub = serve(talkie_app([Route(RUN, run, methods=["POST"])]), small_buffers=True)
    async with small_buffer_client() as http:
        client = await connect(stub.origin, http=http)
        with pytest.raises(ServerError, match="HTTP 500"):
            await collect(client, RunRequest("hello"))

    assert page.wait_abandoned() and page.sent < 1024 * 1024


# --- the bearer token (§2.1) ---------------------------------------------------------------


async def test_a_401_refreshes_the_token_once_then_asks_to_sign_in(
    serve: Serve, connect: Connect
) -> None:
    """§2.1: on 401 the client refreshes once and retries; a second 401 is final."""
    denied = error_response(401, "unauthorized", "expired")
    stub = run_server(serve, denied, sse_response(finished_run()))
    tokens = RotatingTokens("old", "new", "newer")
    client = await connect(stub.origin, token=None, tokens=tokens)

    await collect(client, RunRequest("hello"))

    assert tokens.rejected == ["old"]
    runs = [r.headers["authorization"] for r in stub.requests if r.path == RUN]
    assert runs == ["Bearer old", "Bearer new"]

    stub_denied = run_server(serve, denied)
    client = await connect(stub_denied.origin, token=None, tokens=RotatingTokens("a", "b", "c"))
    with pytest.raises(UnauthorizedError):
        await collect(client, RunRequest("hello"))
    assert len(bodies(stub_denied)) == 2


async def test_a_rest_401_refreshes_the_token_once(serve: Serve, connect: Connect) -> None:
    """§2.1 for REST endpoints: refresh once, retry with the new token."""
    ok = JSONResponse({"user": {"name": "Jana"}})
    route = Route(ENDPOINTS["status"], answers(error_response(401, "unauthorized"), ok))
    stub = serve(talkie_app([route]))
    client = await connect(stub.origin, token=None, tokens=RotatingTokens("old", "new"))

    assert (await client.status()).user.name == "Jana"
    assert [r.headers.get("authorization") for r in stub.requests[1:]] == [
        "Bearer old",
        "Bearer new",
    ]


async def test_the_bearer_goes_only_to_the_issuer_origin(serve: Serve, connect: Connect) -> None:
    """§2.1 MUST NOT: an accepted endpoint on another origin gets no bearer token."""
    elsewhere = serve(
        talkie_app([Route("/threads", lambda r: JSONResponse({"threads": []}))]),
        host=ANOTHER_LOOPBACK,
    )

    def manifest(origin: str) -> dict[str, Any]:
        endpoints = dict(ENDPOINTS, threads=elsewhere.url("/threads"))
        return manifest_document(origin, endpoints=endpoints)

    status = Route(ENDPOINTS["status"], lambda r: JSONResponse({}))
    stub = serve(talkie_app([status], manifest=manifest))
    client = await connect(stub.origin)

    with pytest.raises(ForeignEndpointError):
        await client.threads()
    client.server.accepted_origins.add(elsewhere.origin)
    await client.threads()
    await client.status()

    assert [r.headers.get("authorization") for r in elsewhere.requests] == [None]
    assert stub.requests[-1].headers["authorization"] == f"Bearer {TEST_TOKEN}"


@pytest.mark.parametrize(
    "manifest_now",
    [
        pytest.param(lambda origin: None, id="manifest gone"),
        pytest.param(lambda origin: manifest_document(origin, serverId="other"), id="other server"),
    ],
)
async def test_a_401_with_no_usable_new_manifest_is_final(
    serve: Serve, connect: Connect, manifest_now: Callable[[str], Any]
) -> None:
    """§1 refresh on 401: a manifest that vanished or now names another server changes nothing."""
    state = {"refreshed": False}

    def manifest(origin: str) -> Any:
        return manifest_now(origin) if state["refreshed"] else manifest_document(origin)

    async def status(request: Request) -> Response:
        state["refreshed"] = True
        return error_response(401, "unauthorized", "Sign in again")

    stub = serve(talkie_app([Route(ENDPOINTS["status"], status)], manifest=manifest))
    client = await connect(stub.origin)
    before = client.server

    with pytest.raises(UnauthorizedError, match="Sign in again"):
        await client.status()
    assert client.server is before


async def test_a_server_that_went_away_is_a_transport_error(serve: Serve, connect: Connect) -> None:
    """REST calls report a lost server as a retryable TransportError."""
    stub = serve(talkie_app())
    client = await connect(stub.origin)
    stub.stop()

    with pytest.raises(TransportError) as failed:
        await client.threads()
    assert failed.value.retryable


@pytest.mark.parametrize("status", [301, 302, 307, 308])
async def test_a_redirect_of_the_run_to_another_origin_is_not_followed(
    serve: Serve, connect: Connect, status: int
) -> None:
    """§2.1: a redirect must not carry the bearer to another origin, so none is followed."""
    elsewhere = run_server(serve, sse_response(finished_run()))
    stub = run_server(serve, RedirectResponse(elsewhere.url(RUN), status_code=status))
    client = await connect(stub.origin)

    with pytest.raises(ServerError, match="redirected") as failed:
        await collect(client, RunRequest("hello"))

    assert failed.value.code == "redirect"
    assert elsewhere.paths() == []


async def test_a_redirect_of_a_rest_endpoint_is_not_followed(
    serve: Serve, connect: Connect
) -> None:
    """§2.1: REST endpoints do not follow redirects either."""
    elsewhere = serve(talkie_app(), host=ANOTHER_LOOPBACK)
    status = Route(ENDPOINTS["status"], lambda r: RedirectResponse(elsewhere.url("/x"), 307))
    client = await connect(serve(talkie_app([status])).origin)

    with pytest.raises(ServerError, match="redirected"):
        await client.status()
    assert elsewhere.requests == []


# --- the stream ---------------------------------------------------------------------------


async def test_a_2_mb_event_is_refused_without_reading_the_rest(
    serve: Serve, connect: Connect
) -> None:
    """A single event over the 1 MB cap ends the stream early; the rest is never downloaded."""
    total = 50 * 1024 * 1024
    head = sse_frame({"type": "RUN_STARTED", "threadId": "t_1", "runId": "r_1"})
    opening = '{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"'
    streamer = Streamer([head.encode(), b"data: " + opening.encode()], b"x" * 65536, total)
    route = Route(RUN, answers(sse_response(streamer)), methods=["POST"])
    stub = serve(talkie_app([route]), small_buffers=True)
    async with small_buffer_client() as http:
        client = await connect(stub.origin, http=http)
        events = await collect(client, RunRequest("big"))

    assert kinds(events) == ["RUN_STARTED", "StreamTruncated"]
    assert "larger than 1024 kB" in events[-1].reason
    assert streamer.wait_abandoned(), "the server should see the client hang up"
    assert streamer.sent < 2 * 1024 * 1024


async def test_a_connection_lost_mid_stream_is_a_truncated_run(
    serve: Serve, connect: Connect
) -> None:
    """§5 disconnect: a stream that breaks off becomes StreamTruncated, not an exception."""

    async def breaking_body() -> Any:
        yield sse_frame({"type": "RUN_STARTED", "threadId": "t_1", "runId": "r_1"}).encode()
        yield b'data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"par'
        raise RuntimeError("the server process died")

    async def run(request: Request) -> Response:
        return StreamingResponse(breaking_body(), media_type="text/event-stream")

    client = await connect(run_server(serve, run).origin)
    request = RunRequest("hello")

    events = await collect(client, request)

    assert kinds(events) == ["RUN_STARTED", "StreamTruncated"]
    assert request.truncated and not request.finished
    assert isinstance(events[-1], StreamTruncated)


# --- REST endpoints ------------------------------------------------------------------------

ACTION = {
    "id": "a/77",
    "summary": "Odeslat nabídku",
    "status": "pending",
    "paramsHash": "sha256:abc",
    "riskLevel": "medium",
}


def rest_server(serve: Serve, path: str, respond: Handler, methods: list[str]) -> StubServer:
    return serve(talkie_app([Route(path, respond, methods=methods)]))


async def test_status_is_read(serve: Serve, connect: Connect) -> None:
    """§4: GET status gives the user, chat/voice switches and usage meters."""
    body = {
        "user": {"id": "u1", "name": "Jana Nováková", "email": "jana@example.com"},
        "chat": True,
        "voice": True,
        "usage": [{"label": "Tokens today", "used": 12000, "limit": 400000, "unit": "tokens"}],
    }
    stub = rest_server(serve, ENDPOINTS["status"], answers(JSONResponse(body)), ["GET"])
    status = await (await connect(stub.origin)).status()
    assert (status.user.name, status.chat, status.voice) == ("Jana Nováková", True, True)
    assert status.usage[0].limit == 400000


async def test_thread_list_skips_unreadable_rows(serve: Serve, connect: Connect) -> None:
    """§9: one row the client cannot read does not hide the others."""
    rows = [
        {"id": "t_2", "title": "Newest", "channel": "voice", "updatedAt": "2026-10-22T10:00:00Z"},
        {"title": "no id"},
        "not an object",
        {"id": "t_1", "title": "Older"},
    ]
    stub = rest_server(
        serve, ENDPOINTS["threads"], answers(JSONResponse({"threads": rows})), ["GET"]
    )
    threads = await (await connect(stub.origin)).threads()
    assert [(t.id, t.channel) for t in threads] == [("t_2", "voice"), ("t_1", "chat")]


@pytest.mark.parametrize(
    ("body", "match"),
    [
        (Response("<html>", media_type="text/html"), "not JSON"),
        (JSONResponse({"items": []}), "no 'threads' list"),
    ],
)
async def test_unreadable_thread_list(
    serve: Serve, connect: Connect, body: Response, match: str
) -> None:
    """An answer that is not the §9 shape is a clear error."""
    stub = rest_server(serve, ENDPOINTS["threads"], answers(body), ["GET"])
    with pytest.raises(TalkieError, match=match):
        await (await connect(stub.origin)).threads()


async def test_thread_history_keeps_readable_messages_and_actions(
    serve: Serve, connect: Connect
) -> None:
    """§9: GET thread → thread, messages (with cards), actions; broken items are dropped."""
    body = {
        "thread": {"id": "t_1", "title": "Schůzky"},
        "messages": [
            {"id": "m_1", "role": "user", "content": "Ahoj"},
            {"id": "m_2", "role": "system", "content": "not shown"},
            {
                "id": "m_3",
                "role": "assistant",
                "content": None,
                "cards": [{"title": "C", "fallbackText": "C"}],
            },
        ],
        "actions": [ACTION, {"id": "broken"}],
    }
    stub = rest_server(serve, ENDPOINTS["thread"], answers(JSONResponse(body)), ["GET"])
    history = await (await connect(stub.origin)).thread("t_1")
    assert [m.id for m in history.messages] == ["m_1", "m_3"]
    assert history.messages[1].content == "" and history.messages[1].cards[0].title == "C"
    assert [a.id for a in history.actions] == ["a/77"]


async def test_an_answer_of_the_wrong_shape_names_the_field(serve: Serve, connect: Connect) -> None:
    """A model that cannot be read says where."""
    stub = rest_server(serve, ENDPOINTS["action"], answers(JSONResponse({"id": "a"})), ["GET"])
    with pytest.raises(TalkieError, match=r"unreadable \(summary: Field required"):
        await (await connect(stub.origin)).action("a")


async def test_delete_thread_and_cancel_run_address_the_encoded_ids(
    serve: Serve, connect: Connect
) -> None:
    """§9 DELETE thread, §5 POST cancelRun (its `{runId}` is one URL-encoded segment)."""
    ok = answers(JSONResponse({"ok": True}))
    stub = serve(
        talkie_app(
            [
                Route("/api/talkie/threads/{tid}", ok, methods=["DELETE"]),
                Route("/api/talkie/runs/{rid:path}/cancel", ok, methods=["POST"]),
            ]
        )
    )
    client = await connect(stub.origin)

    await client.delete_thread("t 1")
    await client.cancel_run("r/1")

    seen = [(r.method, r.raw_path) for r in stub.requests if r.path != MANIFEST_PATH]
    assert seen == [
        ("DELETE", b"/api/talkie/threads/t%201"),
        ("POST", b"/api/talkie/runs/r%2F1/cancel"),
    ]


async def test_decision_sends_the_shown_params_hash_and_method(
    serve: Serve, connect: Connect
) -> None:
    """§8: POST decision {decision, paramsHash, method} → {action, events}."""
    done = dict(ACTION, status="done")
    card = {"type": "CUSTOM", "name": "talkie.card", "value": {"fallbackText": "Sent"}}
    result = JSONResponse({"action": done, "events": [card, "junk"]})
    stub = rest_server(serve, "/api/talkie/actions/{aid:path}/decision", answers(result), ["POST"])
    client = await connect(stub.origin)

    decided = await client.decide(Action.model_validate(ACTION), "confirm", method="voice")

    seen = stub.requests[-1]
    assert seen.raw_path == b"/api/talkie/actions/a%2F77/decision"
    assert seen.json() == {"decision": "confirm", "paramsHash": "sha256:abc", "method": "voice"}
    assert seen.headers["authorization"] == f"Bearer {TEST_TOKEN}"
    assert decided.action.status == "done" and decided.events == [card]


@pytest.mark.parametrize(
    ("status", "code", "error"),
    [(409, "conflict", ConflictError), (409, "stale", StaleError), (410, "expired", ExpiredError)],
)
async def test_decision_refusals_are_distinct_errors(
    serve: Serve, connect: Connect, status: int, code: str, error: type[Exception]
) -> None:
    """§8: opposite decision → 409 conflict, changed paramsHash → 409 stale, late → 410."""
    refusal = answers(error_response(status, code, f"refused: {code}"))
    stub = rest_server(serve, "/api/talkie/actions/{aid:path}/decision", refusal, ["POST"])
    client = await connect(stub.origin)

    with pytest.raises(error, match=f"refused: {code}"):
        await client.decide(Action.model_validate(ACTION), "cancel")


# --- connection lifecycle ------------------------------------------------------------------


async def test_a_client_built_on_a_given_http_client_leaves_it_open(serve: Serve) -> None:
    """TalkieClient closes only the connections it opened itself."""
    stub = serve(talkie_app([Route(ENDPOINTS["status"], lambda r: JSONResponse({}))]))
    async with httpx.AsyncClient() as http:
        async with await TalkieClient.connect(stub.origin, http=http) as client:
            await client.status()
        assert not http.is_closed
        assert "authorization" not in stub.requests[-1].headers


async def test_a_failed_connect_raises_the_discovery_error(serve: Serve) -> None:
    """§1 failures reach the caller as TalkieErrors."""
    stub = serve(talkie_app([Route(MANIFEST_PATH, lambda r: Response("nope", 404))]))
    with pytest.raises(TalkieError, match="not a Talkie server"):
        await TalkieClient.connect(stub.origin)


def test_a_static_token_is_never_printed() -> None:
    """The pasted token does not leak into logs through repr."""
    assert TEST_TOKEN not in repr(StaticToken(TEST_TOKEN))
