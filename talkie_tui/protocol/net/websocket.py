"""One reconnecting WebSocket: the connection the hub's client socket, Minara's stream and the
bridge's agent link share.

`SocketLine` opens sockets to one URL: ws or wss (with the trust it is given), the system's
proxy unless the host is a loopback one, the bearer in the Authorization header, websockets'
own pings where the protocol has none of its own, a redirect followed or not as asked. It counts
the sockets it opened and waits between attempts with backoff (`Backoff`: each attempt's delay,
the last one repeating, with jitter if asked), woken early by an event.

`ReconnectingSocket` runs the loop over a line: connect, tell the owner it opened (which sends
what its protocol sends first), read frames and hand each to the owner, and when the socket
is lost ask the owner why, back off and connect again, until it is closed. Its owner, one
protocol's client, keeps only its protocol: how to connect and what a refusal means, what to
send on open, how to read a frame, what a close means (raising ends the loop), and what to
make of the changes it is told (`SocketChange`: opened, lost with why, closed).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import ssl
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import httpx
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from talkie_tui.core.tokens import TokenSource
from talkie_tui.core.urls import is_loopback_host
from talkie_tui.core.waiting import wait_event, wait_within
from talkie_tui.protocol.net.http import USER_AGENT
from talkie_tui.protocol.net.pacing import rest_after

__all__ = [
    "Backoff",
    "LineState",
    "ReconnectingSocket",
    "SocketChange",
    "SocketEnd",
    "SocketLine",
    "SocketOwner",
    "close_quietly",
    "ping_every",
    "refreshed",
]

LineState = Literal["idle", "connecting", "open", "reconnecting", "closed"]
"""Where a reconnecting socket is: not started, opening, open, lost and trying again, closed."""
CLOSE_TIMEOUT = 2.0
"""Seconds a socket's closing handshake may take before the connection is dropped."""


class Backoff:
    """The delays before reconnect attempts: one per attempt, the last one repeating (the cap).

    `jitter` spreads each delay by up to that share either way, so that many clients dropped
    at once do not all come back at once.
    """

    def __init__(self, delays: Sequence[float], *, jitter: float = 0.0) -> None:
        self.delays = tuple(delays) or (0.0,)
        self.jitter = jitter
        self.attempt = 0

    def next_delay(self) -> float:
        """The delay before the next attempt (and count the attempt)."""
        delay = self.delays[min(self.attempt, len(self.delays) - 1)]
        if self.jitter:
            delay *= 1.0 - self.jitter + 2 * self.jitter * random.random()  # noqa: S311
        self.attempt += 1
        return delay

    def reset(self) -> None:
        """A socket opened: the next loss starts from the first delay again."""
        self.attempt = 0


class _NoRedirects(connect):
    """websockets' connect, refusing every redirect (it would follow same-origin ones)."""

    def process_redirect(self, exc: Exception) -> Exception | str:
        return exc


class SocketLine:
    """Opens the sockets of one reconnecting WebSocket (see the module docstring)."""

    def __init__(
        self,
        url: str,
        *,
        max_size: int,
        user_agent: str = USER_AGENT,
        open_timeout: float = 10.0,
        ping_interval: float | None = 20.0,
        ping_timeout: float | None = 20.0,
        follow_redirects: bool = True,
        trust: Callable[[], ssl.SSLContext] | None = None,
        delays: Sequence[float] = (0.0,),
        jitter: float = 0.0,
    ) -> None:
        self.url = url
        self.backoff = Backoff(delays, jitter=jitter)
        self._connect = connect if follow_redirects else _NoRedirects
        self._trust = trust
        # The same for every socket of the line; the bearer and the trust are added per socket.
        self._options: dict[str, Any] = {
            "user_agent_header": user_agent,
            "open_timeout": open_timeout,
            "ping_interval": ping_interval,
            "ping_timeout": ping_timeout,
            "close_timeout": CLOSE_TIMEOUT,
            "max_size": max_size,
            "proxy": None if is_loopback_host(httpx.URL(url).host) else True,
        }
        self.connects = 0  # sockets opened so far (tests and a benchmark read it)

    async def open(self, token: str | None, *, url: str | None = None) -> ClientConnection:
        """Open a socket with `token` as the bearer (to `url`, else the line's own URL)."""
        target = url or self.url
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        options = dict(self._options)
        if self._trust is not None and target.startswith("wss:"):
            options["ssl"] = self._trust()
        socket = await self._connect(target, additional_headers=headers, **options)
        self.connects += 1
        self.backoff.reset()
        return socket

    async def pause(self, delay: float, wake: asyncio.Event | None = None) -> None:
        """Wait `delay` seconds before the next attempt (at once when `wake` is set)."""
        if wake is None:
            await asyncio.sleep(delay)
        elif delay:
            await wait_event(wake, delay)


