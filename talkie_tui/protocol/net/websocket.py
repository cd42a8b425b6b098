"""One reconnecting WebSocket: the connection side the hub's client socket, Minara's stream and
the bridge's agent link share.

`SocketLine` opens sockets to one URL: ws or wss (with the trust it is given), the system's
proxy unless the host is a loopback one, the bearer in the Authorization header, websockets'
own pings where the protocol has none of its own, a redirect followed or not as asked. It counts
the sockets it opened, waits between attempts with backoff (`Backoff`: each attempt's delay, the
last one repeating, with jitter if asked), woken early by an event its owner sets when it
closes, and closes a socket briefly. What a frame, a loss or a refusal means stays with each
protocol's client, which runs its loop over these steps.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import ssl
from collections.abc import Callable, Sequence
from typing import Any, Literal

import httpx
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from talkie_tui.core.tokens import TokenSource
from talkie_tui.core.urls import is_loopback_host
from talkie_tui.core.waiting import wait_event, wait_within
from talkie_tui.protocol.net.http import USER_AGENT

__all__ = ["Backoff", "LineState", "SocketLine", "close_quietly", "ping_every", "refreshed"]

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
        self.max_size = max_size
        self.user_agent = user_agent
        self.open_timeout = open_timeout
        self.ping_interval = ping_interval
        self.ping_timeout = ping_timeout
        self.backoff = Backoff(delays, jitter=jitter)
        self._connect = connect if follow_redirects else _NoRedirects
        self._trust = trust
        self._loopback = is_loopback_host(httpx.URL(url).host)
        self.connects = 0  # sockets opened so far (tests and a benchmark read it)

    async def open(self, token: str | None, *, url: str | None = None) -> ClientConnection:
        """Open a socket with `token` as the bearer (to `url`, else the line's own URL)."""
        target = url or self.url
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        options: dict[str, Any] = {}
        if self._trust is not None and target.startswith("wss:"):
            options["ssl"] = self._trust()
        socket = await self._connect(
            target,
            additional_headers=headers,
            user_agent_header=self.user_agent,
            open_timeout=self.open_timeout,
            ping_interval=self.ping_interval,
            ping_timeout=self.ping_timeout,
            close_timeout=CLOSE_TIMEOUT,
            max_size=self.max_size,
            proxy=None if self._loopback else True,
            **options,
        )
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
