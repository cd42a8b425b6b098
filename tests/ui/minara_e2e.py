"""The real `TalkieApp` on the real reference gateway (test mode), for the end-to-end tests.

Every wait is for a condition (`until`), never a fixed sleep taken as the proof; the gateway is
also driven directly over HTTP where another client acts (answers a question, starts a turn,
drops the sockets). `GatewayProxy` stands between the app and the gateway where a test needs the
network itself to fail: a request lost, an answer lost, a request or the socket held up.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from textual.pilot import Pilot

from talkie_tui import backends
from talkie_tui.chat.turns import TextPart, Turn
from talkie_tui.config import KnownServers, Settings
from talkie_tui.core.tokens import StaticToken
from talkie_tui.ui.app import TalkieApp
from talkie_tui.ui.chat.screen import ChatScreen
from talkie_tui.ui.widgets.header import TalkieHeader
from talkie_tui.ui.widgets.question import QuestionView
from tests.helpers import AUTH, TEST_TOKEN
from tests.ui.flows import screen_text, until

__all__ = [
    "SIZE",
    "WAIT",
    "GatewayProxy",
    "answer_text",
    "ask",
    "chat",
    "gateway_app",
    "gateway_http",
    "last_answer",
    "notices",
    "open_question",
    "say",
    "screen_text",
    "session_done",
    "until",
]

SIZE = (120, 40)
WAIT = 20.0  # seconds a condition may take on a loaded two-core machine


async def gateway_app(gateway_url: str, tmp_path: Path) -> TalkieApp:
    """The app on the gateway, its backend connected as `talkie connect` connects it."""
    backend = await backends.connect(gateway_url, protocol="minara", tokens=StaticToken(TEST_TOKEN))
    settings = Settings(downloads_dir=tmp_path / "downloads", token_storage="file")
    known = KnownServers.load(tmp_path / "servers.json")
    return TalkieApp(settings=settings, known=known, backend=backend)


@asynccontextmanager
async def gateway_http(gateway_url: str) -> AsyncIterator[httpx.AsyncClient]:
    """Another client of the same gateway (plain httpx with the token)."""
    async with httpx.AsyncClient(base_url=gateway_url, headers=AUTH, timeout=10) as http:
        yield http


async def chat(app: TalkieApp, pilot: Pilot[None]) -> ChatScreen:
    """The chat screen, once it says "connected"."""
    await until(
        pilot,
        lambda: isinstance(app.screen, ChatScreen) and bool(app.screen.query(TalkieHeader)),
        WAIT,
    )
    screen = app.screen
    assert isinstance(screen, ChatScreen)
    await until(pilot, lambda: screen.header.state == "connected", WAIT)
    return screen


async def say(pilot: Pilot[None], screen: ChatScreen, text: str, *, wait: bool = True) -> None:
    """Type `text` into the composer and press Enter; with `wait`, until its answer ended."""
    screen.composer.focus()
    screen.composer.insert(text)
    turns = len(screen.session.conversation.turns)
    await pilot.press("enter")
    await until(pilot, lambda: len(screen.session.conversation.turns) > turns, WAIT)
    if wait:
        await until(pilot, lambda: not screen.answering, WAIT)
    await pilot.pause()


def notices(app: TalkieApp) -> str:
    """The words of every notification shown so far (with `run_test(notifications=True)`)."""
    return " ".join(str(note.message) for note in app._notifications)


def last_answer(screen: ChatScreen) -> Turn | None:
    """The newest answer of the agent in the conversation on screen."""
    for turn in reversed(screen.session.conversation.turns):
        if turn.role == "assistant":
            return turn
    return None


def answer_text(screen: ChatScreen) -> str:
    """The text of the newest answer, as the reducer holds it."""
    turn = last_answer(screen)
    if turn is None:
        return ""
    return "".join(part.text for part in turn.parts if isinstance(part, TextPart))


async def open_question(pilot: Pilot[None], screen: ChatScreen) -> QuestionView:
    """The one open question on screen, once its input guard is over."""
    await until(pilot, lambda: any(v.is_open for v in screen.transcript.query(QuestionView)), WAIT)
    view = next(v for v in screen.transcript.query(QuestionView) if v.is_open)
    await until(pilot, lambda: not view.is_guarded and view.first_control() is not None, WAIT)
    return view


async def ask(pilot: Pilot[None], screen: ChatScreen, kind: str) -> QuestionView:
    """Send the test message that asks a question of `kind`; its view, ready for an answer."""
    await say(pilot, screen, f"minara-test:question {kind}", wait=False)
    return await open_question(pilot, screen)


async def session_done(http: httpx.AsyncClient, session_id: str, messages: int) -> dict[str, Any]:
    """The session's detail once it holds `messages` rows and no turn runs."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT
    while True:
        detail = (await http.get(f"/v1/sessions/{session_id}")).raise_for_status().json()
        if not detail["is_streaming"] and len(detail["messages"]) >= messages:
            return dict(detail)
        if loop.time() > deadline:
            raise AssertionError(f"session {session_id} did not finish: {detail}")
        await asyncio.sleep(0.05)


# --- the network between the app and the gateway ----------------------------------------------

_REQUEST_LINE = re.compile(rb"^(GET|POST|PUT|DELETE|PATCH) (\S+) HTTP/1\.1\r\n")
_SOCKET_PATH = "/v1/stream"


