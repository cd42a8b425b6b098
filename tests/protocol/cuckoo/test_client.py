"""CuckooClient over real HTTP on 127.0.0.1 against the stub hub: every route, the error
envelope and each error class, idempotent sends, uploads and downloads, and the bearer kept to
the hub's origin (another origin is another port on 127.0.0.1)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from talkie_tui.core.errors import (
    AddressRefused,
    ConflictError,
    ForbiddenError,
    NotFoundError,
    RateLimitedError,
    ServerError,
    TalkieError,
    TransportError,
    UnauthorizedError,
)
from talkie_tui.core.tokens import StaticToken
from talkie_tui.protocol.cuckoo import client as client_module
from talkie_tui.protocol.cuckoo.client import (
    CuckooClient,
    default_device_name,
    hub_base,
    new_idempotency_key,
)
from talkie_tui.protocol.cuckoo.files import FileRefused, check_count, probe_upload
from tests.protocol.conftest import Serve
from tests.protocol.cuckoo.stub_hub import CODE, TOKEN, StubHub
from tests.stub_server import StubServer


@pytest.fixture
def hub() -> StubHub:
    return StubHub()


@pytest.fixture
def hub_server(hub: StubHub, serve: Serve) -> StubServer:
    return serve(hub.app())


@pytest.fixture
def elsewhere(serve: Serve) -> StubServer:
    """Another origin on 127.0.0.1 (another port), which answers everything with 200."""

    async def anything(request: Request) -> Response:
        return JSONResponse({"conversation": {"id": "cnv_elsewhere"}})

    return serve(Starlette(routes=[Route("/{path:path}", anything)]))


@pytest.fixture
async def client(hub_server: StubServer) -> AsyncIterator[CuckooClient]:
    async with CuckooClient(hub_server.origin, tokens=StaticToken(TOKEN)) as client:
        yield client


@pytest.fixture(autouse=True)
def no_retry_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client_module, "SEND_RETRY_DELAY", 0.0)


# --- sign-in ---------------------------------------------------------------------------------


async def test_email_sign_in_and_logout(hub_server: StubServer) -> None:
    async with CuckooClient(hub_server.origin) as anonymous:
        await anonymous.start_email_sign_in("  Priya@Example.com ")
        result = await anonymous.verify_email_code("priya@example.com", f" {CODE} ")
    assert result.token == TOKEN
    assert TOKEN not in repr(result)  # the session token is shown nowhere
    assert result.session.id == "ses_1" and result.session.expires_at is not None
    assert result.user.display_name == "Priya"  # its OSC title sequence stripped
    start, verify = hub_server.requests[0], hub_server.requests[1]
    assert "authorization" not in start.headers
    assert start.json() == {"email": "Priya@Example.com"}
    assert verify.json() == {
        "email": "priya@example.com",
        "code": CODE,
        "device_name": default_device_name(),
    }
    async with CuckooClient(hub_server.origin, tokens=StaticToken(result.token)) as signed_in:
        await signed_in.logout()
    assert hub_server.requests[-1].headers["authorization"] == f"Bearer {TOKEN}"


async def test_device_name_is_one_clean_line(hub_server: StubServer) -> None:
    assert default_device_name().startswith("talkie on ")
    async with CuckooClient(hub_server.origin) as anonymous:
        await anonymous.verify_email_code("a@b.c", CODE, "my\nlaptop\x1b[31m " + "x" * 100)
    name = hub_server.requests[-1].json()["device_name"]
    assert name.startswith("my laptop x") and len(name) == 80


async def test_sign_in_errors(hub_server: StubServer) -> None:
    async with CuckooClient(hub_server.origin) as anonymous:
        with pytest.raises(UnauthorizedError) as wrong:
            await anonymous.verify_email_code("a@b.c", "000000")
        with pytest.raises(RateLimitedError) as busy:
            await anonymous.start_email_sign_in("busy@example.com")
        with pytest.raises(UnauthorizedError):
            await anonymous.logout()
    assert wrong.value.code == "invalid_code" and not wrong.value.retryable
    assert wrong.value.message == "That code is wrong or expired."
    assert busy.value.retryable and busy.value.retry_after == 120
    assert busy.value.code == "too_many_codes" and busy.value.request_id == "req_429"


# --- the person ------------------------------------------------------------------------------


async def test_me_storage_and_devices(client: CuckooClient, hub: StubHub) -> None:
    me = await client.me()
    assert me.id == "usr_01" and me.display_name == "Priya" and me.locale == "en"
    storage = await client.storage()
    assert storage.media.used_bytes == 1234 and storage.messages.kept_days == 90
    assert storage.messages.kept_since is not None
    devices = await client.devices()
    assert [device.id for device in devices] == ["ses_1", "ses_2"]  # the row without id dropped
    assert devices[0].current and devices[1].name == "phone" and devices[1].created_at is None
    await client.end_device("ses_2")
    with pytest.raises(NotFoundError) as gone:
        await client.end_device("ses_2")
    assert gone.value.code == "device_not_found" and gone.value.status == 404
    hub.devices.append({"id": "ses_3", "name": "x", "current": False})
    await client.end_other_devices()
    assert [device.id for device in await client.devices()] == ["ses_1"]


async def test_a_missing_session_is_unauthorized(hub_server: StubServer) -> None:
    async with CuckooClient(hub_server.origin, tokens=StaticToken("ses_tok_wrong")) as client:
        with pytest.raises(UnauthorizedError) as refused:
            await client.me()
    assert refused.value.status == 401 and refused.value.code == "invalid_credentials"
    assert refused.value.request_id == "req_401" and not refused.value.retryable


# --- conversations and messages --------------------------------------------------------------


async def test_conversations_and_one_conversation(client: CuckooClient) -> None:
    listed = await client.conversations()
    assert [conversation.id for conversation in listed] == ["cnv_01"]  # unreadable rows dropped
    conversation = await client.conversation("cnv_01")
    assert conversation.unread_count == 2 and conversation.kind == "dm"
    assert [member.id for member in conversation.participants] == ["usr_01", "agt_01"]
    assert [agent.display_name for agent in conversation.agents()] == ["Helper"]
    assert conversation.last_message is not None and conversation.last_message.id == "msg_007"


async def test_paging_back_and_forward(client: CuckooClient) -> None:
    newest = await client.messages("cnv_01", limit=3)
    assert [m.id for m in newest.messages] == ["msg_007", "msg_006", "msg_005"]  # newest first
    assert newest.next_before == "msg_005" and not newest.trimmed
    older = await client.messages("cnv_01", before=newest.next_before, limit=10)
    assert [m.id for m in older.messages] == ["msg_004", "msg_003", "msg_002", "msg_001"]
    assert older.next_before is None and older.trimmed
    gap = await client.messages("cnv_01", after="msg_002", limit=2)
    assert [m.id for m in gap.messages] == ["msg_003", "msg_004"]  # oldest first
    assert gap.next_after == "msg_004"
    with pytest.raises(ValueError):
        await client.messages("cnv_01", limit=101)


async def test_send_with_attachments_and_reply(
    client: CuckooClient, hub_server: StubServer
) -> None:
    sent = await client.send("cnv_01", "Hello", attachments=["med_photo"], reply_to="msg_007")
    assert sent.sender.kind == "user" and sent.body.text == "Hello"
    assert sent.body.attachments[0].media_id == "med_photo"
    assert sent.reply_to is not None and sent.reply_to.text_preview == "message 7"
    body = hub_server.requests[-1].json()
    assert body["idempotency_key"].startswith("talkie-")
    assert set(body) == {"text", "attachments", "reply_to", "idempotency_key"}


async def test_send_is_idempotent(client: CuckooClient, hub_server: StubServer) -> None:
    key = new_idempotency_key()
    first = await client.send("cnv_01", "once", idempotency_key=key)
    again = await client.send("cnv_01", "once", idempotency_key=key)
    assert first == again
    assert new_idempotency_key() != key
    with pytest.raises(ConflictError) as reused:
        await client.send("cnv_02", "once", idempotency_key=key)
    assert reused.value.code == "idempotency_key_reused" and reused.value.status == 409


async def test_a_failed_send_is_tried_again_with_the_same_key(
    client: CuckooClient, hub_server: StubServer
) -> None:
    sent = await client.send("cnv_flaky", "please arrive")
    posts = [r for r in hub_server.requests if r.method == "POST"]
    assert len(posts) == 2
    assert posts[0].json()["idempotency_key"] == posts[1].json()["idempotency_key"]
    assert sent.body.text == "please arrive"


async def test_a_rate_limited_send_is_not_repeated(
    client: CuckooClient, hub_server: StubServer
) -> None:
    with pytest.raises(RateLimitedError) as limited:
        await client.send("cnv_limited", "too fast")
    assert limited.value.retryable and limited.value.retry_after == 3
    assert len([r for r in hub_server.requests if r.method == "POST"]) == 1


async def test_too_many_files_are_refused_before_sending(
    client: CuckooClient, hub_server: StubServer
) -> None:
    with pytest.raises(FileRefused):
        await client.send("cnv_01", "many", attachments=[f"med_{n}" for n in range(11)])
    assert hub_server.requests == []
    await client.send("cnv_01", "an empty key", idempotency_key="")  # a fresh one is made
    assert hub_server.requests[-1].json()["idempotency_key"].startswith("talkie-")


async def test_tap_stop_and_read(client: CuckooClient, hub_server: StubServer) -> None:
    tapped = await client.tap("cnv_01", "raise", "msg_007")
    assert tapped.body.text == "Raise complaint"
    assert tapped.body.action is not None and tapped.body.action.button_id == "raise"
    body = hub_server.requests[-1].json()
    assert body["action"] == {"button_id": "raise", "source_message_id": "msg_007"}
    assert set(body) == {"action", "idempotency_key"}
    stopped = await client.stop("cnv_01")
    assert [m.id for m in stopped] == ["msg_050"] and stopped[0].stopped
    await client.read("cnv_01", "msg_007")
    assert hub_server.requests[-1].json() == {"message_id": "msg_007"}


@pytest.mark.parametrize(
    ("conversation_id", "kind", "status", "code", "retryable"),
    [
        ("cnv_nope", NotFoundError, 404, "conversation_not_found", False),
        ("cnv_secret", ForbiddenError, 403, "not_participant", False),
        ("cnv_clash", ConflictError, 409, "conflict_here", False),
        ("cnv_boom", ServerError, 500, "internal", True),
        ("cnv_proxy", ServerError, 502, "upstream_unavailable", True),
    ],
)
async def test_error_classes(
    client: CuckooClient,
    conversation_id: str,
    kind: type[ServerError],
    status: int,
    code: str,
    retryable: bool,
) -> None:
    with pytest.raises(kind) as caught:
        await client.conversation(conversation_id)
    error = caught.value
    assert (error.status, error.code, error.retryable) == (status, code, retryable)
    if conversation_id == "cnv_proxy":
        assert error.message == "The hub answered HTTP 502 Bad Gateway without a message."
        assert error.request_id is None
    else:
        assert error.request_id == f"req_{status}"


async def test_unknown_fields_are_refused_with_their_field(client: CuckooClient) -> None:
    # The client never sends one; the envelope's field reaches the error when a hub names it.
    with pytest.raises(ServerError) as refused:
        await client._send("POST", client.url("v1/client/conversations/cnv_01/read"), body={"x": 1})
    assert refused.value.status == 422 and refused.value.field == "x"
    assert refused.value.code == "unknown_field" and not refused.value.retryable


# --- the bearer stays home -------------------------------------------------------------------


async def test_no_redirect_is_followed(
    client: CuckooClient, hub: StubHub, elsewhere: StubServer
) -> None:
    hub.moved_to = elsewhere.url("/v1/client/conversations/cnv_01")
    with pytest.raises(ServerError) as refused:
        await client.conversation("cnv_moved")
    assert refused.value.code == "redirect" and elsewhere.origin in refused.value.message
    assert elsewhere.requests == []


async def test_no_bearer_after_a_cross_origin_redirect(
    hub_server: StubServer, hub: StubHub, elsewhere: StubServer
) -> None:
    # Even an httpx client told to follow redirects does not take the bearer along.
    hub.moved_to = elsewhere.url("/v1/client/conversations/cnv_01")
    async with httpx.AsyncClient(follow_redirects=True) as http:
        client = CuckooClient(hub_server.origin, tokens=StaticToken(TOKEN), http=http)
        with pytest.raises(ServerError):
            await client.conversation("cnv_moved")
    assert elsewhere.requests == []


async def test_the_bearer_goes_to_the_hub_origin_only(
    hub_server: StubServer, elsewhere: StubServer
) -> None:
    async with CuckooClient(hub_server.origin, tokens=StaticToken(TOKEN)) as client:
        assert client.is_same_origin("/v1/client/media/med_1")
        assert not client.is_same_origin(elsewhere.url("/x"))
        await client._send("GET", elsewhere.url("/v1/client/me"))
    assert "authorization" not in elsewhere.requests[-1].headers


def test_hub_addresses() -> None:
    assert hub_base("localhost:8080") == "http://localhost:8080/"
    assert hub_base("hub.example.com") == "https://hub.example.com/"
    assert hub_base("https://hub.example.com/cuckoo#x") == "https://hub.example.com/cuckoo/"
    for bad in ("http://hub.example.com", "ftp://x", "https://user:pw@hub.example.com", ""):
        with pytest.raises(AddressRefused):
            hub_base(bad)
    with pytest.raises(AddressRefused):
        CuckooClient("http://hub.example.com")
    with pytest.raises(AddressRefused):
        CuckooClient("http://192.168.1.5:8080")
    assert CuckooClient("http://192.168.1.5:8080", allow_private_http=True).origin
    client = CuckooClient("https://hub.example.com/cuckoo/")
    assert client.socket_url() == "wss://hub.example.com/cuckoo/v1/client/socket"
    assert CuckooClient("http://127.0.0.1:9").socket_url() == "ws://127.0.0.1:9/v1/client/socket"
    assert client.media_url("med_1", "thumb").endswith("/v1/client/media/med_1?variant=thumb")
    assert client.media_url("..").endswith("/v1/client/media/%2E%2E")


async def test_an_unreachable_hub_is_a_transport_error() -> None:
    async with CuckooClient("http://127.0.0.1:9", tokens=StaticToken(TOKEN)) as nowhere:
        with pytest.raises(TransportError) as caught:
            await nowhere.me()
        with pytest.raises(TransportError):
            await nowhere.send("cnv_01", "hi")  # tried twice, then given up
    assert caught.value.retryable


async def test_an_unreadable_answer_names_the_route(serve: Serve) -> None:
    async def me(request: Request) -> Response:
        return Response("not json", media_type="application/json")

    async def devices(request: Request) -> Response:
        return JSONResponse({"devices": "none"})

    async def conversation(request: Request) -> Response:
        return JSONResponse({"conversation": {"kind": "dm"}})

    routes = [
        Route("/v1/client/me", me),
        Route("/v1/client/devices", devices),
        Route("/v1/client/conversations/{id}", conversation),
    ]
    server = serve(Starlette(routes=routes))
    async with CuckooClient(server.origin) as client:
        with pytest.raises(TalkieError, match=r"'v1/client/me' is unreadable \(not JSON\)"):
            await client.me()
        assert await client.devices() == []
        with pytest.raises(TalkieError, match="conversations/cnv_1' is unreadable"):
            await client.conversation("cnv_1")


# --- media -----------------------------------------------------------------------------------


async def test_upload_raw_with_progress(client: CuckooClient, hub: StubHub, tmp_path: Path) -> None:
    photo = tmp_path / "holiday photo.png"
    photo.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 600)
    seen: list[tuple[int, int]] = []
    media = await client.upload(photo, progress=lambda sent, total: seen.append((sent, total)))
    size = photo.stat().st_size
    assert media.kind == "image" and media.byte_size == size and media.id == "med_1"
    assert media.file_name == "holiday photo.png" and media.mime_type == "image/png"
    query, body = hub.uploads[0]
    assert query == {"name": "holiday photo.png"} and body == photo.read_bytes()
    assert seen[0] == (0, size) and seen[-1] == (size, size)
    assert await client.download(media.id) == photo.read_bytes()


async def test_download_variants_limits_and_errors(
    client: CuckooClient, hub_server: StubServer
) -> None:
    assert (await client.download("med_photo")).startswith(b"\x89PNG")
    assert await client.download("med_photo", "thumb") == b"\xff\xd8\xffthumb"
    with pytest.raises(TransportError, match="larger than 0 MiB") as big:
        await client.download("med_photo", limit=100)
    assert not big.value.retryable
    with pytest.raises(NotFoundError) as gone:
        await client.download("med_gone")
    assert gone.value.code == "media_not_found"
    async with client.open_media("med_photo") as response:
        chunks = [chunk async for chunk in response.aiter_bytes()]
    assert b"".join(chunks).startswith(b"\x89PNG")
    assert hub_server.requests[-1].headers["authorization"] == f"Bearer {TOKEN}"


def test_probing_files(tmp_path: Path) -> None:
    cases = {
        "a.png": (b"\x89PNG\r\n\x1a\n" + b"\0" * 20, "image", "image/png"),
        "voice.ogg": (b"OggS" + b"\0" * 20, "audio", "audio/ogg"),
        "v.wav": (b"RIFF\0\0\0\0WAVEfmt ", "audio", "audio/wav"),
        "s.mp3": (b"ID3\x03" + b"\0" * 20, "audio", "audio/mpeg"),
        "s.flac": (b"fLaC" + b"\0" * 20, "audio", "audio/flac"),
        "m.m4a": (b"\0\0\0\x20ftypM4A " + b"\0" * 20, "audio", "audio/mp4"),
        "clip.mp4": (b"\0\0\0\x20ftypisom" + b"\0" * 20, "video", "video/mp4"),
        "clip.webm": (b"\x1a\x45\xdf\xa3" + b"\0" * 20, "video", "video/webm"),
        "notes.md": (b"# hello", "file", "text/markdown"),
        "report.pdf": (b"%PDF-1.7", "file", "application/pdf"),
        "blob.bin": (b"\0\1\2\3", "file", "application/octet-stream"),
        "tool.tar": (b"\0\1\2\3", "file", "application/x-tar"),
    }
    for name, (data, kind, media_type) in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        probed = probe_upload(path)
        assert (probed.kind, probed.media_type, probed.size) == (kind, media_type, len(data))
    big = tmp_path / "big.png"
    with big.open("wb") as file:
        file.write(b"\x89PNG\r\n\x1a\n")
        file.truncate(16 * 1024 * 1024 + 1)
    with pytest.raises(FileRefused, match=r"big\.png is 16\.0 MiB; the hub takes image files"):
        probe_upload(big)
    with pytest.raises(FileRefused, match="cannot be read"):
        probe_upload(tmp_path / "missing.txt")
    check_count(10)
    with pytest.raises(FileRefused):
        check_count(11)
