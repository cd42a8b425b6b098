"""SQLite persistence: threads, messages, runs (with their event logs), actions, voice, meta."""

from __future__ import annotations

import json
import secrets
from typing import Any

from talkie_tui.devserver.common.sqlite import Database, Row

TABLES = """
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS threads (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    title TEXT NOT NULL,
    channel TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS messages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    cards TEXT NOT NULL DEFAULT '[]',
    channel TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_thread ON messages(thread_id, seq);
CREATE TABLE IF NOT EXISTS runs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    thread_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    status TEXT NOT NULL,
    frames TEXT NOT NULL DEFAULT '[]',
    tokens INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    finished_at TEXT
);
CREATE INDEX IF NOT EXISTS runs_message ON runs(message_id, seq);
CREATE TABLE IF NOT EXISTS answer_runs (
    message_id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS actions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    thread_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    params TEXT NOT NULL,
    locale TEXT NOT NULL,
    decision TEXT,
    record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS actions_thread ON actions(thread_id, seq);
CREATE TABLE IF NOT EXISTS decisions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    action_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    decision TEXT NOT NULL,
    method TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS voice_sessions (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    locale TEXT NOT NULL,
    max_seconds INTEGER NOT NULL,
    used_seconds REAL NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    ended_at TEXT
);
CREATE TABLE IF NOT EXISTS voice_tool_calls (
    voice_session_id TEXT NOT NULL,
    call_id TEXT NOT NULL,
    name TEXT NOT NULL,
    arguments TEXT NOT NULL,
    ok INTEGER,
    output TEXT,
    created_at TEXT NOT NULL,
    PRIMARY KEY (voice_session_id, call_id)
);
CREATE TABLE IF NOT EXISTS voice_usage (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    voice_session_id TEXT NOT NULL,
    seconds REAL NOT NULL,
    final INTEGER NOT NULL,
    remaining REAL NOT NULL,
    created_at TEXT NOT NULL
);
"""


