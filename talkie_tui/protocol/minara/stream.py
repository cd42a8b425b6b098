"""The Minara stream socket (`GET /v1/stream`, `minara-stream.md`): one multiplexed WebSocket.

`MinaraStream` keeps one socket for all its `Subscription`s: it connects with the token (as
`?token=` and as the bearer header), subscribes each `channel:key` from the last seq its
consumer *applied*, answers the gateway's pings and sends its own, takes a socket silent for
`dead_after` seconds for dead, and reconnects with backoff (the first retry at once, the
delays capped, `state` "reconnecting" meanwhile) until `give_up_after` seconds of failures.
A 4401 close is the gateway refusing the token: one refresh of the token source, then
UnauthorizedError.

A subscription yields, in order: `StreamEvent`s (each seq once: a seq already applied is
dropped; a seq past the next one is a gap, answered by subscribing again from the last applied,
and a second gap at the same place is real), `StreamLost` when the socket dropped and
`StreamResumed` when it was subscribed again, `StreamStale` when events the consumer has not
applied are gone (`firstSeq` past the next one, or a real gap: rebuild from
`GET /v1/sessions/:id`), and `StreamRefused` for a frame the client would not read (over
1 MiB, or malformed). Such a frame may have been an event: the next seq is then accepted
after as many missing ones as frames were refused, so a bad frame is skipped, not replayed
for ever.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Unpack
from urllib.parse import quote

from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from talkie_tui.core.errors import (
    NotFoundError,
    ServerError,
    TalkieError,
    TransportError,
    UnauthorizedError,
)
from talkie_tui.core.tokens import TokenSource
from talkie_tui.i18n import N_, _
from talkie_tui.protocol.minara.frames import (
    MAX_FRAME_BYTES,
    ErrorFrame,
    EventFrame,
    FrameTooLarge,
    MalformedFrame,
    Ping,
    Pong,
    Subscribe,
    Subscribed,
    Unsubscribe,
    build_frame,
    parse_frame,
)
from talkie_tui.protocol.minara.subscription import (
    END,
    StreamLost,
    StreamRefused,
    Subscription,
)
from talkie_tui.protocol.net.token_socket import Refusals, SocketOptions, TokenSocket
from talkie_tui.protocol.net.websocket import LineState, SocketChange, SocketEnd, ping_every

__all__ = [
    "RECONNECT_DELAYS",
    "MinaraStream",
    "StreamState",
]

log = logging.getLogger("talkie_tui.minara.stream")

RECONNECT_DELAYS: tuple[float, ...] = (0.0, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
"""Seconds before each reconnect attempt; the last one repeats (the cap)."""
UNAUTHORIZED_CLOSE = 4401
# Frames up to this size are read, so that one over the protocol's 1 MiB can be refused and
# skipped; a larger one makes websockets drop the socket (1009), which ends the stream.
SOCKET_MAX_SIZE = 8 * MAX_FRAME_BYTES

StreamState = LineState
REFUSALS = Refusals(
    unauthorized=N_("The gateway refused the token on its stream (HTTP 401)."),
    unauthorized_code="unauthorized",
    refused=N_("The gateway refused the stream (HTTP {status})."),
    unreachable=N_("Could not connect to the gateway's stream: {error}"),
    final={403: (ServerError, "forbidden"), 404: (ServerError, "not_found")},
)


class MinaraStream(TokenSocket):
    """One socket to a gateway, shared by every subscription (see the module docstring)."""

    def __init__(
        self,
        url: str,
        tokens: TokenSource | None = None,
        *,
        ping_interval: float = 15.0,
        dead_after: float = 45.0,
        give_up_after: float = 120.0,
        token_in_query: bool = True,
        **options: Unpack[SocketOptions],
    ) -> None:
        self._idle = asyncio.Event()
        super().__init__(
            url,
            tokens,
            REFUSALS,
            RECONNECT_DELAYS,
            max_size=SOCKET_MAX_SIZE,
            ping_interval=None,  # the protocol's own pings (frames) keep the socket alive
            dead_after=dead_after,
            idle=self._idle,
            **options,
        )
        self.ping_interval = ping_interval
        self.dead_after = dead_after
        self.give_up_after = give_up_after
        self.token_in_query = token_in_query
        self._subs: dict[tuple[str, str], list[Subscription]] = {}
        self._task: asyncio.Task[None] | None = None
        self._pinger: asyncio.Task[None] | None = None
        self._closed = False
        self._failing_since: float | None = None

    @property
    def read_pause(self) -> float:
        """Seconds of rest after a frame that waited (see protocol.pacing)."""
        return self._line.read_pause

    @read_pause.setter
    def read_pause(self, pause: float) -> None:
        self._line.read_pause = pause

    # --- subscriptions -------------------------------------------------------------------

    def subscribe(self, channel: str, key: str, from_seq: int = 0) -> Subscription:
        """Follow `channel:key` from the events after `from_seq` (0: the whole buffer).

        Several subscriptions may follow one key (two views of a session): each gets every
        event once, from its own position.
        """
        if self._closed:
            raise TalkieError(_("The gateway's stream is closed."))
        subscription = Subscription(self, channel, key, from_seq)
        self._subs.setdefault((channel, key), []).append(subscription)
        self._idle.clear()
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._run(), name="minara-stream")
        else:
            self._send_soon(Subscribe(channel, key, from_seq))
        return subscription

    def resubscribe(self, subscription: Subscription) -> None:
        """Ask again for the events after the subscription's last applied seq."""
        self._send_soon(
            Subscribe(subscription.channel, subscription.key, subscription.last_applied)
        )

    async def release(self, subscription: Subscription) -> None:
        """Forget a closed subscription: unsubscribe it, and close the socket if none is left."""
        where = (subscription.channel, subscription.key)
        group = self._subs.get(where, [])
        if subscription in group:
            group.remove(subscription)
            if not group:  # the key's last follower: the gateway may stop sending it
                del self._subs[where]
                await self._send(Unsubscribe(*where))
        if not self._subs:
            self._idle.set()

    async def aclose(self) -> None:
        """End every subscription and close the socket."""
        self._closed = True
        for subscription in self._all():
            subscription.closed = True
            subscription.put(END)
        self._subs.clear()
        self._idle.set()
        task = self._task
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._line.state = "closed"

    # --- sending -------------------------------------------------------------------------

    def _send_soon(self, frame: Subscribe | Unsubscribe | Ping | Pong) -> None:
        if self._socket is not None:
            task = asyncio.ensure_future(self._send(frame))
            task.add_done_callback(_quiet)

    async def _send(self, frame: Subscribe | Unsubscribe | Ping | Pong) -> None:
        socket = self._socket
        if socket is None:
            return  # sent on the next connect, with every subscription
        with contextlib.suppress(ConnectionClosed):
            await socket.send(build_frame(frame))

    # --- the connection ------------------------------------------------------------------

    async def _open(self, token: str | None) -> ClientConnection:
        url = self.url
        if token and self.token_in_query:
            url += ("&" if "?" in url else "?") + "token=" + quote(token, safe="")
        return await self._line.line.open(token, url=url)

    def _wanted(self) -> bool:
        return bool(self._subs) and not self._closed

    def _all(self) -> list[Subscription]:
        return [subscription for group in self._subs.values() for subscription in group]

    def _broadcast(self, item: object) -> None:
        for subscription in self._all():
            subscription.put(item)

    async def _run(self) -> None:
        self._failing_since, self._attempts.refreshed = None, False
        try:
            await self._line.run()
        except TalkieError as error:
            self._broadcast(error)
            self._subs.clear()

    async def connect_once(self) -> ClientConnection | str:
        """One attempt (see `TokenAttempts`); raises when the gateway could not be reached
        for `give_up_after` seconds."""
        got = await self._attempts.attempt()
        if not isinstance(got, str) or not got:
            return got
        now = time.monotonic()
        self._failing_since = self._failing_since or now
        if now - self._failing_since > self.give_up_after:
            raise TransportError(
                _("The gateway's stream could not be reached for {seconds} s: {reason}").format(
                    seconds=round(now - self._failing_since), reason=got
                )
            )
        return got

    def on_change(self, change: SocketChange) -> None:
        """A loss is told to every subscription, once until the socket is back."""
        if change.state == "reconnecting" and not change.after_loss:
            log.debug("stream lost: %s", change.reason)
            self._broadcast(StreamLost(change.reason))  # "reconnecting", also when never open

    async def on_open(self, socket: ClientConnection) -> None:
        """Subscribe every key from its last applied seq; ping the gateway from now on."""
        self._failing_since = None
        for subscription in self._all():
            await self._send(
                Subscribe(subscription.channel, subscription.key, subscription.last_applied)
            )
        self._pinger = asyncio.create_task(
            ping_every(socket, self.ping_interval, build_frame(Ping()))
        )

    async def on_end(self, end: SocketEnd) -> str:
        """Why the socket was lost ("": a refreshed token, tried at once); a second 4401 ends
        the stream."""
        pinger, self._pinger = self._pinger, None
        if pinger is not None:
            pinger.cancel()
            await asyncio.gather(pinger, return_exceptions=True)
        if end.stopped:
            return ""
        code, reason = _why(end, self.dead_after)
        if code == UNAUTHORIZED_CLOSE:
            if await self._attempts.refresh():
                self._broadcast(StreamLost(reason))
                return ""
            raise UnauthorizedError(
                _("The gateway refused the token on its stream (close 4401)."),
                status=401,
                code="unauthorized",
                retryable=False,
            )
        self._attempts.refreshed = False
        self._failing_since = self._failing_since or time.monotonic()
        return reason

    async def on_frame(self, message: str | bytes) -> None:
        """Hand one frame out: events to their subscriptions, a ping answered."""
        try:
            frame = parse_frame(message)
        except (MalformedFrame, FrameTooLarge) as error:
            log.debug("frame refused: %s", error.message)
            self._broadcast(
                StreamRefused(error.message, too_large=isinstance(error, FrameTooLarge))
            )
            return
        if frame is None:
            return  # a frame type this client does not know: skipped
        if isinstance(frame, EventFrame | Subscribed):
            for subscription in self._subs.get((frame.channel, frame.key), ()):
                subscription.put(frame)
        elif isinstance(frame, Ping):
            await self._send(Pong())
        elif isinstance(frame, ErrorFrame):
            self._on_error(frame)

    def _on_error(self, frame: ErrorFrame) -> None:
        where = (frame.channel or "chat", frame.key) if frame.key is not None else None
        group = self._subs.pop(where, []) if where is not None else []
        if not group:
            log.debug("gateway stream error %s: %s", frame.code, frame.message)
            return
        message = frame.message or _("The gateway refused the subscription ({code}).").format(
            code=frame.code
        )
        status, cls = (404, NotFoundError) if frame.code == "not_found" else (0, ServerError)
        for subscription in group:
            error = cls(message, status=status, code=frame.code, retryable=False)
            subscription.put(error)
        if not self._subs:
            self._idle.set()


def _why(end: SocketEnd, dead_after: float) -> tuple[int, str]:
    """The close code of a lost socket and the reason, for a person."""
    if end.silent:
        return 1006, _("The gateway's stream went silent for {seconds} s.").format(
            seconds=round(dead_after)
        )
    closed = end.closed
    if closed is not None and closed.sent is not None and closed.sent.code == 1009:
        return 1009, _("The gateway sent a frame over {size} MiB.").format(
            size=SOCKET_MAX_SIZE // 1048576
        )
    code = closed.rcvd.code if closed is not None and closed.rcvd is not None else 1006
    return code, _("The connection to the gateway's stream was lost.")


def _quiet(task: asyncio.Future[None]) -> None:
    """Retrieve a fire-and-forget send's exception, so none is reported as never retrieved."""
    if not task.cancelled():
        task.exception()
