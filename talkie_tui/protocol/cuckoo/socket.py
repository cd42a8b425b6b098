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
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Unpack

from talkie_tui.core.errors import (
    ForbiddenError,
    NotFoundError,
)
from talkie_tui.core.tokens import TokenSource
from talkie_tui.i18n import N_, _
from talkie_tui.protocol.cuckoo.pushes import Push, parse_push
from talkie_tui.protocol.net.token_socket import Refusals, SocketOptions, TokenSocket
from talkie_tui.protocol.net.websocket import LineState, SocketChange, SocketEnd

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
REFUSALS = Refusals(
    unauthorized=N_("The hub refused the session on its socket (HTTP 401): sign in again."),
    unauthorized_code="invalid_credentials",
    refused=N_("The hub refused the socket (HTTP {status})."),
    unreachable=N_("Could not connect to the hub's socket: {error}"),
    final={403: (ForbiddenError, "forbidden"), 404: (NotFoundError, "route_not_found")},
    redirected=N_("The hub redirected its socket elsewhere; talkie does not follow it."),
)


@dataclass(frozen=True, slots=True)
class SocketLost:
    """The socket dropped; it is reconnecting (`reason` for a person)."""

    reason: str


@dataclass(frozen=True, slots=True)
class SocketResumed:
    """The socket is back after a loss: catch up over REST on what it missed."""


SocketItem = Push | SocketLost | SocketResumed


class ClientSocket(TokenSocket):
    """The pushes of one hub for the signed-in person (see the module docstring).

    Iterate it once (`async for item in socket`); `aclose()` ends the iteration.
    """

    def __init__(
        self,
        url: str,
        tokens: TokenSource | None = None,
        *,
        ping_interval: float = 20.0,
        ping_timeout: float = 20.0,
        **options: Unpack[SocketOptions],
    ) -> None:
        # A redirect is never followed: the bearer goes to the hub's origin and nowhere else.
        super().__init__(
            url,
            tokens,
            REFUSALS,
            RECONNECT_DELAYS,
            max_size=MAX_FRAME_BYTES,
            ping_interval=ping_interval,
            ping_timeout=ping_timeout,
            follow_redirects=False,
            **options,
        )
        self._closing = self._line.closing
        self._queue: asyncio.Queue[SocketItem | BaseException | None] = asyncio.Queue()

    def __aiter__(self) -> AsyncIterator[SocketItem]:
        return self._items()

    async def aclose(self) -> None:
        """Close the socket and end the iteration."""
        await self._line.close()

    # --- the loop's hooks ----------------------------------------------------------------

    def on_change(self, change: SocketChange) -> None:
        """A loss (told once until the socket is back) and a resume become items."""
        if change.state == "open":
            self._attempts.refreshed = False
            if change.after_loss:
                self._queue.put_nowait(SocketResumed())
        elif change.state == "reconnecting" and not change.after_loss:
            self._queue.put_nowait(SocketLost(change.reason))

    async def on_frame(self, frame: str | bytes) -> None:
        """A push, handed on (unknown and malformed frames are skipped)."""
        push = parse_push(frame)
        if push is None:
            log.debug("client socket frame skipped: %.200r", frame)
        else:
            self._queue.put_nowait(push)

    async def on_end(self, end: SocketEnd) -> str:
        """Any loss is worth a reconnect."""
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