class Storage(Database):
    """The talkie/1 tables on the shared connection (see `common.sqlite.Database`)."""

    SCHEMA = TABLES

    # meta

    def server_id(self) -> str:
        """The id generated on first start; stable for the life of this database."""
        with self._transaction() as db:
            row = db.execute("SELECT value FROM meta WHERE key = 'server_id'").fetchone()
            if row is not None:
                return str(row["value"])
            value = f"dev-{secrets.token_hex(4)}"
            db.execute("INSERT INTO meta (key, value) VALUES ('server_id', ?)", (value,))
            return value

    # threads

    def get_thread(self, user_id: str, thread_id: str) -> Row | None:
        """A thread of this user, or None."""
        return self._one("SELECT * FROM threads WHERE id = ? AND user_id = ?", thread_id, user_id)

    def create_thread(
        self, user_id: str, thread_id: str, title: str, channel: str, created_at: str
    ) -> None:
        """Insert a new thread (no-op when it already exists)."""
        with self._transaction() as db:
            db.execute(
                "INSERT OR IGNORE INTO threads"
                " (id, user_id, title, channel, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (thread_id, user_id, title, channel, created_at, created_at),
            )

    def list_threads(self, user_id: str, limit: int) -> list[Row]:
        """The user's threads, most recently updated first."""
        return self._all(
            "SELECT * FROM threads WHERE user_id = ? ORDER BY updated_at DESC, rowid DESC LIMIT ?",
            user_id,
            limit,
        )

    def set_thread_title(self, thread_id: str, title: str) -> None:
        """Rename a thread (a voice thread gets its first user sentence as title)."""
        with self._transaction() as db:
            db.execute("UPDATE threads SET title = ? WHERE id = ?", (title, thread_id))

    def delete_thread(self, user_id: str, thread_id: str) -> bool:
        """Delete a thread and its messages; False when it did not exist."""
        return self._changed("DELETE FROM threads WHERE id = ? AND user_id = ?", thread_id, user_id)

    # messages

    def get_message(self, message_id: str) -> Row | None:
        """A stored message by id, in any thread."""
        return self._one("SELECT * FROM messages WHERE id = ?", message_id)

    def add_message(
        self,
        thread_id: str,
        message_id: str,
        role: str,
        content: str,
        created_at: str,
        *,
        cards: list[dict[str, Any]] | None = None,
        channel: str = "chat",
    ) -> bool:
        """Append a message and bump the thread; False when the thread is gone or the id exists."""
        with self._transaction() as db:
            if db.execute("SELECT 1 FROM threads WHERE id = ?", (thread_id,)).fetchone() is None:
                return False
            cursor = db.execute(
                "INSERT OR IGNORE INTO messages"
                " (id, thread_id, role, content, cards, channel, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    message_id,
                    thread_id,
                    role,
                    content,
                    json.dumps(cards or [], ensure_ascii=False),
                    channel,
                    created_at,
                ),
            )
            if cursor.rowcount == 0:
                return False
            db.execute("UPDATE threads SET updated_at = ? WHERE id = ?", (created_at, thread_id))
            return True

    def list_messages(self, thread_id: str) -> list[Row]:
        """The messages of a thread in the order they were stored, `cards` decoded."""
        rows = self._all("SELECT * FROM messages WHERE thread_id = ? ORDER BY seq", thread_id)
        for row in rows:
            row["cards"] = json.loads(row["cards"])
        return rows

    def drop_answer(self, message_id: str) -> None:
        """Delete the answer stored after a user message (a cut one, about to be redone)."""
        with self._transaction() as db:
            asked = db.execute(
                "SELECT seq, thread_id FROM messages WHERE id = ?", (message_id,)
            ).fetchone()
            if asked is None:
                return
            seq, thread_id = asked
            after = db.execute(
                "SELECT MIN(seq) FROM messages WHERE thread_id = ? AND seq > ? AND role = 'user'",
                (thread_id, seq),
            ).fetchone()[0]
            db.execute(
                "DELETE FROM messages WHERE thread_id = ? AND seq > ? AND seq < ?"
                " AND role = 'assistant'",
                (thread_id, seq, after if after is not None else 2**62),
            )

    # runs

    def create_run(
        self, run_id: str, thread_id: str, user_id: str, message_id: str, created_at: str
    ) -> bool:
        """Record a started run; False when the run id is taken."""
        return self._changed(
            "INSERT OR IGNORE INTO runs"
            " (id, thread_id, user_id, message_id, status, created_at)"
            " VALUES (?, ?, ?, ?, 'running', ?)",
            run_id,
            thread_id,
            user_id,
            message_id,
            created_at,
        )

    def get_run(self, run_id: str) -> Row | None:
        """A run by id, `frames` decoded into a list of event JSON strings."""
        row = self._one("SELECT * FROM runs WHERE id = ?", run_id)
        if row is not None:
            row["frames"] = json.loads(row["frames"])
        return row

    def set_answer_run(self, message_id: str, run_id: str) -> None:
        """Remember which run wrote an answer (its events are the answer's parts in order)."""
        with self._transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO answer_runs (message_id, run_id) VALUES (?, ?)",
                (message_id, run_id),
            )

    def run_of_answer(self, message_id: str) -> Row | None:
        """The run that wrote an answer, when it is known."""
        row = self._one("SELECT run_id FROM answer_runs WHERE message_id = ?", message_id)
        return self.get_run(row["run_id"]) if row is not None else None

    def latest_run_for_message(self, message_id: str) -> Row | None:
        """The newest run that answered a user message."""
        row = self._one(
            "SELECT id FROM runs WHERE message_id = ? ORDER BY seq DESC LIMIT 1", message_id
        )
        return self.get_run(row["id"]) if row is not None else None

    def finish_run(
        self, run_id: str, status: str, frames: list[str], tokens: int, finished_at: str
    ) -> None:
        """Store the outcome and the complete event log of a run."""
        with self._transaction() as db:
            db.execute(
                "UPDATE runs SET status = ?, frames = ?, tokens = ?, finished_at = ? WHERE id = ?",
                (status, json.dumps(frames, ensure_ascii=False), tokens, finished_at, run_id),
            )

    def set_run_tokens(self, run_id: str, tokens: int) -> None:
        """Record the token count before the run's usage event is computed."""
        with self._transaction() as db:
            db.execute("UPDATE runs SET tokens = ? WHERE id = ?", (tokens, run_id))

    def unfinished_runs(self) -> list[Row]:
        """Runs still marked running (left behind by a server that stopped abruptly)."""
        return self._all("SELECT id, thread_id FROM runs WHERE status = 'running'")

    def usage_since(self, user_id: str, since: str) -> tuple[int, int]:
        """(runs, tokens) of the user since the given timestamp."""
        row = self._one(
            "SELECT COUNT(*) AS runs, COALESCE(SUM(tokens), 0) AS tokens FROM runs"
            " WHERE user_id = ? AND created_at >= ?",
            user_id,
            since,
        )
        assert row is not None
        return int(row["runs"]), int(row["tokens"])

    # actions

    def insert_action(
        self,
        record: dict[str, Any],
        user_id: str,
        kind: str,
        params: dict[str, Any],
        locale: str,
    ) -> None:
        """Store a new action proposal."""
        with self._transaction() as db:
            db.execute(
                "INSERT INTO actions (id, thread_id, user_id, kind, params, locale, record)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    record["id"],
                    record["threadId"],
                    user_id,
                    kind,
                    json.dumps(params, ensure_ascii=False),
                    locale,
                    json.dumps(record, ensure_ascii=False),
                ),
            )

    def get_action(self, user_id: str, action_id: str) -> Row | None:
        """An action of this user with `params` and `record` decoded."""
        row = self._one("SELECT * FROM actions WHERE id = ? AND user_id = ?", action_id, user_id)
        return _decode_action(row) if row is not None else None

    def thread_actions(self, thread_id: str) -> list[Row]:
        """The actions proposed in a thread, oldest first."""
        rows = self._all("SELECT * FROM actions WHERE thread_id = ? ORDER BY seq", thread_id)
        return [_decode_action(row) for row in rows]

    def update_action(self, action_id: str, record: dict[str, Any], decision: str | None) -> None:
        """Replace the wire record (status etc.) and the recorded decision."""
        with self._transaction() as db:
            db.execute(
                "UPDATE actions SET record = ?, decision = ? WHERE id = ?",
                (json.dumps(record, ensure_ascii=False), decision, action_id),
            )

    def add_decision(
        self, action_id: str, user_id: str, decision: str, method: str, created_at: str
    ) -> None:
        """Append to the audit log of human decisions (with how they were made)."""
        with self._transaction() as db:
            db.execute(
                "INSERT INTO decisions (action_id, user_id, decision, method, created_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (action_id, user_id, decision, method, created_at),
            )

    def list_decisions(self, user_id: str) -> list[Row]:
        """The user's decisions, oldest first."""
        return self._all(
            "SELECT action_id, decision, method, created_at FROM decisions"
            " WHERE user_id = ? ORDER BY seq",
            user_id,
        )

    # voice

    def create_voice_session(
        self,
        session_id: str,
        user_id: str,
        thread_id: str,
        locale: str,
        max_seconds: int,
        created_at: str,
    ) -> None:
        """Record a new voice session."""
        with self._transaction() as db:
            db.execute(
                "INSERT INTO voice_sessions"
                " (id, user_id, thread_id, locale, max_seconds, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (session_id, user_id, thread_id, locale, max_seconds, created_at),
            )

    def get_voice_session(self, user_id: str, session_id: str) -> Row | None:
        """A voice session of this user, or None."""
        return self._one(
            "SELECT * FROM voice_sessions WHERE id = ? AND user_id = ?", session_id, user_id
        )

    def find_voice_session(self, session_id: str) -> Row | None:
        """A voice session of any user (for the provider, which knows no user)."""
        return self._one("SELECT * FROM voice_sessions WHERE id = ?", session_id)

    def update_voice_usage(
        self, session_id: str, used_seconds: float, ended_at: str | None
    ) -> None:
        """Store the seconds used so far and, once it ended, when."""
        with self._transaction() as db:
            db.execute(
                "UPDATE voice_sessions SET used_seconds = ?,"
                " ended_at = COALESCE(ended_at, ?) WHERE id = ?",
                (used_seconds, ended_at, session_id),
            )

    def add_voice_usage_report(
        self, session_id: str, seconds: float, final: bool, remaining: float, created_at: str
    ) -> None:
        """Append one `POST voiceUsage` report as received."""
        with self._transaction() as db:
            db.execute(
                "INSERT INTO voice_usage (voice_session_id, seconds, final, remaining, created_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (session_id, seconds, int(final), remaining, created_at),
            )

    def voice_usage_reports(self, session_id: str) -> list[Row]:
        """The usage reports of a session, oldest first."""
        return self._all(
            "SELECT seconds, final, remaining, created_at FROM voice_usage"
            " WHERE voice_session_id = ? ORDER BY seq",
            session_id,
        )

    def voice_seconds_since(self, user_id: str, since: str) -> float:
        """Seconds of voice the user used in sessions started since the timestamp."""
        row = self._one(
            "SELECT COALESCE(SUM(used_seconds), 0) AS seconds FROM voice_sessions"
            " WHERE user_id = ? AND created_at >= ?",
            user_id,
            since,
        )
        assert row is not None
        return float(row["seconds"])

    def add_voice_tool_call(
        self, session_id: str, call_id: str, name: str, arguments: str, created_at: str
    ) -> bool:
        """Claim a tool call id for the session; False when it was used before."""
        return self._changed(
            "INSERT OR IGNORE INTO voice_tool_calls"
            " (voice_session_id, call_id, name, arguments, created_at)"
            " VALUES (?, ?, ?, ?, ?)",
            session_id,
            call_id,
            name,
            arguments,
            created_at,
        )

    def finish_voice_tool_call(self, session_id: str, call_id: str, ok: bool, output: str) -> None:
        """Store the outcome of a tool call."""
        with self._transaction() as db:
            db.execute(
                "UPDATE voice_tool_calls SET ok = ?, output = ?"
                " WHERE voice_session_id = ? AND call_id = ?",
                (int(ok), output, session_id, call_id),
            )

    def voice_tool_calls(self, session_id: str) -> list[Row]:
        """The tool calls of a session in the order they were made."""
        return self._all(
            "SELECT call_id, name, arguments, ok, output, created_at FROM voice_tool_calls"
            " WHERE voice_session_id = ? ORDER BY rowid",
            session_id,
        )


def _decode_action(row: Row) -> Row:
    row["params"] = json.loads(row["params"])
    row["record"] = json.loads(row["record"])
    return row
