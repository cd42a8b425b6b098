"""What a Minara stream subscription yields (`StreamEvent`, `StreamLost`, `StreamResumed`,
`StreamStale`, `StreamRefused`) and the `Subscription` that yields it: each seq once and in
order, a gap answered by subscribing again, a real gap or a buffer moved on told as stale (see
`stream.py`'s docstring). The stream hands a subscription what its socket brought (`put`); the
subscription asks it back through `SubscriptionOwner`.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from talkie_tui.core.errors import TalkieError
from talkie_tui.i18n import _
from talkie_tui.protocol.minara.frames import EventFrame, Subscribed

__all__ = [
    "END",
    "StreamEvent",
    "StreamItem",
    "StreamLost",
    "StreamRefused",
    "StreamResumed",
    "StreamStale",
    "Subscription",
    "SubscriptionOwner",
]


class SubscriptionOwner(Protocol):
    """The stream a subscription belongs to: asked to subscribe again, or to let it go."""

    def resubscribe(self, subscription: Subscription) -> None:
        """Ask again for the events after the subscription's last applied seq."""
        ...

    async def release(self, subscription: Subscription) -> None:
        """Forget a closed subscription."""
        ...


class StreamEvent(NamedTuple):
    """One chat event `{type, data}`, with its seq (applied once it was consumed)."""

    seq: int
    event: dict[str, Any]


# A named tuple's own constructor is a Python function; `tuple.__new__` with the fields in
# order makes the same value in C, which a fast stream notices (one is made per event).
_new_tuple = tuple.__new__


@dataclass(frozen=True, slots=True)
class StreamLost:
    """The socket dropped; the stream is reconnecting (`reason` for a person)."""

    reason: str


@dataclass(frozen=True, slots=True)
class StreamResumed:
    """Subscribed again after a loss, from the last applied seq."""

    first_seq: int
    last_seq: int


@dataclass(frozen=True, slots=True)
class StreamStale:
    """Events the consumer has not applied are gone: rebuild from the session's rows.

    The subscription goes on from `first_seq` (what the gateway still has).
    """

    reason: str
    first_seq: int


@dataclass(frozen=True, slots=True)
class StreamRefused:
    """A frame the client would not read (too large, malformed): skipped, said why."""

    reason: str
    too_large: bool = False


StreamItem = StreamEvent | StreamLost | StreamResumed | StreamStale | StreamRefused


END = object()
"""The end of a subscription's queue."""


class Subscription:
    """The events of one `channel:key`, deduplicated and in order (see the module docstring).

    Iterate it once (`async for item in subscription`); `aclose()` unsubscribes.
    """

    def __init__(self, stream: SubscriptionOwner, channel: str, key: str, from_seq: int) -> None:
        self.channel = channel
        self.key = key
        self.last_applied = from_seq
        self.from_zero = from_seq == 0  # the buffer's start is where the events begin
        self._stream = stream
        # A deque and a wake-up event, not an asyncio.Queue: frames are taken without an await
        # while some are waiting, which is most of the time in a fast stream.
        self._queue: deque[object] = deque()
        self._ready = asyncio.Event()
        self._allowance = 0  # refused frames since the last event: seqs that may be missing
        self._awaiting_replay = False  # resubscribed after a gap on the same socket
        self._gap_at: int | None = None  # the last applied seq when a gap was last seen
        self._lost = False
        self._iterator: AsyncIterator[StreamItem] | None = None
        self.closed = False

    def put(self, item: object) -> None:
        """Hand the subscription something the socket brought (the stream's reader calls it): a
        frame of its key, a `StreamLost` or `StreamRefused` to pass on, or the `TalkieError`
        that ends it."""
        self._queue.append(item)
        self._ready.set()

    def put_end(self) -> None:
        """End the iteration after what was already handed over (`aclose` still unsubscribes)."""
        self.put(END)

    def __aiter__(self) -> AsyncIterator[StreamItem]:
        # One iterator for the subscription's life: an event counts as applied when the
        # consumer asks for the next item, whichever loop asks.
        if self._iterator is None:
            self._iterator = self._items()
        return self._iterator

    async def _items(self) -> AsyncIterator[StreamItem]:
        queue, ready = self._queue, self._ready
        while True:
            if not queue:
                ready.clear()
                await ready.wait()
                continue
            item = queue.popleft()
            if type(item) is EventFrame:  # the common case first, with its own fast path
                seq = item.seq
                if self.last_applied < seq <= self.last_applied + 1 + self._allowance:
                    self._allowance = 0
                    self._gap_at = None
                    self.from_zero = False
                    yield _new_tuple(StreamEvent, (seq, item.event))
                    self.last_applied = seq  # the consumer asked for more: applied
                    continue
            if item is END:
                return
            if isinstance(item, TalkieError):
                raise item  # what ends the subscription
            if isinstance(item, StreamLost):
                self._lost = True
                self._awaiting_replay = False  # a new socket carries only the new subscription
                yield item
            elif isinstance(item, StreamRefused):
                self._allowance += 1
                yield item
            elif isinstance(item, Subscribed):
                stale = self._on_subscribed(item)
                if stale is not None:
                    yield stale
                if self._lost:
                    self._lost = False
                    yield StreamResumed(item.first_seq, item.last_seq)
            elif isinstance(item, EventFrame):
                outcome = self._on_event(item)
                if isinstance(outcome, StreamStale):
                    yield outcome
                    outcome = self._on_event(item)
                if isinstance(outcome, StreamEvent):
                    yield outcome
                    self.last_applied = outcome.seq  # the consumer asked for more: applied

    def _on_subscribed(self, frame: Subscribed) -> StreamStale | None:
        self._awaiting_replay = False
        if self.from_zero and self.last_applied == 0:
            return None  # fromSeq 0: the buffer is replayed from what it still holds
        if frame.first_seq > self.last_applied + 1 + self._allowance:
            missed = frame.first_seq - self.last_applied - 1
            reason = _(
                "{count} events of this session are no longer on the gateway's stream."
            ).format(count=missed)
            self.last_applied = frame.first_seq - 1
            self._allowance = 0
            return StreamStale(reason, frame.first_seq)
        return None

    def _on_event(self, frame: EventFrame) -> StreamEvent | StreamStale | None:
        seq = frame.seq
        if self.from_zero and self.last_applied == 0:
            self.from_zero = False
            return StreamEvent(seq, frame.event)  # the first event of the buffer
        if seq <= self.last_applied:
            return None  # delivered before (a replay, or a duplicate): applied once
        if seq <= self.last_applied + 1 + self._allowance:
            self._allowance = 0
            self._gap_at = None
            return StreamEvent(seq, frame.event)
        if self._awaiting_replay:
            return None  # the old subscription's frames; the replay from the last is coming
        if self._gap_at == self.last_applied:
            # The replay has the same hole: it is real, the events are gone.
            reason = _("Events {first}–{last} of this session were never delivered.").format(
                first=self.last_applied + 1, last=seq - 1
            )
            self._gap_at = None
            self.last_applied = seq - 1
            self._allowance = 0
            return StreamStale(reason, seq)
        self._gap_at = self.last_applied
        self._awaiting_replay = True
        self._stream.resubscribe(self)
        return None

    async def aclose(self) -> None:
        """Stop the subscription (the socket closes once none is left)."""
        if self.closed:
            return
        self.closed = True
        self.put(END)
        await self._stream.release(self)

    async def __aenter__(self) -> Subscription:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
