"""The outbox: every event for an agent is a row first, then pushed (socket) or posted (webhook).

Delivery is at least once: a pushed event not acknowledged within the lease is due again. Any
success clears an agent's run of failures; five unbroken minutes of them make it unreachable.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from talkie_tui.devserver.common import clock
from talkie_tui.devserver.common.sqlite import Row
from talkie_tui.devserver.cuckoo import ids
from talkie_tui.devserver.cuckoo.config import HubConfig
from talkie_tui.devserver.cuckoo.live import AgentLinks
from talkie_tui.devserver.cuckoo.presence import Presence
from talkie_tui.devserver.cuckoo.storage import Storage

# Compact JSON of events' data kept from `emit` until first pushed (at most this many).
TEXTS_KEPT = 10_000


def dump(frame: dict[str, Any]) -> str:
    """A socket frame as JSON text."""
    return json.dumps(frame, ensure_ascii=False, separators=(",", ":"))


def frame_text(row: Row, data_text: str) -> str:
    """An event's socket frame from its row and its data as compact JSON text: the same text
    as `dump(envelope(row))`, without dumping the data again."""
    head = dump({name: row[name] for name in ("id", "type", "created_at", "agent_id")})
    return f'{head[:-1]},"data":{data_text}}}'


def envelope(row: Row) -> dict[str, Any]:
    """The event as agents receive it."""
    return {
        "id": row["id"],
        "type": row["type"],
        "created_at": row["created_at"],
        "agent_id": row["agent_id"],
        "data": row["data"],
    }


class Outbox:
    """Writes events and tells the agent's transport they are due.

    `queued`: an event waits for its delivery (the webhook sender wakes); `delivered`: an
    acknowledged event carried this message (its sender hears of it).
    """

    def __init__(
        self,
        storage: Storage,
        config: HubConfig,
        links: AgentLinks,
        presence: Presence,
        *,
        queued: Callable[[], None],
        delivered: Callable[[str], None],
    ) -> None:
        self.storage = storage
        self.config = config
        self.links = links
        self.presence = presence
        self._queued = queued
        self._delivered = delivered
        # Agents known to be in good standing (no run of failures, not unreachable): their
        # successes change nothing. Only `succeeded` and `failed` change that standing.
        self._fine: set[str] = set()
        self._texts: dict[str, str] = {}

    def emit(
        self, agent_id: str, event_type: str, data: dict[str, Any], message_id: str | None = None
    ) -> None:
        """Store an event for an agent and hand it to whoever delivers it.

        An agent whose socket has caught up with its events gets the event pushed straight
        away, leased from the start (the insert is the lease: no second write to claim it).
        """
        now = clock.now()
        created_at = clock.iso(now)
        event_id = ids.new_id("evt")
        row: Row = {
            "id": event_id,
            "agent_id": agent_id,
            "type": event_type,
            "data": data,
            "message_id": message_id,
            "created_at": created_at,
            "due_at": created_at,
            "attempts": 0,
        }
        socket = self.links.caught_up(agent_id)
        if socket is not None:
            row["due_at"] = clock.iso(clock.later(self.config.lease_seconds, now))
            row["attempts"] = 1
        text = self.storage.add_event(row)
        if socket is not None:
            socket.push_leased(event_id, frame_text(row, text))
            return
        self._texts[event_id] = text
        if len(self._texts) > TEXTS_KEPT:
            del self._texts[next(iter(self._texts))]
        self.links.wake(agent_id)
        self._queued()

    def frame_of(self, row: Row) -> str:
        """The socket frame of an event row as `claim_due(decode=False)` gives it, without
        parsing and dumping its data again when this hub wrote it."""
        text = self._texts.pop(row["id"], None)
        if text is None:
            text = dump(json.loads(row["data"]))
        return frame_text(row, text)

    def succeeded(self, agent_id: str) -> None:
        """A delivery, connection or acknowledgement worked: the agent is reachable."""
        if agent_id in self._fine:
            return
        agent = self.storage.get_agent(agent_id)
        if agent is None:
            return
        self._fine.add(agent_id)
        if agent["failing_since"] is None and not agent["unreachable"]:
            return
        self.storage.set_failing(agent_id, None, False)
        if agent["unreachable"]:
            self.presence.announce(agent_id)

    def failed(self, agent_id: str, since: str | None = None) -> None:
        """A delivery failed (or, for a socket agent, has waited since `since`): start or
        extend the run; past the limit the agent is unreachable."""
        self._fine.discard(agent_id)
        agent = self.storage.get_agent(agent_id)
        if agent is None:
            return
        now = clock.now()
        since = agent["failing_since"] or since or clock.iso(now)
        long_enough = (now - clock.parse_iso(since)).total_seconds()
        unreachable = long_enough >= self.config.unreachable_after
        self.storage.set_failing(agent_id, since, unreachable)
        if unreachable and not agent["unreachable"]:
            self.presence.announce(agent_id)

    def acknowledge(self, agent_id: str, event_id: str) -> None:
        """An agent acknowledged an event: it is delivered (people see their message was)."""
        row = self.storage.ack(agent_id, event_id, clock.iso(clock.now()))
        if row is None:
            return
        self.succeeded(agent_id)
        if row["message_id"] is not None and row["type"] == "message.created":
            self._delivered(row["message_id"])
