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
import contextlib
import logging
import ssl
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

from websockets.asyncio.client import ClientConnection
from websockets.exceptions import InvalidHandshake, InvalidStatus

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
from talkie_tui.protocol.net.websocket import (
    LineState,
    ReconnectingSocket,
    SocketChange,
    SocketEnd,
    SocketLine,
    refreshed,
)

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
        line = SocketLine(
            url,
            max_size=MAX_FRAME_BYTES,
            open_timeout=open_timeout,
            ping_interval=ping_interval,
            ping_timeout=ping_timeout,
            follow_redirects=False,
            trust=lambda: ssl_context_ or ssl_context(),
            delays=delays,
        )
        self._line = ReconnectingSocket(
            line,
            connect=self._connect,
            on_frame=self._frame,
            on_close=self._ended,
            on_change=self._changed,
        )
        self._closing = self._line.closing
        self._queue: asyncio.Queue[SocketItem | BaseException | None] = asyncio.Queue()
        self._token_refreshed = False

    @property
    def state(self) -> SocketState:
        """Idle, connecting, open, reconnecting or closed."""
        return self._line.state

    @property
    def connects(self) -> int:
        """Sockets opened so far (tests read it)."""
        return self._line.line.connects

    @property
    def _socket(self) -> ClientConnection | None:
        """The open socket, if any (a test drops it)."""
        return self._line.socket

    def __aiter__(self) -> AsyncIterator[SocketItem]:
        return self._items()

    async def aclose(self) -> None:
        """Close the socket and end the iteration."""
        await self._line.close()

    # --- the connection ------------------------------------------------------------------

    async def _open(self, token: str | None) -> ClientConnection:
        """Open one socket with `token` as the bearer."""
        return await self._line.line.open(token)

    async def _connect(self) -> ClientConnection | str:
        """One attempt: the open socket, or why not ("": a refreshed token, tried at once).
        Raises when trying again cannot help."""
        token = await self.tokens.token() if self.tokens is not None else None
        try:
            return await self._open(token)
        except InvalidStatus as error:
            status = error.response.status_code
            if status == 401 and not self._token_refreshed and await refreshed(self.tokens, token):
                self._token_refreshed = True
                return ""
            refusal = _refusal(status)
            if refusal is not None:
                raise refusal from None
            return _("The hub refused the socket (HTTP {status}).").format(status=status)
        except (OSError, InvalidHandshake, TimeoutError) as error:
            return _("Could not connect to the hub's socket: {error}").format(
                error=clean_text(str(error) or type(error).__name__)
            )

    def _changed(self, change: SocketChange) -> None:
        if change.state == "open":
            self._token_refreshed = False
            if change.after_loss:
                self._queue.put_nowait(SocketResumed())
        elif change.state == "reconnecting" and not change.after_loss:
            self._queue.put_nowait(SocketLost(change.reason))

    async def _frame(self, frame: str | bytes) -> None:
        push = parse_push(frame)
        if push is None:
            log.debug("client socket frame skipped: %.200r", frame)
        else:
            self._queue.put_nowait(push)

    async def _ended(self, end: SocketEnd) -> str:
        log.debug("client socket closed: %s", end.closed)
        return _("The connection to the hub's socket was lost.")

    async def _items(self) -> AsyncIterator[SocketItem]:
        """The items the socket's loop hands over, until it ends (its error raised here)."""
        items = self._queue
        run = asyncio.create_task(self._line.run(), name="cuckoo-client-socket")
        run.add_done_callback(
            lambda done: items.put_nowait(None if done.cancelled() else done.exception())
        )
        try:
            while (item := await items.get()) is not None:
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            if not run.done():
                run.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await run


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
