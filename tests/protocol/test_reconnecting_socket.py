"""The one reconnecting socket (`net.websocket.ReconnectingSocket`) over a real loopback server:
what its owner is told, in order, and a close code the owner takes for final."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from websockets.asyncio.client import ClientConnection
from websockets.asyncio.server import Server, ServerConnection, serve

from talkie_tui.protocol.net.websocket import (
    ReconnectingSocket,
    SocketChange,
    SocketEnd,
    SocketLine,
)

FINAL_CLOSE = 4002


class Ended(Exception):
    """The owner's word that the socket must not be opened again."""


class Echoes:
    """A server that says hello on each socket, echoes what it is sent, and closes a socket as
    told: 1000 (reconnect) or FINAL_CLOSE (stop)."""

    def __init__(self) -> None:
        self.sockets: list[ServerConnection] = []
        self.server: Server | None = None

    async def handle(self, socket: ServerConnection) -> None:
        self.sockets.append(socket)
        await socket.send(f"hello {len(self.sockets)}")
        async for frame in socket:
            await socket.send(f"echo {frame!s}")

    @property
    def url(self) -> str:
        assert self.server is not None
        port = next(iter(self.server.sockets)).getsockname()[1]
        return f"ws://127.0.0.1:{port}/"


@pytest.fixture
async def echoes() -> AsyncIterator[Echoes]:
    echoes = Echoes()
    async with serve(echoes.handle, "127.0.0.1", 0) as server:
        echoes.server = server
        yield echoes


class Owner:
    """An owner that sends "hi" on open, keeps the frames, and stops on FINAL_CLOSE."""

    def __init__(self, url: str) -> None:
        self.loop = ReconnectingSocket(SocketLine(url, max_size=4096, delays=(0.0, 0.01)), self)
        self.frames: asyncio.Queue[str | bytes] = asyncio.Queue()
        self.changes: list[SocketChange] = []
        self.ends: list[SocketEnd] = []

    async def connect_once(self) -> ClientConnection | str:
        try:
            return await self.loop.line.open("tok")
        except OSError as error:
            return str(error)

    async def on_open(self, socket: ClientConnection) -> None:
        await socket.send("hi")

    async def on_frame(self, frame: str | bytes) -> None:
        self.frames.put_nowait(frame)

    async def on_end(self, end: SocketEnd) -> str:
        self.ends.append(end)
        if not end.stopped and end.socket.close_code == FINAL_CLOSE:
            raise Ended
        return "lost"

    def on_change(self, change: SocketChange) -> None:
        self.changes.append(change)

    async def take(self, count: int) -> list[str | bytes]:
        return [await asyncio.wait_for(self.frames.get(), 5) for _ in range(count)]


async def test_it_opens_reads_reconnects_and_closes(echoes: Echoes) -> None:
    owner = Owner(echoes.url)
    run = asyncio.create_task(owner.loop.run())
    assert await owner.take(2) == ["hello 1", "echo hi"]
    assert owner.loop.state == "open" and owner.loop.line.connects == 1
    await echoes.sockets[0].close()  # a loss: the owner says why, and it opens again
    assert await owner.take(2) == ["hello 2", "echo hi"]
    await owner.loop.close()
    await asyncio.wait_for(run, 5)
    assert owner.changes == [
        SocketChange("connecting"),
        SocketChange("open"),
        SocketChange("reconnecting", "lost", 0.0),
        SocketChange("open", after_loss=True),
        SocketChange("closed"),
    ]
    assert [end.stopped for end in owner.ends] == [False, True]
    assert owner.loop.socket is None


async def test_a_close_the_owner_takes_for_final_ends_the_loop(echoes: Echoes) -> None:
    owner = Owner(echoes.url)
    run = asyncio.create_task(owner.loop.run())
    await owner.take(2)
    await echoes.sockets[0].close(FINAL_CLOSE)
    with pytest.raises(Ended):
        await asyncio.wait_for(run, 5)
    assert owner.loop.state == "closed" and owner.loop.line.connects == 1


async def test_failed_attempts_are_told_each_with_the_delay() -> None:
    owner = Owner("ws://127.0.0.1:9/")
    run = asyncio.create_task(owner.loop.run())
    while len(owner.changes) < 4:
        await asyncio.sleep(0.01)
    await owner.loop.close()
    await asyncio.wait_for(run, 5)
    lost = owner.changes[1:4]
    assert [change.state for change in lost] == ["reconnecting"] * 3
    assert [change.delay for change in lost] == [0.0, 0.01, 0.01]  # the last delay repeats
    assert [change.after_loss for change in lost] == [False, True, True]  # news once
    assert owner.changes[-1].state == "closed" and owner.loop.line.connects == 0