async def ping_every(socket: ClientConnection, interval: float, frame: str) -> None:
    """Send a protocol's own ping `frame` every `interval` seconds, for a protocol whose server
    takes a socket it has not heard from for dead (websockets' pings are control frames)."""
    while True:
        await asyncio.sleep(interval)
        with contextlib.suppress(ConnectionClosed):
            await socket.send(frame)


async def close_quietly(socket: ClientConnection) -> None:
    """Close a socket, briefly; a socket that cannot close cleanly is left to drop."""
    with contextlib.suppress(Exception):
        await wait_within(socket.close(), timeout=CLOSE_TIMEOUT)


async def refreshed(tokens: TokenSource | None, token: str | None) -> bool:
    """True when the token source has a new token after the server refused `token`."""
    if tokens is None or not token:
        return False
    fresh = await tokens.refresh(token)
    return bool(fresh) and fresh != token


@dataclass(frozen=True, slots=True)
class SocketChange:
    """News of a reconnecting socket for its owner: its new `state`; when lost ("reconnecting"),
    why (`reason`, for a person) and the seconds before the next attempt (`delay`).

    `after_loss`: on "open", a loss was told since the socket was last open (it resumed); on
    "reconnecting", this is another failed attempt of a loss already told.
    """

    state: LineState
    reason: str = ""
    delay: float = 0.0
    after_loss: bool = False


@dataclass(frozen=True, slots=True)
class SocketEnd:
    """How a served socket ended: closed (`closed`, websockets' word on it), silent for longer
    than the owner allows (`silent`: the connection was dropped), or `stopped` by its owner
    (closed, idle, cancelled: not a loss, and nothing to reconnect for)."""

    socket: ClientConnection
    closed: ConnectionClosed | None = None
    silent: bool = False
    stopped: bool = False


class SocketOwner(Protocol):
    """The protocol's side of a `ReconnectingSocket`: the hooks it calls."""

    async def connect_once(self) -> ClientConnection | str:
        """One attempt: the open socket, or why not ("" to try again at once, as after a
        refreshed token); raises when trying again cannot help."""

    async def on_open(self, socket: ClientConnection) -> None:
        """A socket opened: send what the protocol sends first (hello, subscribe, resume)."""

    async def on_frame(self, frame: str | bytes) -> None:
        """One frame read from the open socket."""

    async def on_end(self, end: SocketEnd) -> str:
        """A served socket ended (also a stopped one, to tidy up): why it was lost, for a
        person ("" to connect again at once); raises to end the loop."""

    def on_change(self, change: SocketChange) -> None:
        """The socket opened, was lost (each failed attempt) or closed."""


