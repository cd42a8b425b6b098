"""The Cuckoo backend against the reference hub: detection, sign-in by e-mail code (kept in the
token store, ended by logout), threads, account, files up and down, live news, and what a hub
does not offer."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from talkie_tui import backends
from talkie_tui.auth.file_store import FileStore
from talkie_tui.backends.base import Decides, KeptSignIn
from talkie_tui.backends.cuckoo import sign_in
from talkie_tui.backends.cuckoo.backend import (
    CuckooBackend,
    HubSignInNeeded,
    HubThread,
    connect,
)
from talkie_tui.backends.cuckoo.session import CuckooSession
from talkie_tui.chat.turns import AttachmentPart
from talkie_tui.core.errors import TalkieError, UnauthorizedError
from tests.backends.cuckoo.conftest import Hub
from tests.cuckoo_peer.agent import echo
from tests.stub_server import StubServer

pytestmark = pytest.mark.slow


async def test_a_hub_is_detected_after_talkie_and_minara(hub: Hub) -> None:
    person = await hub.person()
    backend = await backends.connect(hub.url, hub_tokens=person.tokens())
    try:
        assert isinstance(backend, CuckooBackend)
        info = backend.info
        assert info.protocol == "cuckoo" and info.sign_in == "email_code"
        assert info.name.startswith("Cuckoo hub · 127.0.0.1:")
        caps = info.capabilities
        assert caps.buttons and caps.attachments and caps.live and caps.stop
        assert not caps.voice and not caps.actions and not caps.questions
        assert info.server_id == hub.url.rstrip("/")
    finally:
        await backend.aclose()
    forced = await backends.connect(hub.url, protocol="cuckoo", hub_tokens=person.tokens())
    await forced.aclose()


async def test_a_hub_without_a_sign_in_asks_for_one(hub: Hub) -> None:
    with pytest.raises(HubSignInNeeded) as wanted:
        await backends.connect(hub.url)
    assert wanted.value.base.rstrip("/") == hub.url.rstrip("/")
    assert "e-mail" in wanted.value.message
    assert isinstance(wanted.value, UnauthorizedError)
    with pytest.raises(HubSignInNeeded) as refused:
        await connect(
            hub.url, tokens=sign_in.SignedIn(hub.url, "ses_tok_nope", "", "", "").tokens()
        )
    assert "sign in again" in refused.value.message


async def test_neither_of_the_three_is_said_clearly() -> None:
    async def healthy(request: Request) -> Response:
        return JSONResponse({"ok": True})

    async def nothing(request: Request) -> Response:
        return JSONResponse({"detail": "Not Found"}, status_code=404)

    app = Starlette(routes=[Route("/healthz", healthy), Route("/{path:path}", nothing)])
    stub = StubServer(app).start()
    try:
        with pytest.raises(backends.NotAServer) as caught:
            await backends.connect(stub.origin)
    finally:
        stub.stop()
    message = caught.value.message
    assert "not a Talkie, Minara or Cuckoo server" in message
    assert "Cuckoo: " in message and "not as a Cuckoo hub" in message


async def test_the_e_mail_code_sign_in_is_kept_then_ended(hub: Hub) -> None:
    email = "Ada@Example.com"
    await sign_in.start(hub.url, email)
    code = hub.codes["ada@example.com"]
    wrong = "000000" if code != "000000" else "111111"
    with pytest.raises(UnauthorizedError):
        await sign_in.verify(hub.url, email, wrong)
    await sign_in.start(hub.url, email)
    signed = await sign_in.verify(hub.url, email, " ".join(hub.codes["ada@example.com"]))
    assert signed.token.startswith("ses_tok_") and signed.token not in repr(signed)
    assert signed.display_name == "ada" and signed.is_new
    store = FileStore()
    await asyncio.to_thread(sign_in.keep, store, signed)
    assert sign_in.kept(hub.url, store) == signed.token
    # The kept session is found like every sign-in: connect needs no token.
    kept = KeptSignIn(lambda: store, "talkie")
    backend = await backends.connect(hub.url, kept=kept)
    try:
        account = await backend.account()
        assert account.user.name == "ada" and account.user.id == signed.user_id
        devices = await backend.devices()  # type: ignore[attr-defined]
        assert [d.name for d in devices if d.current] == [sign_in.default_device_name()]
    finally:
        await backend.aclose()
    out = await sign_in.sign_out(hub.url, store=store)
    assert out.ended and out.forgotten and out.hub_id == signed.hub_id
    assert sign_in.kept(hub.url, store) is None
    with pytest.raises(HubSignInNeeded):
        await connect(hub.url, tokens=signed.tokens())  # the hub ended the session


async def test_threads_are_the_conversations_with_unread_and_status(hub: Hub) -> None:
    person = await hub.person()
    agent = await hub.agent(person, echo, name="Helper Bot")
    quiet = await hub.agent(person, name="Sleepy Bot", connect=False)
    await quiet.peer.post_message(quiet.conversation_id, text="hello from the quiet one")
    backend = await hub.backend(person)
    threads = await backend.threads()
    by_id = {t.id: t for t in threads}
    assert set(by_id) == {agent.conversation_id, quiet.conversation_id}
    first = threads[0]
    assert isinstance(first, HubThread)
    assert first.id == quiet.conversation_id  # its message is the newest
    assert first.title == "Sleepy Bot" and first.unread == 1
    helper = by_id[agent.conversation_id]
    assert isinstance(helper, HubThread)
    assert helper.title == "Helper Bot" and helper.agent_status == "connected"
    assert not helper.away


async def test_files_go_up_with_a_message_and_come_down_signed_in(hub: Hub, tmp_path: Path) -> None:
    person = await hub.person()
    agent = await hub.agent(person, echo)
    backend = await hub.backend(person)
    path = tmp_path / "notes.txt"
    path.write_bytes(b"plain words\n" * 20)
    progress: list[tuple[int, int]] = []
    uploaded = await backend.upload(
        path, progress=lambda sent, total: progress.append((sent, total))
    )
    assert uploaded.key.startswith("med_") and uploaded.filename == "notes.txt"
    assert progress and progress[-1][0] == progress[-1][1] == path.stat().st_size
    session = backend.new_session(agent.conversation_id)
    outgoing = session.prepare("see the file", attachments=[uploaded])
    async for _update in session.send(outgoing):
        pass
    mine = session.conversation.turn(outgoing.hub_message_id or "")
    assert mine is not None
    files = [p for p in mine.parts if isinstance(p, AttachmentPart)]
    assert [f.filename for f in files] == ["notes.txt"] and files[0].url
    assert backend.is_same_origin(files[0].url)
    async with backend.download(files[0].url) as response:
        body = b"".join([chunk async for chunk in response.aiter_bytes()])
    assert body == path.read_bytes()
    with pytest.raises(TalkieError):
        async with backend.download("https://elsewhere.example/v1/client/media/x"):
            pass


async def test_live_news_of_agents_and_other_conversations(hub: Hub) -> None:
    person = await hub.person()
    watched = await hub.agent(person, echo, name="Watched")
    other = await hub.agent(person, name="Other", connect=False)
    backend = await hub.backend(person)
    await backend.threads()  # the backend learns which agent is in which conversation
    live = backend.live()
    first = asyncio.ensure_future(anext(live))
    await backend.feed.wait_ready(5)
    session = backend.new_session(watched.conversation_id)
    follow = session.follow()
    following = asyncio.ensure_future(anext(follow))
    await asyncio.sleep(0.2)
    await other.peer.connect()  # the other agent comes online: its status changes
    update = await asyncio.wait_for(first, 10)
    seen = [update]
    while not any(u.kind == "agent_status" and u.thread_id == other.conversation_id for u in seen):
        seen.append(await asyncio.wait_for(anext(live), 10))
    sent = await other.peer.post_message(other.conversation_id, text="over here")
    assert sent.status_code == 201
    while not any(u.kind == "message_elsewhere" for u in seen):
        seen.append(await asyncio.wait_for(anext(live), 10))
    elsewhere = next(u for u in seen if u.kind == "message_elsewhere")
    assert elsewhere.thread_id == other.conversation_id
    assert elsewhere.detail == sent.json()["message"]["id"]
    following.cancel()
    await follow.aclose()
    await live.aclose()


async def test_what_a_hub_does_not_offer_is_said(hub: Hub) -> None:
    person = await hub.person()
    agent = await hub.agent(person, connect=False)
    backend = await hub.backend(person)
    await agent.peer.post_message(agent.conversation_id, text="before")
    # Deleting a conversation on a hub clears it for the person (the agent keeps it all).
    await backend.delete_thread(agent.conversation_id)
    assert (await backend.client.messages(agent.conversation_id)).messages == ()
    assert not isinstance(backend, Decides)  # actions are talkie/1's
    assert await backend.logo() is None
    session = backend.new_session(agent.conversation_id)
    assert isinstance(session, CuckooSession)
    storage = await backend.storage()
    assert storage.kept_days == 90
