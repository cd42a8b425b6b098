"""Per-session event buffers: every event of a session gets the next `seq` (across turns), and
the latest turn's events stay replayable for a while after it ended.

All of it runs on the server's event loop. Subscribers are called synchronously on every append,
and a subscription's replay and its registration happen in one step, so no event can fall
between the buffer a subscriber was sent and the live ones.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

Event = dict[str, Any]
Clock = Callable[[], float]


class Subscriber(Protocol):
    """What a channel tells the sockets subscribed to it."""

    def deliver(self, seq: int, event: Event) -> None:
        """A new event of the channel."""
        ...

    def channel_closed(self) -> None:
        """The session was deleted; no more events come."""
        ...


class Channel:
    """The `chat` channel of one session: its newest seq and the buffered events of one turn."""

    def __init__(self, key: str, last_seq: int) -> None:
        self.key = key
        self.last_seq = last_seq
        self.closed = False
        self._events: list[tuple[int, Event]] = []
        self._ended_at: float | None = None
        self._subscribers: list[Subscriber] = []
        self._losing = 0  # test mode: events to number but neither buffer nor deliver

    @property
    def first_seq(self) -> int:
        """The oldest seq still buffered (`last_seq + 1` when the buffer is empty)."""
        return self._events[0][0] if self._events else self.last_seq + 1

    def begin_turn(self) -> None:
        """A new turn starts: older turns' events are dropped (the spec allows it)."""
        self._events.clear()
        self._ended_at = None

    def append(self, event: Event) -> int:
        """Buffer one `{type, data}` event under the next seq and hand it to the subscribers."""
        self.last_seq += 1
        if self._losing:
            self._losing -= 1
            return self.last_seq  # lost on purpose (test mode): a real gap in the buffer
        self._events.append((self.last_seq, event))
        for subscriber in list(self._subscribers):
            subscriber.deliver(self.last_seq, event)
        return self.last_seq

    def lose_next(self, count: int) -> None:
        """Test mode only: the next `count` events get their seq but are neither buffered nor
        delivered, like a gateway that lost them (a real gap, which no replay fills). The turn's
        row still holds them."""
        self._losing = count

    def subscribe(self, subscriber: Subscriber) -> None:
        """Hand every future event to `subscriber`."""
        self._subscribers.append(subscriber)

    def unsubscribe(self, subscriber: Subscriber) -> None:
        """Stop handing events to `subscriber` (no-op when it was not subscribed)."""
        if subscriber in self._subscribers:
            self._subscribers.remove(subscriber)

    def end_turn(self, now: float) -> None:
        """The turn ended: its buffer starts to age."""
        self._ended_at = now

    def expire(self, now: float, keep_seconds: float) -> None:
        """Drop the buffer of a turn that ended more than `keep_seconds` ago."""
        if self._ended_at is not None and now - self._ended_at >= keep_seconds:
            self._events.clear()
            self._ended_at = None

    def after(self, seq: int) -> list[tuple[int, Event]]:
        """The buffered events with a seq greater than `seq`, oldest first."""
        return [item for item in self._events if item[0] > seq]

    def close(self) -> None:
        """The session is gone: subscribers are told and dropped."""
        self.closed = True
        subscribers, self._subscribers = self._subscribers, []
        for subscriber in subscribers:
            subscriber.channel_closed()


class Channels:
    """The channels of the sessions seen since the gateway started."""

    def __init__(
        self,
        last_seq_of: Callable[[str], int | None],
        keep_seconds: float,
        clock: Clock = time.monotonic,
    ) -> None:
        # last_seq_of(session_id): the stored newest seq, None for an unknown session.
        self._last_seq_of = last_seq_of
        self._keep_seconds = keep_seconds
        self._clock = clock
        self._channels: dict[str, Channel] = {}

    def get(self, session_id: str) -> Channel | None:
        """The channel of a stored session (created on first use), None for an unknown one."""
        self.sweep()
        channel = self._channels.get(session_id)
        if channel is not None:
            return channel
        last_seq = self._last_seq_of(session_id)
        if last_seq is None:
            return None
        channel = self._channels[session_id] = Channel(session_id, last_seq)
        return channel

    def end_turn(self, channel: Channel) -> None:
        """Start the retention clock of the channel's turn."""
        channel.end_turn(self._clock())

    def drop(self, session_id: str) -> None:
        """Forget a deleted session's channel (its subscribers stop)."""
        channel = self._channels.pop(session_id, None)
        if channel is not None:
            channel.close()

    def sweep(self) -> None:
        """Drop the buffers of turns that ended longer than the retention ago."""
        now = self._clock()
        for channel in self._channels.values():
            channel.expire(now, self._keep_seconds)
