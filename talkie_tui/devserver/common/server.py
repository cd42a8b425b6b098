"""Running a server's Starlette app under uvicorn: in a background thread, or in the foreground.

A server hands in how to make its app (called once the socket is bound) and how to make the
app's open event streams end, so that a shutdown does not wait for them.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from types import FrameType
from typing import Any

import uvicorn
from starlette.applications import Starlette
from websockets.exceptions import InvalidState

AppFactory = Callable[[], Starlette]
StreamStopper = Callable[[Starlette], None]

STARTUP_TIMEOUT = 15.0
SHUTDOWN_TIMEOUT = 10.0


class _Server(uvicorn.Server):
    """uvicorn.Server that reports readiness and ends event streams when asked to exit."""

    def __init__(
        self,
        config: uvicorn.Config,
        app: Starlette,
        on_ready: Callable[[], None],
        stop_streams: StreamStopper,
    ):
        super().__init__(config)
        self._app = app
        self._on_ready = on_ready
        self._stop_streams = stop_streams
        self._loop: asyncio.AbstractEventLoop | None = None
        self._exit_requested: asyncio.Event | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        """Start serving, then report readiness."""
        self._loop = asyncio.get_running_loop()
        self._exit_requested = asyncio.Event()
        await super().startup(sockets=sockets)
        if self.started:
            self._on_ready()

    async def main_loop(self) -> None:
        """uvicorn's tick loop, but woken at once by an exit request instead of polling."""
        # uvicorn sleeps 0.1 s between checks of should_exit; tests start hundreds of servers.
        assert self._exit_requested is not None
        counter = 0
        while not await self.on_tick(counter):
            counter = (counter + 1) % 864_000
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(0.1):  # not wait_for: it can lose a cancel on 3.11
                    await self._exit_requested.wait()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """uvicorn's shutdown, done as soon as the connections and their tasks have ended."""
        # uvicorn gives the connections a fixed 0.1 s, then polls every 0.1 s: a tenth of a
        # second or two at the end of each of the thousands of servers the tests start.
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        for connection in list(self.server_state.connections):
            # A WebSocket already closing raises here (uvicorn's own shutdown lets it end the
            # server's thread, its lifespan not shut down): it is closing anyway.
            with contextlib.suppress(InvalidState):
                connection.shutdown()
        state = self.server_state
        try:
            async with asyncio.timeout(self.config.timeout_graceful_shutdown):
                # uvicorn's sets of connections and tasks have no event to wait on.
                while (state.connections or state.tasks) and not self.force_exit:  # noqa: ASYNC110
                    await asyncio.sleep(0.005)
                for server in self.servers:
                    await server.wait_closed()
        except TimeoutError:
            for task in state.tasks:
                task.cancel(msg="Task cancelled, timeout graceful shutdown exceeded")
        if not self.force_exit:
            await self.lifespan.shutdown()

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        """Exit on a signal (or a call from another thread): end the open streams first."""
        self._stop_streams(self._app)
        super().handle_exit(sig, frame)
        if self._loop is not None and self._exit_requested is not None:
            with contextlib.suppress(RuntimeError):  # the loop has already finished
                self._loop.call_soon_threadsafe(self._exit_requested.set)


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on host:port (port 0 picks a free one)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto must be IPPROTO_TCP (not 0): asyncio only sets TCP_NODELAY on accepted sockets whose
    # proto says TCP, and without it every small response waits ~40 ms for a delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def base_url(host: str, sock: socket.socket) -> str:
    """`http://host:port` clients should use (wildcard hosts are reached via loopback)."""
    port = sock.getsockname()[1]
    if host in ("", "0.0.0.0"):  # noqa: S104 - only read here, never bound
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}"


def _make_server(
    make_app: AppFactory,
    stop_streams: StreamStopper,
    on_ready: Callable[[], None],
    graceful_seconds: int,
    options: Mapping[str, Any] | None,
) -> _Server:
    app = make_app()
    settings: dict[str, Any] = {
        # h11 and asyncio's loop unless a server asks for others (the Cuckoo hub asks for
        # httptools and uvloop): uvicorn's "auto" would switch every server to those as soon
        # as they are installed, and they answer malformed requests differently.
        "http": "h11",
        "loop": "asyncio",
        **dict(options or {}),
    }
    uv_config = uvicorn.Config(
        app,
        log_level="warning",
        lifespan="on",
        # The sans-I/O implementation of `websockets`: its legacy one warns of deprecation.
        ws="websockets-sansio",
        timeout_graceful_shutdown=graceful_seconds,
        **settings,
    )
    return _Server(uv_config, app, on_ready, stop_streams)


@contextmanager
def serve_in_thread(
    make_app: AppFactory,
    host: str,
    port: int,
    *,
    stop_streams: StreamStopper,
    options: Mapping[str, Any] | None = None,
) -> Iterator[str]:
    """Run the app in a background thread; yields its base URL and stops it on exit.

    `options` are further `uvicorn.Config` settings (a hub's WebSocket pings and frame cap).
    """
    sock = bind_socket(host, port)
    ready = threading.Event()
    server = _make_server(make_app, stop_streams, ready.set, graceful_seconds=2, options=options)
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name="talkie-devserver", daemon=True
    )
    try:
        thread.start()
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while not ready.wait(0.02):
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the talkie devserver failed to start")
        yield base_url(host, sock)
    finally:
        if thread.is_alive():
            server.handle_exit(signal.SIGTERM, None)
            thread.join(SHUTDOWN_TIMEOUT)
        sock.close()


def run_forever(
    make_app: AppFactory,
    host: str,
    port: int,
    on_ready: Callable[[str], None],
    *,
    stop_streams: StreamStopper,
    options: Mapping[str, Any] | None = None,
) -> None:
    """Serve until Ctrl+C, then return; `on_ready(url)` is called once the server accepts."""
    sock = bind_socket(host, port)
    url = base_url(host, sock)
    server = _make_server(
        make_app, stop_streams, lambda: on_ready(url), graceful_seconds=5, options=options
    )
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass  # uvicorn re-raises the captured SIGINT after its clean shutdown
    finally:
        sock.close()
