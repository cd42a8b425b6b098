"""The client socket of a hub (`GET /v1/client/socket`): pushes down, nothing up.

`ClientSocket` connects with the session token as the bearer header, yields each push the hub
sends (`pushes.py`; unknown and malformed frames are skipped), answers the hub's pings (the
WebSocket library does, and pings the hub in turn to notice a dead line), and when the socket
drops yields `SocketLost`, reconnects with backoff (`RECONNECT_DELAYS`, the last one repeating)
and yields `SocketResumed` once it is back. The socket is a hint and REST the record: what was
pushed while it was down is gone, so on `SocketResumed` the consumer fills the gap with
`messages(after=<the last message it has>)`.

A 401 on the upgrade asks the token source for a new token once, then raises
UnauthorizedError; a 403 or 404 raises at once (retrying cannot help). A redirect is never
followed: the bearer goes to the hub's origin and nowhere else.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from talkie_tui.core.errors import (
    ForbiddenError,
    NotFoundError,
    ServerError,
    TalkieError,
    UnauthorizedError,
)
from talkie_tui.core.sanitize import clean_text
from talkie_tui.core.tokens import TokenSource
from talkie_tui.i18n import _
from talkie_tui.protocol.cuckoo.pushes import Push, parse_push
from talkie_tui.protocol.net.addresses import check_socket_url
from talkie_tui.protocol.net.trust import ssl_context
from talkie_tui.protocol.net.websocket import LineState, SocketLine, close_quietly, refreshed

__all__ = [
    "RECONNECT_DELAYS",
    "ClientSocket",
    "SocketItem",
    "SocketLost",
    "SocketResumed",
    "SocketState",
]

log = logging.getLogger("talkie_tui.cuckoo.socket")

RECONNECT_DELAYS: tuple[float, ...] = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0)
"""Seconds before each reconnect attempt; the last one repeats (the cap)."""
MAX_FRAME_BYTES = 4 * 1024 * 1024  # a message is at most 8000 characters: ample room

SocketState = LineState


@dataclass(frozen=True, slots=True)
class SocketLost:
    """The socket dropped; it is reconnecting (`reason` for a person)."""

    reason: str


@dataclass(frozen=True, slots=True)
class SocketResumed:
    """The socket is back after a loss: catch up over REST on what it missed."""


SocketItem = Push | SocketLost | SocketResumed


class ClientSocket:
    """The pushes of one hub for the signed-in person (see the module docstring).

    Iterate it once (`async for item in socket`); `aclose()` ends the iteration.
    """

    def __init__(
        self,
        url: str,
        tokens: TokenSource | None = None,
        *,
        open_timeout: float = 10.0,
        ping_interval: float = 20.0,
        ping_timeout: float = 20.0,
        delays: Sequence[float] = RECONNECT_DELAYS,
        ssl_context_: ssl.SSLContext | None = None,
        allow_plain: bool = False,
    ) -> None:
        check_socket_url(url, allow_plain=allow_plain)
        self.url = url
        self.tokens = tokens
        # A redirect is never followed: the bearer goes to the hub's origin and nowhere else.
        self._line = SocketLine(
            url,
            max_size=MAX_FRAME_BYTES,
            open_timeout=open_timeout,
            ping_interval=ping_interval,
            ping_timeout=ping_timeout,
            follow_redirects=False,
            trust=lambda: ssl_context_ or ssl_context(),
            delays=delays,
        )
        self._socket: ClientConnection | None = None
        self._closing = asyncio.Event()
        self.state: SocketState = "idle"

    @property
    def connects(self) -> int:
        """Sockets opened so far (tests read it)."""
        return self._line.connects

    def __aiter__(self) -> AsyncIterator[SocketItem]:
        return self._items()

    async def aclose(self) -> None:
        """Close the socket and end the iteration."""
        self._closing.set()
        self.state = "closed"
        socket = self._socket
        if socket is not None:
            await close_quietly(socket)

    # --- the connection ------------------------------------------------------------------

    async def _open(self, token: str | None) -> ClientConnection:
        """Open one socket with `token` as the bearer."""
        return await self._line.open(token)

    async def _connect(self, token_refreshed: bool) -> tuple[ClientConnection | None, str, bool]:
        """One attempt: the open socket, or None with the reason; and whether the token was
        refreshed. Raises when trying again cannot help."""
        token = await self.tokens.token() if self.tokens is not None else None
        try:
            return await self._open(token), "", token_refreshed
        except InvalidStatus as error:
            status = error.response.status_code
            if status == 401 and not token_refreshed and await refreshed(self.tokens, token):
                return None, "", True  # try the new token at once
            refusal = _refusal(status)
            if refusal is not None:
                raise refusal from None
            reason = _("The hub refused the socket (HTTP {status}).").format(status=status)
        except (OSError, InvalidHandshake, TimeoutError) as error:
            reason = _("Could not connect to the hub's socket: {error}").format(
                error=clean_text(str(error) or type(error).__name__)
            )
        return None, reason, token_refreshed

    async def _pause(self) -> None:
        """Wait before the next attempt (woken early by `aclose`)."""
        await self._line.pause(self._line.backoff.next_delay(), self._closing)

    async def _items(self) -> AsyncIterator[SocketItem]:
        token_refreshed, lost = False, False
        self._line.backoff.reset()
        try:
            while not self._closing.is_set():
                self.state = "reconnecting" if lost else "connecting"
                socket, reason, token_refreshed = await self._connect(token_refreshed)
                if socket is None:
                    if not reason:
                        continue  # a refreshed token, tried at once
                    if not lost:
                        lost, self.state = True, "reconnecting"
                        yield SocketLost(reason)
                    await self._pause()
                    continue
                self._socket, self.state = socket, "open"
                if self._closing.is_set():
                    break  # closed while it opened: the finally below closes it
                token_refreshed = False
                if lost:
                    lost = False
                    yield SocketResumed()
                async for push in self._read(socket):
                    yield push
                self._socket = None
                if self._closing.is_set():
                    break
                lost, self.state = True, "reconnecting"
                yield SocketLost(_("The connection to the hub's socket was lost."))
                await self._pause()
        finally:
            self.state = "closed"
            socket = self._socket
            self._socket = None
            if socket is not None:
                await close_quietly(socket)

    async def _read(self, socket: ClientConnection) -> AsyncIterator[Push]:
        """The pushes of one open socket, until it closes."""
        while True:
            try:
                frame = await socket.recv()
            except ConnectionClosed as closed:
                log.debug("client socket closed: %s", closed)
                return
            push = parse_push(frame)
            if push is None:
                log.debug("client socket frame skipped: %.200r", frame)
                continue
            yield push


def _refusal(status: int) -> TalkieError | None:
    """The error for an upgrade refused with `status`, when trying again cannot help."""
    if status == 401:
        return UnauthorizedError(
            _("The hub refused the session on its socket (HTTP 401): sign in again."),
            status=401,
            code="invalid_credentials",
            retryable=False,
        )
    if status in (403, 404):
        refused, code = (
            (ForbiddenError, "forbidden") if status == 403 else (NotFoundError, "route_not_found")
        )
        return refused(
            _("The hub refused the socket (HTTP {status}).").format(status=status),
            status=status,
            code=code,
            retryable=False,
        )
    if 300 <= status < 400:
        return ServerError(
            _("The hub redirected its socket elsewhere; talkie does not follow it."),
            status=status,
            code="redirect",
            retryable=False,
        )
    return None