class ReconnectingSocket:
    """Keeps one socket of a `SocketLine` open for its `SocketOwner` (see the module
    docstring).

    `dead_after`: seconds a socket may be silent before it is taken for dead (None: websockets'
    pings watch it). `idle`: an event that stops serving and waiting without closing; the loop
    then goes on while `wanted()`.
    """

    def __init__(
        self,
        line: SocketLine,
        owner: SocketOwner,
        *,
        dead_after: float | None = None,
        idle: asyncio.Event | None = None,
        wanted: Callable[[], bool] = lambda: True,
    ) -> None:
        self.line = line
        self._owner = owner
        self.dead_after = dead_after
        self._idle = idle
        self._wanted = wanted
        self.closing = asyncio.Event()
        self._wake = idle or self.closing
        self.socket: ClientConnection | None = None  # while one is open
        self.state: LineState = "idle"
        self.read_pause = 0.0  # rest after a frame that waited (see net.pacing)
        self._lost = False  # a loss was told since the socket was last open
        self._was_open = False

    async def close(self) -> None:
        """End the loop and close the socket."""
        self.closing.set()
        self.state = "closed"
        socket = self.socket
        if socket is not None:
            await close_quietly(socket)

    async def run(self) -> None:
        """Connect, serve and reconnect until closed, or until not `wanted()` any more (then
        "idle"); raises what the owner's hooks raise."""
        self.line.backoff.reset()  # a new run: the first retry comes at once again
        self._lost = self._was_open = False
        stopped = True
        try:
            while not self.closing.is_set() and self._wanted():
                trying: LineState = "reconnecting" if self._was_open else "connecting"
                if self.state not in (trying, "reconnecting"):
                    self._tell(SocketChange(trying))
                got = await self._owner.connect_once()
                if isinstance(got, str):
                    if got:
                        await self._lose(got)
                    continue
                if self.closing.is_set():
                    await close_quietly(got)  # closed while it opened
                    break
                self.socket = got
                self._tell(SocketChange("open", after_loss=self._lost))
                self._lost, self._was_open = False, True
                end = await self._serve(got)
                reason = await self._owner.on_end(end)
                if end.stopped:
                    continue
                if reason:
                    await self._lose(reason)
                else:
                    self._lost = True  # tried again at once, as after a loss
            stopped = self.closing.is_set()
        finally:
            self.socket = None
            self._tell(SocketChange("closed" if stopped else "idle"))

    def _tell(self, change: SocketChange) -> None:
        self.state = change.state
        self._owner.on_change(change)

    async def _lose(self, reason: str) -> None:
        """Tell the loss, then wait before the next attempt."""
        delay = self.line.backoff.next_delay()
        after_loss, self._lost = self._lost, True
        self._tell(SocketChange("reconnecting", reason, delay, after_loss))
        await self.line.pause(delay, self._wake)

    async def _serve(self, socket: ClientConnection) -> SocketEnd:
        """Serve the open socket until it ends (closed here when its owner stopped it)."""
        try:
            await self._owner.on_open(socket)
            end = await self._read_while_wanted(socket)
        except BaseException:
            # Cancelled (the owner is closing) or a hook failed: tidy up, say goodbye, go.
            self.socket = None
            with contextlib.suppress(Exception):
                await self._owner.on_end(SocketEnd(socket, stopped=True))
            await close_quietly(socket)
            raise
        self.socket = None
        if self.closing.is_set() and not end.stopped:
            end = SocketEnd(socket, end.closed, end.silent, stopped=True)
        if end.stopped:
            await close_quietly(socket)
        return end

    async def _read_while_wanted(self, socket: ClientConnection) -> SocketEnd:
        """Read until the socket ends, or until the owner's `idle` event is set."""
        if self._idle is None:
            return await self._read(socket)
        reader = asyncio.create_task(self._read(socket))
        idle = asyncio.create_task(self._idle.wait())
        try:
            await asyncio.wait({reader, idle}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (idle, reader):
                task.cancel()
            await asyncio.gather(idle, reader, return_exceptions=True)
        if reader.cancelled():
            return SocketEnd(socket, stopped=True)
        return reader.result()

    async def _read(self, socket: ClientConnection) -> SocketEnd:
        """Hand each frame to the owner until the socket closes or goes silent."""
        waited = 0.0
        on_frame = self._owner.on_frame
        while True:
            await rest_after(waited, self.read_pause)
            started = time.perf_counter()
            try:
                if self.dead_after is None:
                    frame = await socket.recv()
                else:
                    # asyncio.timeout, not wait_for: on Python 3.11 wait_for loses a cancel that
                    # comes as a frame arrives, and the reader then outlives the owner's close.
                    async with asyncio.timeout(self.dead_after):
                        frame = await socket.recv()
            except TimeoutError:
                socket.transport.abort()
                return SocketEnd(socket, silent=True)
            except ConnectionClosed as closed:
                return SocketEnd(socket, closed)
            waited = time.perf_counter() - started
            await on_frame(frame)
