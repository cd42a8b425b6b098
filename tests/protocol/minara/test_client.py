"""MinaraClient over real HTTP on 127.0.0.1 against a few Starlette routes: every route, both
revisions of the turn request, errors in the gateway's words, the bearer for its origin only."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from talkie_tui.core.errors import (
    NotFoundError,
    RateLimitedError,
    ServerError,
    TalkieError,
    TransportError,
    UnauthorizedError,
)
from talkie_tui.core.tokens import StaticToken
from talkie_tui.protocol.minara.client import MinaraClient, SseTurn, gateway_base
from talkie_tui.protocol.minara.errors import EndpointRefused
from talkie_tui.protocol.minara.files import FileRefused, probe_file
from talkie_tui.protocol.minara.models import AttachmentRef, TurnAccepted, TurnRequest
from tests.stub_server import ANOTHER_LOOPBACK, StubServer

TOKEN = "tok-123"
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 100


def err(status: int, code: str, message: str, **headers: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status, headers=headers)


def authorized(request: Request) -> bool:
    return request.headers.get("authorization") == f"Bearer {TOKEN}"


async def chat_stream(request: Request) -> Response:
    body = await request.json()
    if body["message"] == "old revision":
        frames = [
            {"type": "start", "data": {"session_id": "sess_old"}},
            {"type": "text_delta", "data": {"text": "Hi"}},
            {"type": "done", "data": {}},
        ]
        text = "".join(f"data: {json.dumps(f)}\n\n" for f in frames) + "data: not json\n\n"
        return Response(text, media_type="text/event-stream")
    if body["message"] == "bad model":
        return err(400, "invalid_model", "Unknown model 'x'.")
    return JSONResponse(
        {
            "session_id": body.get("session_id") or "s_new",
            "kind": "chat",
            "is_new": True,
            "echo": body,
        }
    )


async def interject(request: Request) -> Response:
    body = await request.json()
    if not body.get("message"):
        return err(400, "invalid_request", "message is required")
    if body["session_id"] == "idle":
        return JSONResponse({"status": "no_active_turn"}, 409)
    return JSONResponse({"status": "injected"})


async def interrupt(request: Request) -> Response:
    return JSONResponse({"status": "no_active_turn"})


async def sessions(request: Request) -> Response:
    if not authorized(request):
        return err(401, "unauthorized", "A token is needed.")
    rows = [
        {
            "id": "s1",
            "title": "Swap \x1b[31mplan",
            "kind": "chat",
            "updated_at": "2026-07-01T10:00:00Z",
        },
        {"title": "no id"},
        {"id": "s2", "title": None, "kind": "chat"},
    ]
    return JSONResponse({"sessions": rows, "total": 2, "query": dict(request.query_params)})


async def session(request: Request) -> Response:
    session_id = request.path_params["id"]
    if session_id == "missing":
        return err(404, "not_found", "No session 'missing'.")
    return JSONResponse(
        {
            "session": {"id": session_id, "title": "t"},
            "messages": [{"id": "u1", "role": "user", "content": "hi"}],
            "is_streaming": True,
            "pending_questions": [],
            "last_seq": 12,
        }
    )


async def delete(request: Request) -> Response:
    return JSONResponse({"ok": True})


async def search(request: Request) -> Response:
    q = request.query_params["q"]
    return JSONResponse(
        {
            "results": [
                {"session_id": "s1", "message_id": "m1", "title": "t", "snippet": f"a «{q}» b"},
                {},
            ]
        }
    )


async def answer(request: Request) -> Response:
    await request.body()  # recorded
    if request.path_params["id"] == "q_gone":
        return err(404, "not_found", "not pending")
    return JSONResponse({"ok": True})


CREDENTIALS: dict[str, Any] = {}


async def credentials(request: Request) -> Response:
    CREDENTIALS[request.path_params["name"]] = (await request.json())["value"]
    return JSONResponse({"ok": True})


UPLOADS: list[bytes] = []


async def files(request: Request) -> Response:
    body = await request.body()
    UPLOADS.append(body)
    return JSONResponse(
        {
            "key": "chat/files/2026/07/chart.png",
            "url": "/v1/files/chat/files/2026/07/chart.png",
            "mediaType": "image/png",
            "size": 108,
            "uploaded_at": "2026-07-17T10:00:00Z",
        }
    )


async def file(request: Request) -> Response:
    return Response(PNG, media_type="image/png")


async def models(request: Request) -> Response:
    return JSONResponse(
        {
            "models": [
                {"id": "minara-fast", "label": "Minara Fast"},
                {"id": "minara-pro", "label": "Minara Pro", "reasoning": True},
                {"label": "no id"},
            ],
            "default": "minara-fast",
        }
    )


async def transcribe(request: Request) -> Response:
    body = await request.body()
    assert "persist" in request.query_params
    assert b'name="file"; filename="recording.wav"' in body and b"RIFF" in body
    return JSONResponse({"ok": True, "text": "hello there", "file_key": "chat/files/v.wav"})


async def healthz(request: Request) -> Response:
    return JSONResponse({"ok": True})


async def limited(request: Request) -> Response:
    return err(429, "rate_limited", "Slow down.", **{"Retry-After": "7"})


async def broken(request: Request) -> Response:
    return Response("<html>oops</html>", 502, media_type="text/html")


async def moved(request: Request) -> Response:
    return Response(status_code=307, headers={"Location": request.query_params["to"]})


ROUTES = [
    Route("/healthz", healthz),
    Route("/v1/chat/stream", chat_stream, methods=["POST"]),
    Route("/v1/chat/interject", interject, methods=["POST"]),
    Route("/v1/chat/interrupt", interrupt, methods=["POST"]),
    Route("/v1/sessions", sessions),
    Route("/v1/sessions/search", search),
    Route("/v1/sessions/{id}", session, methods=["GET"]),
    Route("/v1/sessions/{id}", delete, methods=["DELETE"]),
    Route("/v1/interactions/{id}/answer", answer, methods=["POST"]),
    Route("/v1/credentials/{name}", credentials, methods=["PUT"]),
    Route("/v1/files", files, methods=["POST"]),
    Route("/v1/files/{key:path}", file),
    Route("/v1/llm/available-models", models),
    Route("/v1/voice/transcribe", transcribe, methods=["POST"]),
    Route("/limited", limited),
    Route("/broken", broken),
    Route("/moved", moved),
]


@pytest.fixture(scope="module")
def gateway() -> Iterator[StubServer]:
    server = StubServer(Starlette(routes=ROUTES)).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def elsewhere() -> Iterator[StubServer]:
    server = StubServer(Starlette(routes=ROUTES), host=ANOTHER_LOOPBACK).start()
    yield server
    server.stop()


@pytest.fixture
async def client(gateway: StubServer) -> Any:
    async with MinaraClient(gateway.origin, tokens=StaticToken(TOKEN)) as minara:
        yield minara


async def test_the_turn_request_is_accepted_with_its_fields(
    client: MinaraClient, gateway: StubServer
) -> None:
    request = TurnRequest(
        message="hello",
        attachments=(
            AttachmentRef(key="k", filename="a.png", media_type="image/png", size=3, kind="image"),
        ),
        model="minara-pro",
        reasoning_effort="high",
        client_message_id="m_1",
    )
    accepted = await client.chat_stream(request)
    assert accepted == TurnAccepted(session_id="s_new", kind="chat", is_new=True)
    sent = gateway.requests[-1]
    assert sent.json() == {
        "message": "hello",
        "kind": "chat",
        "attachments": [
            {"key": "k", "filename": "a.png", "media_type": "image/png", "size": 3, "kind": "image"}
        ],
        "model": "minara-pro",
        "reasoning_effort": "high",
        "client_message_id": "m_1",
    }
    assert sent.headers["authorization"] == f"Bearer {TOKEN}"


async def test_the_older_revision_answers_with_the_events_themselves(client: MinaraClient) -> None:
    answer = await client.chat_stream(TurnRequest(message="old revision"))
    assert isinstance(answer, SseTurn)
    async with answer:
        events = [event async for event in answer.events()]
    assert [e["type"] for e in events] == ["start", "text_delta", "done"]


async def test_a_refused_turn_raises_with_the_gateways_words(client: MinaraClient) -> None:
    with pytest.raises(ServerError) as caught:
        await client.chat_stream(TurnRequest(message="bad model"))
    assert (caught.value.code, caught.value.status) == ("invalid_model", 400)
    assert caught.value.message == "Unknown model 'x'." and not caught.value.retryable


async def test_interject_and_interrupt(client: MinaraClient) -> None:
    assert await client.interject("s1", "and the fee?") is True
    assert await client.interject("idle", "late") is False
    with pytest.raises(ServerError, match="message is required"):
        await client.interject("s1", "")
    assert await client.interrupt("s1") == "no_active_turn"


async def test_sessions_detail_delete_and_search(client: MinaraClient) -> None:
    listed = await client.sessions(kind="chat", limit=5)
    assert [s.id for s in listed.sessions] == ["s1", "s2"]  # the row without an id is dropped
    assert listed.sessions[0].title == "Swap plan" and listed.sessions[1].title == ""
    detail = await client.session("s 1")
    assert detail.is_streaming and detail.last_seq == 12 and detail.raw["messages"][0]["id"] == "u1"
    with pytest.raises(NotFoundError, match="No session"):
        await client.session("missing")
    await client.delete_session("s1")
    hits = await client.search("fee")
    assert [(h.session_id, h.snippet) for h in hits] == [("s1", "a «fee» b")]


async def test_a_401_is_unauthorized(gateway: StubServer) -> None:
    async with MinaraClient(gateway.origin) as anonymous:
        with pytest.raises(UnauthorizedError, match="A token is needed"):
            await anonymous.sessions()


async def test_answers_and_not_pending(client: MinaraClient, gateway: StubServer) -> None:
    answers = [{"questionIndex": 0, "selected_labels": ["Savings"]}]
    assert await client.answer_interaction("q_1", answers) == "answered"
    assert gateway.requests[-1].json() == {"answers": answers}
    assert await client.answer_interaction("q_gone", answers) == "not_pending"


async def test_a_secret_goes_to_the_gateways_credentials_route_only(
    client: MinaraClient, gateway: StubServer, elsewhere: StubServer
) -> None:
    await client.put_credential("/v1/credentials/exchange_api_key", "s3cret")
    assert CREDENTIALS["exchange_api_key"] == "s3cret"
    before = len(gateway.requests) + len(elsewhere.requests)
    for endpoint in (
        elsewhere.url("/v1/credentials/exchange_api_key"),
        "//" + ANOTHER_LOOPBACK + "/v1/credentials/x",
        "/v1/chat/stream",
        "/v1/credentials/../chat/stream",
        "javascript:alert(1)",
    ):
        with pytest.raises(EndpointRefused) as caught:
            await client.put_credential(endpoint, "s3cret")
        assert "nothing was sent" in caught.value.message and "s3cret" not in caught.value.message
    assert len(gateway.requests) + len(elsewhere.requests) == before


async def test_an_upload_reports_progress_and_names_the_file(
    client: MinaraClient, tmp_path: Path
) -> None:
    path = tmp_path / "chart.png"
    path.write_bytes(PNG + b"\x01" * 200_000)
    progress: list[tuple[int, int]] = []
    probed, stored = await client.upload(
        path, progress=lambda sent, total: progress.append((sent, total))
    )
    assert (probed.kind, probed.media_type) == ("image", "image/png")
    assert stored.key == "chat/files/2026/07/chart.png" and stored.media_type == "image/png"
    assert progress[0] == (0, probed.size) and progress[-1] == (probed.size, probed.size)
    assert len(progress) > 2
    body = UPLOADS[-1]
    assert b'name="file"; filename="chart.png"' in body and b"Content-Type: image/png" in body


async def test_limits_are_checked_before_a_byte_is_sent(
    client: MinaraClient, gateway: StubServer, tmp_path: Path
) -> None:
    big = tmp_path / "big.png"
    big.write_bytes(PNG + b"\x00" * (5 * 1024 * 1024))
    unknown = tmp_path / "tool.exe"
    unknown.write_bytes(b"MZ\x90\x00\x03" + b"\x00" * 100)
    before = len(gateway.requests)
    with pytest.raises(FileRefused, match="up to 5 MiB"):
        await client.upload(big)
    with pytest.raises(FileRefused, match="images, PDFs"):
        await client.upload(unknown)
    many = tuple(
        AttachmentRef(key=str(n), filename="a", media_type="text/plain", size=1, kind="text")
        for n in range(9)
    )
    with pytest.raises(FileRefused, match="at most 8"):
        await client.chat_stream(TurnRequest(message="x", attachments=many))
    assert len(gateway.requests) == before


@pytest.mark.parametrize(
    ("name", "content", "kind"),
    [
        ("a.pdf", b"%PDF-1.7\n...", "pdf"),
        ("a.jpg", b"\xff\xd8\xff\xe0" + b"\x00" * 10, "image"),
        ("a.webp", b"RIFF\x00\x00\x00\x00WEBPVP8 ", "image"),
        ("a.csv", b"a,b\n1,2\n", "spreadsheet"),
        ("a.xlsx", b"PK\x03\x04rest", "spreadsheet"),
        ("a.docx", b"PK\x03\x04rest", "office"),
        ("a.doc", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1rest", "office"),
        ("notes.md", "# Nadpis – ěščř\n".encode(), "text"),
        ("photo.txt", PNG, "image"),  # the bytes win over the name
    ],
)
def test_the_kind_comes_from_the_file(tmp_path: Path, name: str, content: bytes, kind: str) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    assert probe_file(path).kind == kind


@pytest.mark.parametrize(
    ("name", "content"),
    [("a.txt", b"\x00\x01binary"), ("a.zip", b"PK\x03\x04x"), ("a.svg", b"<svg/>")],
)
def test_files_of_no_known_kind_are_refused(tmp_path: Path, name: str, content: bytes) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(FileRefused):
        probe_file(path)


async def test_download_models_transcribe_and_health(client: MinaraClient) -> None:
    async with client.open_file("chat/files/2026/07/chart.png") as response:
        assert await response.aread() == PNG
    offered = await client.models()
    assert [m.id for m in offered.models] == ["minara-fast", "minara-pro"]
    assert offered.models[1].reasoning and offered.default == "minara-fast"
    heard = await client.transcribe(b"RIFF\x00\x00\x00\x00WAVEfmt ")
    assert (heard.text, heard.file_key) == ("hello there", "chat/files/v.wav")
    assert await client.healthz() is True


async def test_429_carries_retry_after_and_a_page_without_envelope_is_worded(
    client: MinaraClient,
) -> None:
    with pytest.raises(RateLimitedError) as caught:
        await client._send("GET", client.url("limited"))
    assert (
        caught.value.retry_after == 7
        and caught.value.retryable
        and caught.value.message == "Slow down."
    )
    with pytest.raises(ServerError) as page:
        await client._send("GET", client.url("broken"))
    assert page.value.status == 502 and page.value.retryable and "<html>" not in page.value.message
    assert "without a message" in page.value.message


async def test_redirects_are_not_followed_and_the_bearer_stays_home(
    client: MinaraClient, elsewhere: StubServer
) -> None:
    with pytest.raises(ServerError) as caught:
        await client._send("GET", client.url("moved"), params={"to": elsewhere.url("/v1/sessions")})
    assert caught.value.code == "redirect"
    assert not any(r.path == "/v1/sessions" for r in elsewhere.requests)
    async with client.open_file(elsewhere.url("/v1/files/x")) as response:
        assert response.status_code == 200
    assert "authorization" not in elsewhere.requests[-1].headers


async def test_an_unreachable_gateway_is_a_transport_error() -> None:
    async with MinaraClient("http://127.0.0.1:9") as nowhere:
        with pytest.raises(TransportError) as caught:
            await nowhere.healthz()
    assert caught.value.retryable


def test_gateway_addresses() -> None:
    assert gateway_base("localhost:8080") == "http://localhost:8080/"
    assert gateway_base("gw.example.com") == "https://gw.example.com/"
    assert gateway_base("https://gw.example.com/minara") == "https://gw.example.com/minara/"
    for bad in ("http://gw.example.com", "ftp://x", "https://user:pw@gw.example.com", ""):
        with pytest.raises(TalkieError):
            gateway_base(bad)
    client = MinaraClient("https://gw.example.com/minara/")
    assert client.stream_url() == "wss://gw.example.com/minara/v1/stream"
    assert client.url("v1/sessions") == "https://gw.example.com/minara/v1/sessions"
