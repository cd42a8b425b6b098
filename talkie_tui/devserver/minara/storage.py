"""The gateway's SQLite tables: sessions, their message rows (with full-text search), files."""

from __future__ import annotations

import json
import re
from typing import Any

from talkie_tui.devserver.common.sqlite import Database, Row

TABLES = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    kind TEXT NOT NULL,
    origin TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    last_seq INTEGER NOT NULL DEFAULT 0,
    -- the turn running when the gateway last stopped (cleared when it ends)
    active_turn TEXT
);
CREATE TABLE IF NOT EXISTS messages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    created_at TEXT NOT NULL,
    attachments TEXT,
    metadata TEXT,
    voice_input_key TEXT
);
CREATE INDEX IF NOT EXISTS messages_session ON messages(session_id, seq);
CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts USING fts5(
    content, tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TABLE IF NOT EXISTS files (
    key TEXT PRIMARY KEY,
    stored_name TEXT NOT NULL UNIQUE,
    filename TEXT NOT NULL,
    media_type TEXT NOT NULL,
    size INTEGER NOT NULL,
    kind TEXT NOT NULL,
    uploaded_at TEXT NOT NULL
);
"""

SEARCH_LIMIT = 20
_TOKEN = re.compile(r"\w+", re.UNICODE)


def fts_query(text: str) -> str | None:
    """A safe FTS5 query for what a person typed: every word, each also as a prefix."""
    # Quoting every word keeps FTS5 operators (NEAR, -, ", *) in the input from being syntax.
    words = _TOKEN.findall(text)
    if not words:
        return None
    return " ".join('"' + word.replace('"', '""') + '"*' for word in words)


class Storage(Database):
    """The Minara tables on the shared connection (see `common.sqlite.Database`)."""

    SCHEMA = TABLES

    # sessions

    def create_session(self, session_id: str, title: str, kind: str, origin: str, now: str) -> Row:
        """Insert a new session and return it."""
        with self._transaction() as db:
            db.execute(
                "INSERT INTO sessions (id, title, kind, origin, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (session_id, title, kind, origin, now, now),
            )
        row = self.get_session(session_id)
        assert row is not None
        return row

    def get_session(self, session_id: str) -> Row | None:
        """A session with its `message_count`, or None."""
        return self._one(
            "SELECT s.*, (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id)"
            " AS message_count FROM sessions s WHERE s.id = ?",
            session_id,
        )

    def list_sessions(
        self, limit: int, offset: int, kind: str | None, origin: str | None
    ) -> tuple[list[Row], int]:
        """A page of sessions, most recently updated first, and how many match in all."""
        args = [kind, kind, origin, origin]
        rows = self._all(
            "SELECT s.*, (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id)"
            " AS message_count FROM sessions s"
            " WHERE (? IS NULL OR kind = ?) AND (? IS NULL OR origin = ?)"
            " ORDER BY updated_at DESC, rowid DESC LIMIT ? OFFSET ?",
            *args,
            limit,
            offset,
        )
        total = self._one(
            "SELECT COUNT(*) AS n FROM sessions"
            " WHERE (? IS NULL OR kind = ?) AND (? IS NULL OR origin = ?)",
            *args,
        )
        assert total is not None
        return rows, int(total["n"])

    def delete_session(self, session_id: str) -> bool:
        """Delete a session with its rows and their search entries; False when it did not exist."""
        with self._transaction() as db:
            db.execute(
                "DELETE FROM messages_fts WHERE rowid IN"
                " (SELECT seq FROM messages WHERE session_id = ?)",
                (session_id,),
            )
            return db.execute("DELETE FROM sessions WHERE id = ?", (session_id,)).rowcount > 0

    def set_active_turn(self, session_id: str, turn_id: str | None, last_seq: int) -> None:
        """Note the turn running in a session (None once it ended) and the newest seq."""
        with self._transaction() as db:
            db.execute(
                "UPDATE sessions SET active_turn = ?, last_seq = MAX(last_seq, ?) WHERE id = ?",
                (turn_id, last_seq, session_id),
            )

    def unfinished_turns(self) -> list[Row]:
        """Sessions whose turn was running when a previous gateway process stopped."""
        return self._all(
            "SELECT id, active_turn, last_seq FROM sessions WHERE active_turn IS NOT NULL"
        )

    # messages

    def get_message(self, message_id: str) -> Row | None:
        """A stored row by id, in any session."""
        row = self._one("SELECT * FROM messages WHERE id = ?", message_id)
        return _decode_message(row) if row is not None else None

    def add_message(
        self,
        session_id: str,
        message_id: str,
        role: str,
        content: str,
        now: str,
        *,
        attachments: list[dict[str, Any]] | None = None,
        metadata: dict[str, Any] | None = None,
        voice_input_key: str | None = None,
    ) -> bool:
        """Append a row, index it and bump the session; False when the session is gone."""
        with self._transaction() as db:
            if db.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is None:
                return False
            cursor = db.execute(
                "INSERT INTO messages (id, session_id, role, content, created_at, attachments,"
                " metadata, voice_input_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    message_id,
                    session_id,
                    role,
                    content,
                    now,
                    _json_or_none(attachments),
                    _json_or_none(metadata),
                    voice_input_key,
                ),
            )
            if content:
                db.execute(
                    "INSERT INTO messages_fts (rowid, content) VALUES (?, ?)",
                    (cursor.lastrowid, content),
                )
            db.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (now, session_id))
            return True

    def list_messages(self, session_id: str) -> list[Row]:
        """The rows of a session in the order they were stored, JSON fields decoded."""
        rows = self._all("SELECT * FROM messages WHERE session_id = ? ORDER BY seq", session_id)
        return [_decode_message(row) for row in rows]

    def search(self, text: str, limit: int = SEARCH_LIMIT) -> list[Row]:
        """Rows matching `text`, best match first, each with a `«…»` snippet."""
        query = fts_query(text)
        if query is None:
            return []
        return self._all(
            "SELECT m.session_id, m.id AS message_id, m.role, s.title,"
            " snippet(messages_fts, 0, '«', '»', '…', 12) AS snippet"
            " FROM messages_fts JOIN messages m ON m.seq = messages_fts.rowid"
            " JOIN sessions s ON s.id = m.session_id"
            " WHERE messages_fts MATCH ? ORDER BY bm25(messages_fts), m.seq DESC LIMIT ?",
            query,
            limit,
        )

    # files

    def add_file(self, record: dict[str, Any]) -> None:
        """Remember an uploaded file (its bytes are in the data folder under `stored_name`)."""
        with self._transaction() as db:
            db.execute(
                "INSERT INTO files (key, stored_name, filename, media_type, size, kind,"
                " uploaded_at) VALUES (:key, :stored_name, :filename, :media_type, :size, :kind,"
                " :uploaded_at)",
                record,
            )

    def get_file(self, key: str) -> Row | None:
        """An uploaded file's record by its key, or None."""
        return self._one("SELECT * FROM files WHERE key = ?", key)


def _json_or_none(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False)


def _decode_message(row: Row) -> Row:
    for name in ("attachments", "metadata"):
        row[name] = json.loads(row[name]) if row[name] is not None else None
    return row
