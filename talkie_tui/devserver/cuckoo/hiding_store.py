"""Storage of what a person hid for themselves: single messages, and everything up to a clear.

The agent and the other members keep what a person hides: only that person's pages, their
conversation list's last message and their unread count leave it out (`visible_to`).
"""

from __future__ import annotations

from pathlib import Path

from talkie_tui.devserver.cuckoo.database import HubDatabase

HIDING_SCHEMA = """
CREATE TABLE IF NOT EXISTS hidden_messages (
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    message_id TEXT NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    PRIMARY KEY (user_id, message_id)
);
-- a person's clear: every message up to `up_to_seq` is hidden for them
CREATE TABLE IF NOT EXISTS clears (
    conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    up_to_seq INTEGER NOT NULL,
    PRIMARY KEY (conversation_id, user_id)
);
"""


def visible_to(alias: str) -> str:
    """SQL to AND onto a query of `messages` (named `alias`): only what the person named by
    the two `?` it holds (both the person's id) has not hidden or cleared."""
    return (
        f" AND {alias}.seq > COALESCE((SELECT up_to_seq FROM clears"  # noqa: S608
        f" WHERE clears.conversation_id = {alias}.conversation_id AND clears.user_id = ?), 0)"
        f" AND NOT EXISTS (SELECT 1 FROM hidden_messages h WHERE h.user_id = ?"
        f" AND h.message_id = {alias}.id)"
    )


class HidingStore(HubDatabase):
    """The hiding tables (part of `Storage`)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        with self._lock:
            self._db.executescript(HIDING_SCHEMA)

    def hide_message(self, user_id: str, message_id: str) -> None:
        """Hide one message for a person (again: nothing changes)."""
        self._write(
            "INSERT OR IGNORE INTO hidden_messages (user_id, message_id) VALUES (?, ?)",
            (user_id, message_id),
        )

    def clear_conversation(self, conversation_id: str, user_id: str) -> None:
        """Hide every message of a conversation so far for a person."""
        self._write(
            "INSERT INTO clears (conversation_id, user_id, up_to_seq)"
            " SELECT ?, ?, COALESCE(MAX(seq), 0) FROM messages WHERE conversation_id = ?"
            " ON CONFLICT (conversation_id, user_id)"
            " DO UPDATE SET up_to_seq = MAX(up_to_seq, excluded.up_to_seq)",
            (conversation_id, user_id, conversation_id),
        )
