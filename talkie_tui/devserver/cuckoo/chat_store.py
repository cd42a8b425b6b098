"""Storage of conversations, their participants and their messages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from talkie_tui.devserver.common.sqlite import Row
from talkie_tui.devserver.cuckoo.database import HubDatabase
from talkie_tui.devserver.cuckoo.hiding_store import visible_to

MESSAGE_COLUMNS = (
    "id",
    "conversation_id",
    "sender_kind",
    "sender_id",
    "body",
    "reply_to_id",
    "status",
    "truncated",
    "stopped",
    "signature",
    "idempotency_key",
    "created_at",
    "updated_at",
    "last_append_at",
    "schedule_id",
)


# The columns of `messages` as `SELECT *` gives them.
TABLE_ORDER = ("seq", *MESSAGE_COLUMNS[:9], "selected_button_id", *MESSAGE_COLUMNS[9:])
INSERT_MESSAGE = (
    f"INSERT INTO messages ({', '.join(MESSAGE_COLUMNS)})"  # noqa: S608
    f" VALUES ({', '.join(f':{name}' for name in MESSAGE_COLUMNS)})"
)


def decode_message(row: Row | None) -> Row | None:
    """A message row with its body parsed and flags as booleans."""
    if row is not None:
        row["body"] = json.loads(row["body"])
        row["truncated"] = bool(row["truncated"])
        row["stopped"] = bool(row["stopped"])
    return row


def _messages(rows: list[Row]) -> list[Row]:
    return [row for row in map(decode_message, rows) if row is not None]


def _for(viewer: str | None, alias: str = "messages") -> tuple[str, tuple[str, ...]]:
    """The SQL and arguments keeping out what `viewer` hid (None: everything is shown)."""
    return (visible_to(alias), (viewer, viewer)) if viewer is not None else ("", ())


class ChatStore(HubDatabase):
    """The conversation tables (part of `Storage`)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        # Read for every message and changed rarely: a conversation's row, and its
        # participants with their names and whether a person blocked the agent. Every change
        # to them goes through a store method, which forgets what it changed.
        self._conversation_rows: dict[str, Row] = {}
        self._named: dict[str, list[Row]] = {}

    def _memberships_changed(self) -> None:
        self._named.clear()

    # conversations

    def create_dm(self, conversation_id: str, user_id: str, agent_id: str, now: str) -> Row:
        """Open a person's DM with an agent (both become participants)."""
        with self._transaction() as db:
            db.execute(
                "INSERT INTO conversations (id, kind, user_id, agent_id, created_at)"
                " VALUES (?, 'dm', ?, ?, ?)",
                (conversation_id, user_id, agent_id, now),
            )
            db.executemany(
                "INSERT INTO participants (conversation_id, kind, member_id, joined_at)"
                " VALUES (?, ?, ?, ?)",
                [
                    (conversation_id, "user", user_id, now),
                    (conversation_id, "agent", agent_id, now),
                ],
            )
        self._named.pop(conversation_id, None)
        row = self.get_conversation(conversation_id)
        assert row is not None
        return row

    def dm_between(self, user_id: str, agent_id: str) -> Row | None:
        """A person's DM with an agent, or None."""
        return self._one(
            "SELECT * FROM conversations WHERE user_id = ? AND agent_id = ?", user_id, agent_id
        )

    def get_conversation(self, conversation_id: str) -> Row | None:
        """A conversation by id, or None."""
        row = self._conversation_rows.get(conversation_id)
        if row is None:
            row = self._one("SELECT * FROM conversations WHERE id = ?", conversation_id)
            if row is None:
                return None
            self._conversation_rows[conversation_id] = row
        return dict(row)

    def participants(self, conversation_id: str) -> list[Row]:
        """Who is in a conversation, people first."""
        return self._all(
            "SELECT * FROM participants WHERE conversation_id = ? ORDER BY kind DESC, joined_at",
            conversation_id,
        )

    def participants_named(self, conversation_id: str) -> list[Row]:
        """Who is in a conversation, people first: `conversation_id`, `kind`, `member_id`,
        `joined_at`, the member's `display_name` and, for an agent, `handle` (both empty for
        a member whose row is gone), and `blocked`: an agent a person here blocked."""
        named = self._named.get(conversation_id)
        if named is None:
            named = self._all(
                "SELECT p.conversation_id, p.kind, p.member_id, p.joined_at,"
                " COALESCE(CASE p.kind WHEN 'user' THEN u.display_name"
                " ELSE a.display_name END, '') AS display_name, COALESCE(a.handle, '') AS handle,"
                " p.kind = 'agent' AND EXISTS (SELECT 1 FROM blocks b JOIN participants q"
                " ON q.conversation_id = p.conversation_id AND q.kind = 'user'"
                " AND q.member_id = b.user_id WHERE b.agent_id = p.member_id) AS blocked"
                " FROM participants p"
                " LEFT JOIN users u ON p.kind = 'user' AND u.id = p.member_id"
                " LEFT JOIN agents a ON p.kind = 'agent' AND a.id = p.member_id"
                " WHERE p.conversation_id = ? ORDER BY p.kind DESC, p.joined_at",
                conversation_id,
            )
            for part in named:
                part["blocked"] = bool(part["blocked"])
            self._named[conversation_id] = named
        return [dict(part) for part in named]

    def conversation_for(self, conversation_id: str, member_id: str) -> tuple[Row | None, bool]:
        """A conversation by id (or None) and whether `member_id` is in it."""
        row = self.get_conversation(conversation_id)
        if row is None:
            return None, False
        members = self.participants_named(conversation_id)
        return row, any(part["member_id"] == member_id for part in members)

    # blocks

    def block(self, user_id: str, agent_id: str, now: str) -> bool:
        """Record that a person blocked an agent; False when it was blocked already."""
        with self._transaction() as db:
            cursor = db.execute(
                "INSERT OR IGNORE INTO blocks (user_id, agent_id, created_at) VALUES (?, ?, ?)",
                (user_id, agent_id, now),
            )
        self._memberships_changed()
        return cursor.rowcount > 0

    def unblock(self, user_id: str, agent_id: str) -> bool:
        """Lift a person's block of an agent; False when there was none."""
        with self._transaction() as db:
            cursor = db.execute(
                "DELETE FROM blocks WHERE user_id = ? AND agent_id = ?", (user_id, agent_id)
            )
        self._memberships_changed()
        return cursor.rowcount > 0

    def is_blocked(self, user_id: str, agent_id: str) -> bool:
        """Whether a person blocked an agent."""
        found = self._one(
            "SELECT 1 FROM blocks WHERE user_id = ? AND agent_id = ?", user_id, agent_id
        )
        return found is not None

    def is_participant(self, conversation_id: str, member_id: str) -> bool:
        """Whether a user or agent is in a conversation."""
        return (
            self._one(
                "SELECT 1 FROM participants WHERE conversation_id = ? AND member_id = ?",
                conversation_id,
                member_id,
            )
            is not None
        )

    def conversations_of(self, member_id: str) -> list[Row]:
        """The conversations a user or agent is in, newest activity first."""
        return self._all(
            "SELECT c.*, COALESCE((SELECT MAX(seq) FROM messages m"
            " WHERE m.conversation_id = c.id), 0) AS last_seq FROM conversations c"
            " JOIN participants p ON p.conversation_id = c.id AND p.member_id = ?"
            " ORDER BY last_seq DESC, c.created_at DESC",
            member_id,
        )

    def unread_count(self, conversation_id: str, user_id: str, since: str) -> int:
        """Messages from others after the person's read mark, not hidden from them (counted
        up to 100)."""
        hidden, args = _for(user_id, "m")
        row = self._one(
            "SELECT COUNT(*) AS n FROM (SELECT 1 FROM messages m JOIN participants p"  # noqa: S608
            " ON p.conversation_id = m.conversation_id AND p.member_id = ?"
            " WHERE m.conversation_id = ? AND m.sender_id != ? AND m.seq > p.read_up_to"
            f" AND m.created_at >= ?{hidden} LIMIT 100)",
            user_id,
            conversation_id,
            user_id,
            since,
            *args,
        )
        return int(row["n"]) if row else 0

    def mark_read(self, conversation_id: str, user_id: str, seq: int) -> None:
        """Move the person's read mark forward to `seq`."""
        with self._transaction() as db:
            db.execute(
                "UPDATE participants SET read_up_to = MAX(read_up_to, ?)"
                " WHERE conversation_id = ? AND member_id = ?",
                (seq, conversation_id, user_id),
            )

    # messages

    def add_message(self, row: Row) -> Row:
        """Insert a message and return it."""
        values = {name: row.get(name) for name in MESSAGE_COLUMNS}
        values["body"] = json.dumps(row["body"], ensure_ascii=False)
        values["truncated"] = int(bool(row.get("truncated")))
        values["stopped"] = int(bool(row.get("stopped")))
        cursor = self._write(INSERT_MESSAGE, values)
        # The row as `get_message` would read it back (columns in table order), unread.
        stored = {**values, "seq": cursor.lastrowid, "selected_button_id": None}
        message = decode_message({name: stored[name] for name in TABLE_ORDER})
        assert message is not None
        return message

    def get_message(self, message_id: str) -> Row | None:
        """A message by id, or None."""
        return decode_message(self._one("SELECT * FROM messages WHERE id = ?", message_id))

    def message_by_key(self, sender_id: str, key: str) -> Row | None:
        """The message a sender sent earlier with this idempotency key, or None."""
        return decode_message(
            self._one(
                "SELECT * FROM messages WHERE sender_id = ? AND idempotency_key = ?",
                sender_id,
                key,
            )
        )

    def update_message(self, message_id: str, **fields: Any) -> Row:
        """Change some columns of a message and return it."""
        if "body" in fields:
            fields["body"] = json.dumps(fields["body"], ensure_ascii=False)
        for flag in ("truncated", "stopped"):
            if flag in fields:
                fields[flag] = int(bool(fields[flag]))
        assignments = ", ".join(f"{name} = :{name}" for name in fields)
        with self._transaction() as db:
            db.execute(
                f"UPDATE messages SET {assignments} WHERE id = :message_id",  # noqa: S608
                {**fields, "message_id": message_id},
            )
        message = self.get_message(message_id)
        assert message is not None
        return message

    def select_button(self, message_id: str, button_id: str) -> bool:
        """Mark a button taken; False when one of the message's buttons was taken already."""
        return self._changed(
            "UPDATE messages SET selected_button_id = ? WHERE id = ?"
            " AND selected_button_id IS NULL",
            button_id,
            message_id,
        )

    def last_message(
        self, conversation_id: str, since: str, viewer: str | None = None
    ) -> Row | None:
        """The newest message of a conversation inside the window (that `viewer` did not
        hide), or None."""
        newest = self._in_window(conversation_id, since, viewer, order="seq DESC", limit=1)
        return newest[0] if newest else None

    def page_before(
        self,
        conversation_id: str,
        before_seq: int | None,
        limit: int,
        since: str,
        viewer: str | None = None,
    ) -> list[Row]:
        """Up to `limit` messages older than `before_seq` (None: the newest), newest first
        (without what `viewer` hid)."""
        return self._in_window(
            conversation_id,
            since,
            viewer,
            seq=("seq < ?", before_seq if before_seq is not None else 2**62),
            order="seq DESC",
            limit=limit,
        )

    def page_after(
        self,
        conversation_id: str,
        after_seq: int,
        limit: int,
        since: str,
        viewer: str | None = None,
    ) -> list[Row]:
        """Up to `limit` messages newer than `after_seq`, oldest first (without what `viewer`
        hid)."""
        return self._in_window(
            conversation_id, since, viewer, seq=("seq > ?", after_seq), order="seq", limit=limit
        )

    def _in_window(
        self,
        conversation_id: str,
        since: str,
        viewer: str | None,
        *,
        seq: tuple[str, int] | None = None,
        order: str,
        limit: int,
    ) -> list[Row]:
        """Up to `limit` messages of a conversation inside the window, in `order`, those whose
        seq passes `seq` (a condition and its argument) if given, without what `viewer` hid."""
        hidden, args = _for(viewer)
        where, bound = (f" AND {seq[0]}", (seq[1],)) if seq is not None else ("", ())
        return _messages(
            self._all(
                f"SELECT * FROM messages WHERE conversation_id = ?{where}"  # noqa: S608
                f" AND created_at >= ?{hidden} ORDER BY {order} LIMIT ?",
                conversation_id,
                *bound,
                since,
                *args,
                limit,
            )
        )

    def seq_of(self, message_id: str) -> tuple[str, int] | None:
        """The conversation and position of a message, or None."""
        row = self._one("SELECT conversation_id, seq FROM messages WHERE id = ?", message_id)
        return (str(row["conversation_id"]), int(row["seq"])) if row else None

    def streaming_messages(self) -> list[Row]:
        """Every message still streaming."""
        return _messages(self._all("SELECT * FROM messages WHERE status = 'streaming'"))

    def streaming_in(self, conversation_id: str) -> list[Row]:
        """The messages still streaming in one conversation."""
        return _messages(
            self._all(
                "SELECT * FROM messages WHERE status = 'streaming' AND conversation_id = ?",
                conversation_id,
            )
        )

    def delete_messages_before(self, cutoff: str) -> list[str]:
        """Delete messages created before `cutoff`; the ids deleted."""
        with self._transaction() as db:
            ids = [
                str(row[0])
                for row in db.execute(
                    "SELECT id FROM messages WHERE created_at < ?", (cutoff,)
                ).fetchall()
            ]
            db.execute("DELETE FROM messages WHERE created_at < ?", (cutoff,))
        return ids
