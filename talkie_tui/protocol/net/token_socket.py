"""A person's socket, opened with a token source's bearer: the hub's client socket and Minara's
stream connect alike.

`TokenSocket` is what both clients are built on: the address checked (wss, or ws on loopback
when allowed), the `SocketLine` made with the options both take (`SocketOptions`), and the
`ReconnectingSocket` run with the client as its owner. Each attempt is one of `TokenAttempts`,
with the source's current token: a 401 asks the source for a new token once (until the owner
allows it again) and tries it at once; a refusal retrying cannot help (a 401 without a new
token, and what the protocol's `Refusals` name final) raises its error in the protocol's words,
and any other refusal or a network failure is a reason to wait and try again.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypedDict, Unpack

from websockets.asyncio.client import ClientConnection
from websockets.exceptions import InvalidHandshake, InvalidStatus

from talkie_tui.core.errors import ServerError, TalkieError, UnauthorizedError
from talkie_tui.core.sanitize import clean_text
from talkie_tui.core.tokens import TokenSource
from talkie_tui.i18n import _
from talkie_tui.protocol.net.addresses import check_socket_url
from talkie_tui.protocol.net.trust import ssl_context
from talkie_tui.protocol.net.websocket import (
    LineState,
    ReconnectingSocket,
    SocketChange,
    SocketEnd,
    SocketLine,
    refreshed,
)

__all__ = ["Refusals", "SocketOptions", "TokenAttempts", "TokenSocket"]


class SocketOptions(TypedDict, total=False):
    """The options of a person's socket: the handshake's time limit, the reconnect delays (the
    last one repeating), the TLS trust (default: the system's), plain ws allowed on loopback."""

    open_timeout: float
    delays: Sequence[float]
    ssl_context_: ssl.SSLContext | None
    allow_plain: bool


@dataclass(frozen=True, slots=True)
class Refusals:
    """A protocol's words (marked with N_) for an attempt that failed, and which refusals are
    final: `unauthorized` for a 401 with no new token (`unauthorized_code`); `refused`, with
    `{status}`, for any other refusal, final when `final` names its status (the error's class
    and code); `unreachable`, with `{error}`, for a network failure; `redirected` for a
    redirect, final, when the line follows none."""

    unauthorized: str
    unauthorized_code: str
    refused: str
    unreachable: str
    final: Mapping[int, tuple[type[ServerError], str]]
    redirected: str = ""

    def error(self, status: int) -> TalkieError | None:
        """The error for an upgrade refused with `status`, when trying again cannot help."""
        if status == 401:
            return UnauthorizedError(
                _(self.unauthorized), status=401, code=self.unauthorized_code, retryable=False
            )
        if status in self.final:
            kind, code = self.final[status]
            return kind(
                _(self.refused).format(status=status), status=status, code=code, retryable=False
            )
        if self.redirected and 300 <= status < 400:
            return ServerError(_(self.redirected), status=status, code="redirect", retryable=False)
        return None


class TokenAttempts:
    """One attempt at a time with the token source's bearer (see the module docstring)."""

    def __init__(
        self,
        tokens: TokenSource | None,
        open_with: Callable[[str | None], Awaitable[ClientConnection]],
        refusals: Refusals,
    ) -> None:
        self.tokens = tokens
        self._open_with = open_with
        self._refusals = refusals
        self.token: str | None = None  # the one last tried
        self.refreshed = False  # a new token was asked for; cleared by the owner

    async def attempt(self) -> ClientConnection | str:
        """The open socket, or why not ("": a new token, to try at once); raises the
        protocol's error for a refusal retrying cannot help."""
        words = self._refusals
        self.token = await self.tokens.token() if self.tokens is not None else None
        try:
            return await self._open_with(self.token)
        except InvalidStatus as error:
            status = error.response.status_code
            if status == 401 and await self.refresh():
                return ""
            refusal = words.error(status)
            if refusal is not None:
                raise refusal from None
            return _(words.refused).format(status=status)
        except (OSError, InvalidHandshake, TimeoutError) as error:
            return _(words.unreachable).format(error=clean_text(str(error) or type(error).__name__))

    async def refresh(self) -> bool:
        """Ask for a new token after the server refused the last one: True when there is one
        (once, until `refreshed` is cleared)."""
        if self.refreshed or not await refreshed(self.tokens, self.token):
            return False
        self.refreshed = True
        return True


class TokenSocket:
    """A person's reconnecting socket, the `SocketOwner` of its loop (see the module
    docstring); a protocol's client adds what its frames, opens and losses mean."""

    def __init__(
        self,
        url: str,
        tokens: TokenSource | None,
        refusals: Refusals,
        default_delays: Sequence[float],
        *,
        max_size: int,
        ping_interval: float | None,
        ping_timeout: float | None = None,
        follow_redirects: bool = True,
        dead_after: float | None = None,
        idle: asyncio.Event | None = None,
        **options: Unpack[SocketOptions],
    ) -> None:
        check_socket_url(url, allow_plain=options.get("allow_plain", False))
        self.url = url
        trust = options.get("ssl_context_")
        line = SocketLine(
            url,
            max_size=max_size,
            open_timeout=options.get("open_timeout", 10.0),
            ping_interval=ping_interval,
            ping_timeout=ping_timeout,
            follow_redirects=follow_redirects,
            trust=lambda: trust or ssl_context(),
            delays=options.get("delays", default_delays),
        )
        self._line = ReconnectingSocket(
            line, self, dead_after=dead_after, idle=idle, wanted=self._wanted
        )
        self._attempts = TokenAttempts(tokens, self._open, refusals)

    @property
    def tokens(self) -> TokenSource | None:
        """Where each attempt's bearer comes from."""
        return self._attempts.tokens

    @tokens.setter
    def tokens(self, tokens: TokenSource | None) -> None:
        """A new sign-in: the next attempt (and a new token after a 401) comes from it."""
        self._attempts.tokens = tokens
        self._attempts.refreshed = False

    @property
    def state(self) -> LineState:
        """Idle, connecting, open, reconnecting or closed."""
        return self._line.state

    @property
    def connects(self) -> int:
        """Sockets opened so far (tests and a benchmark read it)."""
        return self._line.line.connects

    @property
    def _socket(self) -> ClientConnection | None:
        """The open socket, if any."""
        return self._line.socket

    def _wanted(self) -> bool:
        """Whether the loop goes on after its owner's `idle` event (see ReconnectingSocket)."""
        return True

    async def _open(self, token: str | None) -> ClientConnection:
        """Open one socket with `token` as the bearer."""
        return await self._line.line.open(token)

    async def connect_once(self) -> ClientConnection | str:
        """One attempt (see `TokenAttempts`)."""
        return await self._attempts.attempt()

    async def on_open(self, socket: ClientConnection) -> None:
        """Nothing goes up unless the protocol says so."""

    async def on_frame(self, frame: str | bytes) -> None:
        """One frame: the protocol's to read."""
        raise NotImplementedError

    async def on_end(self, end: SocketEnd) -> str:
        """Why a socket was lost: the protocol's to say."""
        raise NotImplementedError

    def on_change(self, change: SocketChange) -> None:
        """The socket opened, was lost or closed: the protocol's to tell."""
