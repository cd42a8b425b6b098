"""Storage of the outbox: one row per event for an agent, leased, acknowledged or given up."""

from __future__ import annotations

import json

from talkie_tui.devserver.common.sqlite import Row
from talkie_tui.devserver.cuckoo.database import HubDatabase

PENDING = "acked_at IS NULL AND gave_up_at IS NULL"
# Lease an agent's due events in one statement (RETURNING gives the leased rows, unordered).
CLAIM = (
    "UPDATE events SET due_at = ?, attempts = attempts + 1 WHERE seq IN (SELECT seq"  # noqa: S608
    f" FROM events WHERE agent_id = ? AND {PENDING} AND due_at <= ? ORDER BY seq LIMIT ?)"
    " RETURNING *"
)


def decode_event(row: Row) -> Row:
    """An event row with its data parsed."""
    row["data"] = json.loads(row["data"])
    return row


class OutboxStore(HubDatabase):
    """The events table (part of `Storage`)."""

    def add_event(self, row: Row) -> str:
        """Insert an event (due at `due_at`, delivered `attempts` times: a lease from the
        start); its data as stored (compact JSON text)."""
        text = json.dumps(row["data"], ensure_ascii=False, separators=(",", ":"))
        self._write(
            "INSERT INTO events (id, agent_id, type, data, message_id, created_at, due_at,"
            " attempts) VALUES (:id, :agent_id, :type, :data, :message_id, :created_at,"
            " :due_at, :attempts)",
            {**row, "data": text},
        )
        return text

    def claim_due(
        self, agent_id: str, now: str, lease_until: str, limit: int, *, decode: bool = True
    ) -> list[Row]:
        """Lease an agent's due events, oldest first: they are due again at `lease_until`.

        One statement: `attempts` comes back counting this delivery (the first is attempt 1)
        and `due_at` is the lease's end. `decode=False` leaves `data` as stored (JSON text).
        """
        with self._lock:
            rows = [
                dict(row)
                for row in self._write(CLAIM, (lease_until, agent_id, now, limit)).fetchall()
            ]
        rows.sort(key=lambda row: int(row["seq"]))  # RETURNING has no order of its own
        return [decode_event(row) for row in rows] if decode else rows

    def release(self, agent_id: str, event_ids: list[str], now: str) -> None:
        """Events leased to a socket that closed: due again at once."""
        with self._transaction() as db:
            db.executemany(
                f"UPDATE events SET due_at = ? WHERE id = ? AND agent_id = ? AND {PENDING}",  # noqa: S608
                [(now, event_id, agent_id) for event_id in event_ids],
            )

    def release_socket_leases(self, now: str) -> None:
        """At start no socket is open: leases of socket-mode agents are void."""
        with self._transaction() as db:
            db.execute(
                f"UPDATE events SET due_at = ? WHERE {PENDING} AND due_at > ? AND agent_id IN"  # noqa: S608
                " (SELECT agent_id FROM bindings WHERE mode = 'socket' AND revoked_at IS NULL)",
                (now, now),
            )

    def next_due(self, agent_id: str) -> str | None:
        """When the agent's next pending event is due, or None."""
        row = self._one(
            f"SELECT MIN(due_at) AS due FROM events WHERE agent_id = ? AND {PENDING}",  # noqa: S608
            agent_id,
        )
        return str(row["due"]) if row and row["due"] is not None else None

    def ack(self, agent_id: str, event_id: str, now: str) -> Row | None:
        """Mark an agent's event delivered; the event's `id`, `type`, `message_id` and
        `acked_at`, or None when it is not the agent's."""
        with self._lock:
            rows = self._write(
                "UPDATE events SET acked_at = ? WHERE id = ? AND agent_id = ?"
                " AND acked_at IS NULL RETURNING id, type, message_id, acked_at",
                (now, event_id, agent_id),
            ).fetchall()  # read to the end: the statement (and its write) is finished
        if rows:
            return dict(rows[0])
        return self._one(  # acknowledged before, or not the agent's
            "SELECT id, type, message_id, acked_at FROM events WHERE id = ? AND agent_id = ?",
            event_id,
            agent_id,
        )

    def reschedule(self, event_id: str, due_at: str, error: str) -> None:
        """A failed delivery: try again at `due_at`."""
        with self._transaction() as db:
            db.execute(
                "UPDATE events SET due_at = ?, last_error = ? WHERE id = ?",
                (due_at, error, event_id),
            )

    def give_up(self, created_before: str, now: str) -> list[Row]:
        """Give up pending events created before `created_before`; the ones given up."""
        with self._transaction() as db:
            rows = [
                dict(row)
                for row in db.execute(
                    f"SELECT id, agent_id, message_id FROM events WHERE {PENDING}"  # noqa: S608
                    " AND created_at < ?",
                    (created_before,),
                ).fetchall()
            ]
            db.executemany(
                "UPDATE events SET gave_up_at = ? WHERE id = ?", [(now, row["id"]) for row in rows]
            )
        return rows

    def events_since(self, agent_id: str, since_seq: int, limit: int) -> list[Row]:
        """An agent's events after `since_seq`, oldest first, in any delivery state."""
        rows = self._all(
            "SELECT * FROM events WHERE agent_id = ? AND seq > ? ORDER BY seq LIMIT ?",
            agent_id,
            since_seq,
            limit,
        )
        return [decode_event(row) for row in rows]

    def event_seq(self, agent_id: str, event_id: str) -> int | None:
        """The position of one of the agent's events, or None."""
        row = self._one("SELECT seq FROM events WHERE id = ? AND agent_id = ?", event_id, agent_id)
        return int(row["seq"]) if row else None

    def oldest_pending(self, agent_id: str) -> str | None:
        """When the agent's oldest undelivered event was created, or None."""
        row = self._one(
            f"SELECT MIN(created_at) AS at FROM events WHERE agent_id = ? AND {PENDING}",  # noqa: S608
            agent_id,
        )
        return str(row["at"]) if row and row["at"] is not None else None

    def delivery_status(self, message_id: str) -> str | None:
        """pending, delivered or failed for a person's message (None: nobody to deliver to)."""
        rows = self._all(
            "SELECT acked_at, gave_up_at FROM events WHERE message_id = ?"
            " AND type = 'message.created'",
            message_id,
        )
        if not rows:
            return None
        if all(row["acked_at"] for row in rows):
            return "delivered"
        if any(row["gave_up_at"] for row in rows):
            return "failed"
        return "pending"

    def sender_and_delivery(self, message_id: str) -> tuple[Row, str | None] | None:
        """A message's `sender_kind`, `sender_id` and `conversation_id` with its
        `delivery_status`, in one query; None when there is no such message."""
        row = self._one(
            "SELECT m.sender_kind, m.sender_id, m.conversation_id, COUNT(e.seq) AS events,"
            " COUNT(e.acked_at) AS acked, COUNT(e.gave_up_at) AS gave_up FROM messages m"
            " LEFT JOIN events e ON e.message_id = m.id AND e.type = 'message.created'"
            " WHERE m.id = ? GROUP BY m.id",
            message_id,
        )
        if row is None:
            return None
        if not row["events"]:
            status = None
        elif row["acked"] == row["events"]:
            status = "delivered"
        elif row["gave_up"]:
            status = "failed"
        else:
            status = "pending"
        return row, status

    def delete_final_events(self, before: str) -> int:
        """Delete delivery records that reached a final state before `before`."""
        with self._transaction() as db:
            cursor = db.execute(
                "DELETE FROM events WHERE COALESCE(acked_at, gave_up_at) < ?", (before,)
            )
            return cursor.rowcount
