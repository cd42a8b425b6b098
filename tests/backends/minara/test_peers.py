"""The Minara backend against two small peers written here with starlette/websockets only:
a gateway of the older SSE revision, and a hostile socket peer that breaks the protocol on
purpose. Each break ends with a clear word, and what the person typed stays."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from talkie_tui.backends.minara.backend import MinaraBackend
from talkie_tui.backends.minara.session import MinaraOutgoing, MinaraSession, MinaraUpdate
from talkie_tui.chat.turns import NoticePart, QuestionPart
from talkie_tui.core.errors import UnauthorizedError
from talkie_tui.core.tokens import StaticToken
from talkie_tui.protocol.minara.client import MinaraClient
from talkie_tui.protocol.minara.errors import EndpointRefused
from talkie_tui.protocol.minara.stream import MinaraStream
from tests.protocol.minara.socket_peer import SocketPeer, event_frame
from tests.stub_server import ANOTHER_LOOPBACK, StubServer

pytestmark = pytest.mark.hostile

SESSION = "sess_abc"


def sse(*events: dict[str, Any]) -> str:
    return "".join(f"data: {json.dumps(e)}\n\n" for e in events)


def ev(kind: str, **data: Any) -> dict[str, Any]:
    return {"type": kind, "data": data}


# --- (a) a gateway of the older revision: the turn in the POST's event stream ----------------

SSE_ROWS: dict[str, Any] = {}


async def old_chat_stream(request: Request) -> Response:
    body = await request.json()
    message = body["message"]
    if message == "cut":
        # The stream stops mid-answer; the session holds the whole answer a moment later.
        SSE_ROWS["rows"] = [
            {"id": body["client_message_id"], "role": "user", "content": message},
            {"id": "turn_1", "role": "assistant", "content": "Whole answer.", "metadata": {}},
        ]
        text = sse(ev("start", session_id=SESSION, turn_id="turn_1"), ev("text_delta", text="Who"))
        return Response(text, media_type="text/event-stream")
    text = sse(
        ev("start", session_id=SESSION),
        ev("text_delta", text="Hello "),
        ev("tool_call_start", id="c1", name="lookup", label="Looking up"),
        ev("tool_call_end", id="c1", ok=True),
        {"type": "llm_delta", "delta": "an event of that revision this client does not know"},
        ev("text_delta", text="from the old gateway."),
        ev("done"),
    )
    return Response(": comment\n\n" + text, media_type="text/event-stream")


async def old_session(request: Request) -> Response:
    return JSONResponse(
        {"session": {"id": SESSION}, "messages": SSE_ROWS.get("rows", []), "is_streaming": False}
    )


@pytest.fixture(scope="module")
def old_gateway() -> Iterator[StubServer]:
    app = Starlette(
        routes=[
            Route("/healthz", lambda r: JSONResponse({"ok": True})),
            Route("/v1/sessions", lambda r: JSONResponse({"sessions": []})),
            Route("/v1/chat/stream", old_chat_stream, methods=["POST"]),
            Route("/v1/sessions/{id}", old_session),
        ]
    )
    server = StubServer(app).start()
    yield server
    server.stop()


async def test_the_older_revision_is_read_as_the_same_events(old_gateway: StubServer) -> None:
    from talkie_tui.backends import connect

    backend = await connect(old_gateway.origin, protocol="minara")
    try:
        session = backend.new_session()
        outgoing = session.prepare("hello")
        updates = [u async for u in session.send(outgoing)]
        assert outgoing.finished and outgoing.thread_id == SESSION
        answer = session.conversation.turns[-1]
        assert answer.text == "Hello from the old gateway." and answer.state == "done"
        assert [json.loads(u.wire or "{}")["type"] for u in updates] == [
            "start",
            "text_delta",
            "tool_call_start",
            "tool_call_end",
            "llm_delta",
            "text_delta",
            "done",
        ]
    finally:
        await backend.aclose()


async def test_an_older_stream_cut_short_is_recovered_from_the_session(
    old_gateway: StubServer,
) -> None:
    async with MinaraClient(old_gateway.origin) as client:
        stream = MinaraStream(client.stream_url())

        async def no_wait(_: float) -> None:
            return None

        session = MinaraSession(client, stream, sleep=no_wait)
        outgoing = session.prepare("cut")
        updates = [u async for u in session.send(outgoing)]
        assert updates[-2].lost and updates[-1].recovered is not None
        assert updates[-1].recovered.complete and outgoing.finished
        assert session.conversation.turns[-1].text == "Whole answer."
        await stream.aclose()


# --- (b) a hostile socket peer ----------------------------------------------------------------


class Hostile:
    """HTTP routes of a gateway on a stub server, its socket a `SocketPeer` in the test loop;
    `events` are what each turn emits, `rows` what the session holds."""

    def __init__(self) -> None:
        self.turn_events: list[dict[str, Any]] = []
        self.rows: list[dict[str, Any]] = []
        self.peer: SocketPeer | None = None
        self.posted: list[dict[str, Any]] = []
        self.loop: asyncio.AbstractEventLoop | None = None

    def app(self) -> Starlette:
        async def chat_stream(request: Request) -> Response:
            body = await request.json()
            self.posted.append(body)
            return JSONResponse({"session_id": SESSION, "kind": "chat", "is_new": True})

        async def session(request: Request) -> Response:
            return JSONResponse(
                {
                    "session": {"id": SESSION},
                    "messages": self.rows,
                    "is_streaming": False,
                    "last_seq": 0,
                }
            )

        async def answer(request: Request) -> Response:
            return JSONResponse({"ok": True})

        return Starlette(
            routes=[
                Route("/healthz", lambda r: JSONResponse({"ok": True})),
                Route("/v1/chat/stream", chat_stream, methods=["POST"]),
                Route("/v1/sessions/{id}", session),
                Route("/v1/interactions/{id}/answer", answer, methods=["POST"]),
                Route("/v1/credentials/{name}", answer, methods=["PUT"]),
            ]
        )


@pytest.fixture
async def hostile() -> AsyncIterator[tuple[Hostile, MinaraBackend]]:
    state = Hostile()
    server = StubServer(state.app()).start()
    async with SocketPeer(token="tok") as peer:
        state.peer = peer
        client = MinaraClient(server.origin, tokens=StaticToken("tok"))
        stream = MinaraStream(peer.url, StaticToken("tok"), dead_after=5)
        backend = MinaraBackend(client, stream, sign_in="token")
        yield state, backend
        await backend.aclose()
    server.stop()


async def play(
    state: Hostile, backend: MinaraBackend, events: list[dict[str, Any]], text: str = "hi there"
) -> tuple[MinaraSession, MinaraOutgoing, list[MinaraUpdate]]:
    """Send `text`; once the client subscribed, the peer emits `events` on its socket."""
    peer = state.peer
    assert peer is not None
    session = backend.new_session()
    outgoing = session.prepare(text)
    updates: list[MinaraUpdate] = []

    async def emit() -> None:
        await asyncio.wait_for(peer.subscribed.wait(), 5)
        for event in events:
            if event.get("type") == "_drop":
                peer.drop()
                await asyncio.sleep(0.05)
                continue
            if event.get("type") == "_close":
                await peer.close_all(event["code"])
                continue
            await peer.emit(SESSION, event["type"], **event.get("data", {}))

    emitter = asyncio.create_task(emit())

    async def read() -> None:
        async for update in session.send(outgoing):
            updates.append(update)

    try:
        await asyncio.wait_for(read(), 10)
    finally:
        emitter.cancel()
    return session, outgoing, updates


def kept_text(session: MinaraSession, text: str = "hi there") -> None:
    first = session.conversation.turns[0]
    assert first.role == "user" and first.text == text


async def test_unknown_frames_events_and_fields_are_skipped(
    hostile: tuple[Hostile, MinaraBackend],
) -> None:
    state, backend = hostile
    assert state.peer is not None
    state.peer.mangle = lambda key, seq, event: [
        json.dumps({"type": "presence", "key": key}),
        event_frame(key, seq, {**event, "extra": {"nested": [1]}}),
    ]
    session, outgoing, _ = await play(
        state,
        backend,
        [
            ev("start", session_id=SESSION, turn_id="t1", mood="odd"),
            ev("sparkle", level=9),
            ev("text_delta", text="fine", colour="red"),
            ev("done"),
        ],
    )
    assert outgoing.finished and session.conversation.turns[-1].text == "fine"


async def test_a_gap_and_a_duplicate_apply_each_event_once(
    hostile: tuple[Hostile, MinaraBackend],
) -> None:
    state, backend = hostile
    assert state.peer is not None
    dropped: set[int] = set()

    def spoil(key: str, seq: int, event: dict[str, Any]) -> list[str]:
        frame = event_frame(key, seq, event)
        if seq == 3 and 3 not in dropped:
            dropped.add(3)
            return []  # a gap, once
        return [frame, frame] if seq == 2 else [frame]  # a duplicate

    state.peer.mangle = spoil
    session, outgoing, updates = await play(
        state,
        backend,
        [ev("start", session_id=SESSION, turn_id="t1")]
        + [ev("text_delta", text=f"{n} ") for n in range(1, 6)]
        + [ev("done")],
    )
    assert outgoing.finished and session.conversation.turns[-1].text == "1 2 3 4 5 "
    assert [u.seq for u in updates if u.seq] == [1, 2, 3, 4, 5, 6, 7]


async def test_a_newer_protocol_version_is_refused_clearly(
    hostile: tuple[Hostile, MinaraBackend],
) -> None:
    state, backend = hostile
    session, outgoing, _ = await play(
        state,
        backend,
        [ev("start", session_id=SESSION, protocol_version=2), ev("text_delta", text="x")],
    )
    assert outgoing.failure is not None and "version 2" in outgoing.failure.message
    notice = session.conversation.turns[-1].parts[-1]
    assert isinstance(notice, NoticePart) and notice.code == "unsupported_protocol_version"
    kept_text(session)


async def test_a_malformed_frame_and_one_over_a_mib_are_said_and_skipped(
    hostile: tuple[Hostile, MinaraBackend],
) -> None:
    state, backend = hostile
    assert state.peer is not None

    def spoil(key: str, seq: int, event: dict[str, Any]) -> list[str]:
        if seq == 2:
            return ["{'this': 'is not json'"]
        if seq == 3:
            return [event_frame(key, seq, ev("text_delta", text="y" * (1 << 20)))]
        return [event_frame(key, seq, event)]

    state.peer.mangle = spoil
    session, outgoing, _ = await play(
        state,
        backend,
        [
            ev("start", session_id=SESSION, turn_id="t1"),
            ev("text_delta", text="lost"),
            ev("text_delta", text="huge"),
            ev("text_delta", text="after"),
            ev("done"),
        ],
    )
    answer = session.conversation.turns[-1]
    notices = [p.text for p in answer.parts if isinstance(p, NoticePart)]
    assert outgoing.finished and answer.text == "after"
    assert len(notices) == 2 and "cannot be read" in notices[0] and "1,048,576" in notices[1]


async def test_a_4401_close_mid_session_asks_for_the_token(
    hostile: tuple[Hostile, MinaraBackend],
) -> None:
    state, backend = hostile
    session = backend.new_session()
    with pytest.raises(UnauthorizedError):
        async with asyncio.timeout(10):
            peer = state.peer
            assert peer is not None

            async def emit() -> None:
                await asyncio.wait_for(peer.subscribed.wait(), 5)
                await peer.emit(SESSION, "start", session_id=SESSION)
                await peer.emit(SESSION, "text_delta", text="partial")
                await peer.close_all(4401, "revoked")

            task = asyncio.create_task(emit())
            outgoing = session.prepare("hi there")
            async for _update in session.send(outgoing):
                pass
    task.cancel()
    kept_text(session)
    assert session.conversation.turns[-1].text == "partial"


async def test_an_endless_turn_can_be_left_while_reconnecting(
    hostile: tuple[Hostile, MinaraBackend],
) -> None:
    state, backend = hostile
    peer = state.peer
    assert peer is not None
    session = backend.new_session()
    outgoing = session.prepare("hi there")
    updates: list[MinaraUpdate] = []

    async def endless() -> None:
        await asyncio.wait_for(peer.subscribed.wait(), 5)
        await peer.emit(SESSION, "start", session_id=SESSION)
        await peer.emit(SESSION, "text_delta", text="and on")
        peer.silent = True  # it answers nothing more, and refuses the next subscribes

        async def refuse(connection: Any, frame: dict[str, Any]) -> bool:
            await connection.close(1011)
            return False

        peer.on_subscribe = refuse
        peer.drop()

    task = asyncio.create_task(endless())
    async with asyncio.timeout(10):
        async for update in session.send(outgoing):
            updates.append(update)
            if update.lost:
                assert session.waiting and session.stop_waiting()
    task.cancel()
    last = updates[-1].recovered
    assert last is not None and not last.complete and last.pending
    assert "stopped waiting" in (last.reason or "")
    kept_text(session)
    assert session.conversation.turns[-1].state == "truncated"


async def test_a_secret_for_another_origin_is_refused(
    hostile: tuple[Hostile, MinaraBackend],
) -> None:
    _state, backend = hostile
    question = QuestionPart(
        "q_1",
        "secret",
        [],
        write_endpoint=f"http://{ANOTHER_LOOPBACK}:8080/v1/credentials/exchange_api_key",
    )
    with pytest.raises(EndpointRefused) as caught:
        await backend.provide_secret(question, "s3cret")
    assert "nothing was sent" in caught.value.message and "s3cret" not in str(caught.value)
