"""ClientSocket against a small hub socket written here with `websockets` on 127.0.0.1: the
bearer header, pushes in order with unknown and malformed frames skipped, the hub's pings
answered, a drop reported and resumed, refusals that end it, and no redirect followed."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from talkie_tui.core.errors import (
    ForbiddenError,
    NotFoundError,
    ServerError,
    TalkieError,
    UnauthorizedError,
)
from talkie_tui.core.tokens import StaticToken
from talkie_tui.protocol.cuckoo.pushes import (
    ActivityPush,
    AgentStatusPush,
    DeliveryPush,
    MessageDeltaPush,
    MessagePush,
    ReadPush,
    ReadyPush,
    parse_push,
)
from talkie_tui.protocol.cuckoo.socket import ClientSocket, SocketItem, SocketLost, SocketResumed

TOKEN = "ses_tok_socket"
MESSAGE = {
    "id": "msg_1",
    "conversation_id": "cnv_1",
    "sender": {"kind": "agent", "id": "agt_1"},
    "body": {},
    "status": "streaming",
}


def frame(kind: str, **data: Any) -> str:
    return json.dumps({"type": kind, "data": data})


class HubSocket:
    """`/v1/client/socket`: checks the bearer, sends `ready`, then what a test queues."""

    def __init__(self, tokens: set[str] | None = None) -> None:
        self.tokens = tokens if tokens is not None else {TOKEN}
        self.refuse_with: int | None = None
        self.redirect_to: str | None = None
        self.headers: list[Headers] = []
        self.connections: list[ServerConnection] = []
        self.outbox: asyncio.Queue[str] = asyncio.Queue()
        self._server: Server | None = None

    async def __aenter__(self) -> HubSocket:
        self._server = await serve(
            self._handle,
            "127.0.0.1",
            0,
            process_request=self._check,
            ping_interval=0.05,  # the hub pings; the client must answer
            ping_timeout=1,
        )
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    @property
    def url(self) -> str:
        assert self._server is not None
        port = next(iter(self._server.sockets)).getsockname()[1]
        return f"ws://127.0.0.1:{port}/v1/client/socket"

    def _check(self, connection: ServerConnection, request: Request) -> Response | None:
        self.headers.append(request.headers)
        if self.redirect_to is not None:
            response = connection.respond(307, "moved\n")
            response.headers["Location"] = self.redirect_to
            return response
        if self.refuse_with is not None:
            return connection.respond(self.refuse_with, "refused\n")
        if request.headers.get("Authorization") not in {f"Bearer {t}" for t in self.tokens}:
            return connection.respond(401, "missing_credentials\n")
        return None

    async def _handle(self, connection: ServerConnection) -> None:
        self.connections.append(connection)
        await connection.send(frame("ready", user_id="usr_1"))
        closed = asyncio.ensure_future(connection.wait_closed())
        while True:
            next_frame = asyncio.ensure_future(self.outbox.get())
            await asyncio.wait({next_frame, closed}, return_when=asyncio.FIRST_COMPLETED)
            if closed.done():
                next_frame.cancel()
                return
            await connection.send(next_frame.result())

    def drop(self) -> None:
        """Abort every open socket (no close frame)."""
        for connection in self.connections:
            connection.transport.abort()
        self.connections.clear()


async def take(items: AsyncIterator[SocketItem], count: int) -> list[SocketItem]:
    got = []
    async with asyncio.timeout(10):
        while len(got) < count:
            got.append(await anext(items))
    return got


async def test_pushes_arrive_typed_and_in_order() -> None:
    async with HubSocket() as hub:
        socket = ClientSocket(hub.url, StaticToken(TOKEN))
        items = aiter(socket)
        for text in [
            frame("message.started", conversation_id="cnv_1", message=MESSAGE),
            "not json",
            frame("schedule.changed", conversation_id="cnv_1", schedule={}, deleted=False),
            frame("message.delta", conversation_id="cnv_1", message_id="msg_1", text="Hi\x1b[2J"),
            frame("message.delta", conversation_id="cnv_1"),  # malformed: skipped
            json.dumps(["a list"]),
            frame(
                "message.completed",
                conversation_id="cnv_1",
                message={**MESSAGE, "status": "complete"},
            ),
            frame(
                "delivery.updated",
                conversation_id="cnv_1",
                message_id="msg_0",
                delivery_status="delivered",
            ),
            frame(
                "activity",
                conversation_id="cnv_1",
                agent_id="agt_1",
                state="working",
                label="Searching",
            ),
            frame("conversation.read", conversation_id="cnv_1", read_up_to="msg_1"),
            frame("agent.status", agent_id="agt_1", status="unreachable", extra=1),
        ]:
            hub.outbox.put_nowait(text)
        got = await take(items, 8)
        await socket.aclose()
        assert [type(item) for item in got] == [
            ReadyPush,
            MessagePush,
            MessageDeltaPush,
            MessagePush,
            DeliveryPush,
            ActivityPush,
            ReadPush,
            AgentStatusPush,
        ]
        assert isinstance(got[2], MessageDeltaPush) and got[2].text == "Hi"
        assert isinstance(got[1], MessagePush) and got[1].message.streaming
        assert hub.headers[0]["Authorization"] == f"Bearer {TOKEN}"
        assert socket.state == "closed"
        with pytest.raises(StopAsyncIteration):
            await anext(items)


async def test_the_hubs_pings_are_answered() -> None:
    async with HubSocket() as hub:
        socket = ClientSocket(hub.url, StaticToken(TOKEN))
        items = aiter(socket)
        await take(items, 1)
        await asyncio.sleep(0.3)  # six pings of the hub, each needing a pong within 1 s
        hub.outbox.put_nowait(frame("agent.status", agent_id="agt_1", status="idle"))
        assert isinstance((await take(items, 1))[0], AgentStatusPush)
        assert socket.connects == 1 and hub.connections[0].state.name == "OPEN"
        await socket.aclose()


async def test_a_drop_is_reported_then_resumed() -> None:
    async with HubSocket() as hub:
        socket = ClientSocket(hub.url, StaticToken(TOKEN), delays=(0.0, 0.05))
        items = aiter(socket)
        assert isinstance((await take(items, 1))[0], ReadyPush)
        hub.drop()
        lost, resumed, ready = await take(items, 3)
        assert isinstance(lost, SocketLost) and "lost" in lost.reason
        assert isinstance(resumed, SocketResumed) and isinstance(ready, ReadyPush)
        assert socket.connects == 2 and socket.state == "open"
        await socket.aclose()


async def test_it_keeps_trying_while_the_hub_is_away() -> None:
    async with HubSocket() as hub:
        hub.refuse_with = 503
        socket = ClientSocket(hub.url, StaticToken(TOKEN), delays=(0.0, 0.02))
        items = aiter(socket)
        (lost,) = await take(items, 1)
        assert isinstance(lost, SocketLost) and "HTTP 503" in lost.reason
        back = asyncio.create_task(take(items, 2))  # it retries while its consumer waits
        while len(hub.headers) < 3:
            await asyncio.sleep(0.01)
        hub.refuse_with = None
        resumed, ready = await back
        assert isinstance(resumed, SocketResumed) and isinstance(ready, ReadyPush)
        await socket.aclose()


async def test_an_unreachable_hub_is_lost_until_closed() -> None:
    socket = ClientSocket("ws://127.0.0.1:9/v1/client/socket", delays=(10.0,))
    items = aiter(socket)
    (lost,) = await take(items, 1)
    assert isinstance(lost, SocketLost) and "Could not connect" in lost.reason
    assert socket.state == "reconnecting"
    closing = asyncio.create_task(anext(items, None))
    await asyncio.sleep(0.05)
    await socket.aclose()  # wakes the wait between attempts
    assert await asyncio.wait_for(closing, 2) is None


class Rotating:
    """A token source whose refresh gives a new token (once)."""

    def __init__(self, first: str, fresh: str | None) -> None:
        self.current, self.fresh, self.refreshed = first, fresh, 0

    async def token(self) -> str | None:
        return self.current

    async def refresh(self, rejected: str) -> str | None:
        self.refreshed += 1
        if self.fresh is not None:
            self.current = self.fresh
        return self.fresh


async def test_a_refused_token_is_refreshed_once() -> None:
    async with HubSocket() as hub:
        tokens = Rotating("ses_tok_old", TOKEN)
        socket = ClientSocket(hub.url, tokens)
        assert isinstance((await take(aiter(socket), 1))[0], ReadyPush)
        assert tokens.refreshed == 1
        assert [h["Authorization"] for h in hub.headers] == [
            "Bearer ses_tok_old",
            f"Bearer {TOKEN}",
        ]
        await socket.aclose()


@pytest.mark.parametrize(
    ("status", "kind"),
    [(401, UnauthorizedError), (403, ForbiddenError), (404, NotFoundError)],
)
async def test_refusals_that_retrying_cannot_help(status: int, kind: type[ServerError]) -> None:
    async with HubSocket() as hub:
        hub.refuse_with = status
        socket = ClientSocket(hub.url, Rotating("ses_tok_old", None))
        with pytest.raises(kind) as refused:
            await take(aiter(socket), 1)
        assert refused.value.status == status and not refused.value.retryable
        assert socket.state == "closed"


async def test_no_redirect_is_followed() -> None:
    async with HubSocket() as target, HubSocket() as hub:
        hub.redirect_to = target.url  # the same host: websockets alone would follow it
        socket = ClientSocket(hub.url, StaticToken(TOKEN))
        with pytest.raises(ServerError) as refused:
            await take(aiter(socket), 1)
        assert refused.value.code == "redirect"
        assert target.headers == []


def test_only_websocket_addresses_and_plain_only_on_loopback() -> None:
    with pytest.raises(TalkieError, match="not a WebSocket address"):
        ClientSocket("https://hub.example.com/v1/client/socket")
    with pytest.raises(TalkieError, match="without TLS"):
        ClientSocket("ws://hub.example.com/v1/client/socket")
    assert ClientSocket("ws://hub.example.com/x", allow_plain=True).state == "idle"
    assert ClientSocket("wss://hub.example.com/v1/client/socket").state == "idle"


async def test_a_closed_socket_before_iterating_ends_at_once() -> None:
    socket = ClientSocket("ws://127.0.0.1:9/v1/client/socket")
    await socket.aclose()
    assert [item async for item in socket] == []


class ClosedWhileOpening(ClientSocket):
    async def _open(self, token: str | None) -> Any:
        connection = await super()._open(token)
        self._closing.set()  # aclose() came while the handshake ran
        return connection


async def test_closed_while_opening() -> None:
    async with HubSocket() as hub:
        socket = ClosedWhileOpening(hub.url, StaticToken(TOKEN))
        assert [item async for item in socket] == []
        assert socket.state == "closed" and socket.connects == 1


def test_parse_push_reads_mappings_and_bytes() -> None:
    assert isinstance(parse_push({"type": "ready", "data": {}}), ReadyPush)
    assert isinstance(parse_push(b'{"type": "ready", "data": {"user_id": "u"}}'), ReadyPush)
    assert parse_push({"type": "ready"}) is None
    assert parse_push({"type": 3, "data": {}}) is None
    assert parse_push("[" * 100_000) is None