@dataclass(eq=False)
class _Connection:
    """One client connection through the proxy: its requests waiting for their answers."""

    client: asyncio.StreamWriter
    server: asyncio.StreamWriter
    socket: bool = False  # the stream socket (`GET /v1/stream`), once upgraded
    waiting: deque[tuple[str, bool]] = field(default_factory=deque)  # (request, cut its answer)

    def abort(self) -> None:
        """Cut both sides at once (a reset, no close handshake)."""
        for writer in (self.client, self.server):
            writer.transport.abort()


class GatewayProxy:
    """A TCP proxy on 127.0.0.1 in front of a gateway, run in the test's event loop.

    It carries HTTP and the stream socket unchanged, and notes each answered request as
    ("METHOD /path", status) in `exchanges`. A test makes the network fail where it says:
    `lose_request` (the next request to a path is cut before the gateway sees it),
    `lose_answer` (the gateway gets it and answers, the client gets a cut connection),
    `hold_requests` (requests to a path wait until `release_requests`), `pause_sockets` (what
    the gateway sends on the stream socket waits until `resume_sockets`) and `sockets_down`
    (stream sockets are cut and new ones refused until `sockets_up`; HTTP still goes through).
    """

    def __init__(self, target: str) -> None:
        url = httpx.URL(target)
        self._target = (url.host, url.port or 80)
        self._server: asyncio.Server | None = None
        self._connections: set[_Connection] = set()
        self._lose_request: set[str] = set()
        self._lose_answer: set[str] = set()
        self._held: set[str] = set()
        self._released = asyncio.Event()
        self._flowing = asyncio.Event()
        self._flowing.set()
        self._sockets_down = False
        self.exchanges: list[tuple[str, int]] = []
        self.lost: list[str] = []  # requests cut before they reached the gateway

    async def __aenter__(self) -> GatewayProxy:
        self._server = await asyncio.start_server(self._connection, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._server is not None
        self._server.close()
        self.resume_sockets()
        self.release_requests()
        for connection in list(self._connections):
            connection.abort()

    @property
    def origin(self) -> str:
        """`http://127.0.0.1:port` of the proxy."""
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    def requests(self, what: str) -> list[int]:
        """The statuses answered to `what` ("POST /v1/chat/stream"), in order."""
        return [status for request, status in self.exchanges if request == what]

    # --- faults --------------------------------------------------------------------------

    def lose_request(self, what: str) -> None:
        """Cut the connection of the next `what` ("POST /path") before it is forwarded."""
        self._lose_request.add(what)

    def lose_answer(self, what: str) -> None:
        """Forward the next `what`, and cut the connection instead of passing on its answer."""
        self._lose_answer.add(what)

    def hold_requests(self, what: str) -> None:
        """Keep every `what` ("METHOD /path-prefix") from the gateway until released."""
        self._released.clear()
        self._held.add(what)

    def release_requests(self) -> None:
        """Let the held requests (and later ones) through."""
        self._held.clear()
        self._released.set()

    def pause_sockets(self) -> None:
        """Hold back what the gateway sends on stream sockets once open (a stalled network)."""
        self._flowing.clear()

    def resume_sockets(self) -> None:
        """Pass on what the stream sockets held back, in order."""
        self._flowing.set()

    def sockets_down(self) -> None:
        """Cut every stream socket and refuse new ones; HTTP requests still go through."""
        self._sockets_down = True
        for connection in list(self._connections):
            if connection.socket:
                connection.abort()

    def sockets_up(self) -> None:
        """Let stream sockets connect again."""
        self._sockets_down = False

    # --- carrying the bytes --------------------------------------------------------------

    async def _connection(self, client_in: asyncio.StreamReader, client_out: Any) -> None:
        try:
            server_in, server_out = await asyncio.open_connection(*self._target)
        except OSError:
            client_out.transport.abort()
            return
        connection = _Connection(client_out, server_out)
        self._connections.add(connection)
        forward = asyncio.ensure_future(self._upstream(connection, client_in))
        try:
            await self._downstream(connection, server_in)
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            forward.cancel()
            with contextlib.suppress(asyncio.CancelledError, OSError):
                await forward
            self._connections.discard(connection)
            connection.abort()

    async def _upstream(self, connection: _Connection, client_in: asyncio.StreamReader) -> None:
        with contextlib.suppress(OSError):
            while data := await client_in.read(65536):
                found = None if connection.socket else _REQUEST_LINE.match(data)
                if found is not None:
                    what = f"{found[1].decode()} {found[2].decode().split('?')[0]}"
                    if what.endswith(f" {_SOCKET_PATH}"):
                        connection.socket = True
                        if self._sockets_down:
                            connection.abort()
                            return
                    if what in self._lose_request:
                        self._lose_request.discard(what)
                        self.lost.append(what)
                        connection.abort()
                        return
                    while any(what.startswith(held) for held in self._held):
                        await self._released.wait()
                    cut = what in self._lose_answer
                    self._lose_answer.discard(what)
                    connection.waiting.append((what, cut))
                connection.server.write(data)
                await connection.server.drain()
        if not connection.server.is_closing():
            connection.server.write_eof()  # the client is done sending: so is the proxy

    async def _downstream(self, connection: _Connection, server_in: asyncio.StreamReader) -> None:
        upgraded = False
        while data := await server_in.read(65536):
            if not upgraded and data.startswith(b"HTTP/1.1 ") and connection.waiting:
                what, cut = connection.waiting.popleft()
                status = int(data[9:12])
                self.exchanges.append((what, status))
                upgraded = status == 101
                if cut:
                    return  # the client hears nothing: `finally` cuts the connection
            if connection.socket and upgraded:
                await self._flowing.wait()
            connection.client.write(data)
            await connection.client.drain()
