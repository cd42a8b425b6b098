"""What the bridge remembers between runs, in one small SQLite file (WAL).

- `handled`: the ids of the hub's events whose work is done (kept a week): a redelivered event
  is acknowledged and nothing else; the event ids feed the send's idempotency keys too.
- `cursor`: the last event up to which everything received was handled, for `?since=`.
- `pending`: events a webhook binding's hub was told were received (its 2xx) before their work
  was done: the bridge does that work after a restart too (see `webhook`).
- `conversations`: the Talkie thread of each hub conversation, whether the conversation was
  left (`conversation.left`: no more replies) and the hub's time of the join or leave that says
  so (a webhook's events may come out of order: an older one changes nothing), and whether a
  stranger was told it is private.
- `actions`: the short key a Confirm / Cancel button carries, the Talkie action it names and the
  conversation it was offered in (a tap elsewhere decides nothing); when its offer expires and
  when it ended. An action that ended (or whose undecided offer expired) is forgotten after a
  day: a tap on its buttons after that decides nothing.
- `follows`: actions confirmed into their undo window (`running` until `undoUntil`), whose end
  the bridge tells the person once the Talkie server has it (kept across a restart).

The file is opened by one bridge at a time; its calls are quick and made on the event loop.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from talkie_tui.config import ensure_private_dir, state_dir

__all__ = ["BridgeState", "Follow", "KeptAction", "default_state_path"]

HANDLED_DAYS = 7

_SCHEMA = """
CREATE TABLE IF NOT EXISTS handled (event_id TEXT PRIMARY KEY, at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS cursor (agent_id TEXT PRIMARY KEY, event_id TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS pending (
    event_id TEXT PRIMARY KEY,
    event TEXT NOT NULL,
    at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS conversations (
    conversation_id TEXT PRIMARY KEY,
    thread_id TEXT,
    left_at REAL,
    told_private INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS actions (
    key TEXT PRIMARY KEY,
    action_id TEXT NOT NULL,
    conversation_id TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS follows (
    key TEXT PRIMARY KEY,
    action_id TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    undo_until REAL NOT NULL
);
"""
# Columns added after a table's first version (a file from then gains them on open).
_ADDED_COLUMNS = {
    "actions": {"expires_at": "REAL", "ended_at": "REAL"},
    "conversations": {"membership_at": "TEXT"},
}
ENDED_ACTION_DAYS = 1


def _hub_time(text: object) -> datetime | None:
    """A hub's `created_at` (ISO 8601), or None when there is none to read."""
    if not isinstance(text, str):
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def default_state_path(agent_id: str) -> Path:
    """The bridge's file for one agent, in the user's state folder."""
    folder = ensure_private_dir(state_dir() / "bridge")
    return folder / f"cuckoo-{agent_id}.sqlite3"


@dataclass(frozen=True, slots=True)
class KeptAction:
    """An action offered as buttons: the Talkie action and the conversation it is in."""

    action_id: str
    conversation_id: str


@dataclass(frozen=True, slots=True)
class Follow:
    """An action in its undo window whose end the person is to be told."""

    key: str
    action_id: str
    conversation_id: str
    undo_until: float  # seconds since the epoch


class BridgeState:
    """The bridge's SQLite file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        for table, added in _ADDED_COLUMNS.items():
            columns = {row[1] for row in self._db.execute(f"PRAGMA table_info({table})")}
            for name, kind in added.items():
                if name not in columns:
                    self._db.execute(f"ALTER TABLE {table} ADD COLUMN {name} {kind}")
        self._db.execute("DELETE FROM handled WHERE at < ?", (time.time() - HANDLED_DAYS * 86_400,))
        self.prune_actions()

    def close(self) -> None:
        """Close the file."""
        self._db.close()

    # --- events -------------------------------------------------------------------------

    def is_handled(self, event_id: str) -> bool:
        """True when the event's work was done (it may be acknowledged again at once)."""
        row = self._db.execute("SELECT 1 FROM handled WHERE event_id = ?", (event_id,))
        return row.fetchone() is not None

    def mark_handled(self, event_id: str, cursor: tuple[str, str] | None = None) -> None:
        """The event's work is done (no longer pending); `cursor` (agent id, event id) moves
        in the same commit."""
        # One transaction: one WAL commit per event instead of two or three, so checkpoints
        # (an fsync on the event loop) come less often.
        with self._db:
            self._db.execute("BEGIN")
            self._db.execute(
                "INSERT OR IGNORE INTO handled (event_id, at) VALUES (?, ?)",
                (event_id, time.time()),
            )
            self._db.execute("DELETE FROM pending WHERE event_id = ?", (event_id,))
            if cursor is not None:
                self._set_cursor(*cursor)

    def keep_pending(self, event: dict[str, Any]) -> None:
        """Keep an event whose receipt is acknowledged before its work is done."""
        self._db.execute(
            "INSERT OR IGNORE INTO pending (event_id, event, at) VALUES (?, ?, ?)",
            (str(event["id"]), json.dumps(event, ensure_ascii=False), time.time()),
        )

    def pending(self) -> list[dict[str, Any]]:
        """The events kept by `keep_pending` whose work is not done yet, oldest first."""
        rows = self._db.execute("SELECT event FROM pending ORDER BY at, rowid")
        return [json.loads(row[0]) for row in rows]

    def _set_cursor(self, agent_id: str, event_id: str) -> None:
        self._db.execute(
            "INSERT INTO cursor (agent_id, event_id) VALUES (?, ?) "
            "ON CONFLICT(agent_id) DO UPDATE SET event_id = excluded.event_id",
            (agent_id, event_id),
        )

    def cursor(self, agent_id: str) -> str | None:
        """The last event up to which everything received was handled."""
        row = self._db.execute("SELECT event_id FROM cursor WHERE agent_id = ?", (agent_id,))
        found = row.fetchone()
        return str(found[0]) if found else None

    def set_cursor(self, agent_id: str, event_id: str) -> None:
        """Move the cursor."""
        self._set_cursor(agent_id, event_id)

    # --- conversations ------------------------------------------------------------------

    def _ensure(self, conversation_id: str) -> None:
        self._db.execute(
            "INSERT OR IGNORE INTO conversations (conversation_id) VALUES (?)", (conversation_id,)
        )

    def thread_of(self, conversation_id: str) -> str | None:
        """The Talkie thread that serves the conversation, once it has one."""
        row = self._db.execute(
            "SELECT thread_id FROM conversations WHERE conversation_id = ?", (conversation_id,)
        ).fetchone()
        return str(row[0]) if row and row[0] else None

    def set_thread(self, conversation_id: str, thread_id: str) -> None:
        """Remember the conversation's Talkie thread."""
        self._ensure(conversation_id)
        self._db.execute(
            "UPDATE conversations SET thread_id = ? WHERE conversation_id = ?",
            (thread_id, conversation_id),
        )

    def conversations(self) -> list[str]:
        """The conversations the agent is in (joined, or answered in, and not left)."""
        rows = self._db.execute("SELECT conversation_id FROM conversations WHERE left_at IS NULL")
        return [str(row[0]) for row in rows]

    def has_left(self, conversation_id: str, since: str | None = None) -> bool:
        """True once the agent left (was blocked in) the conversation; for a message the hub
        made at `since`, only if the leave is not older: the hub takes no message there while
        the agent is blocked, so a newer one means it joined again (its join still on the way)."""
        row = self._db.execute(
            "SELECT left_at, membership_at FROM conversations WHERE conversation_id = ?",
            (conversation_id,),
        ).fetchone()
        if not row or row[0] is None:
            return False
        made, left = _hub_time(since), _hub_time(row[1])
        return made is None or left is None or made <= left

    def mark_left(self, conversation_id: str, at: str | None = None) -> bool:
        """The conversation is over for the agent: nothing is sent there again. `at` is the
        hub's time of the leave; one older than the join already seen changes nothing. Whether
        it was taken."""
        return self._membership(conversation_id, at, time.time())

    def mark_joined(self, conversation_id: str, at: str | None = None) -> bool:
        """The agent is (again) in the conversation: a join after a block starts afresh (one
        older than the leave already seen changes nothing). Whether it was taken."""
        return self._membership(conversation_id, at, None)

    def _membership(self, conversation_id: str, at: str | None, left_at: float | None) -> bool:
        self._ensure(conversation_id)
        row = self._db.execute(
            "SELECT membership_at FROM conversations WHERE conversation_id = ?",
            (conversation_id,),
        ).fetchone()
        moment, known = _hub_time(at), _hub_time(row[0] if row else None)
        if moment is not None and known is not None and moment < known:
            return False
        self._db.execute(
            "UPDATE conversations SET left_at = ?, membership_at = ? WHERE conversation_id = ?",
            (left_at, at if moment is not None else None, conversation_id),
        )
        return True

    def told_private(self, conversation_id: str) -> bool:
        """True once a stranger in the conversation was told the agent is private."""
        row = self._db.execute(
            "SELECT told_private FROM conversations WHERE conversation_id = ?",
            (conversation_id,),
        ).fetchone()
        return bool(row and row[0])

    def mark_told_private(self, conversation_id: str) -> None:
        """The conversation had its one "this agent is private" reply."""
        self._ensure(conversation_id)
        self._db.execute(
            "UPDATE conversations SET told_private = 1 WHERE conversation_id = ?",
            (conversation_id,),
        )

    # --- actions ------------------------------------------------------------------------

    def keep_action(
        self, key: str, action_id: str, conversation_id: str, expires_at: float | None = None
    ) -> None:
        """Remember which action a button key names, where it was offered, and when its offer
        expires (seconds since the epoch)."""
        self._db.execute(
            "INSERT OR IGNORE INTO actions (key, action_id, conversation_id, expires_at) "
            "VALUES (?, ?, ?, ?)",
            (key, action_id, conversation_id, expires_at),
        )

    def action(self, key: str) -> KeptAction | None:
        """The action a button key names."""
        row = self._db.execute(
            "SELECT action_id, conversation_id FROM actions WHERE key = ?", (key,)
        ).fetchone()
        return KeptAction(str(row[0]), str(row[1])) if row else None

    def mark_action_decided(self, key: str) -> None:
        """A decision left the action open (running): its offer's expiry no longer ends it."""
        self._db.execute("UPDATE actions SET expires_at = NULL WHERE key = ?", (key,))

    def mark_action_ended(self, key: str) -> None:
        """The action ended (done, failed, cancelled, expired): forgotten after a day."""
        self._db.execute(
            "UPDATE actions SET ended_at = ? WHERE key = ? AND ended_at IS NULL",
            (time.time(), key),
        )

    def prune_actions(self, now: float | None = None) -> int:
        """Forget the actions that ended, or whose undecided offer expired, over a day ago (not
        one still followed); how many."""
        before = (time.time() if now is None else now) - ENDED_ACTION_DAYS * 86_400
        cursor = self._db.execute(
            "DELETE FROM actions WHERE (ended_at < ? OR (ended_at IS NULL AND expires_at < ?)) "
            "AND key NOT IN (SELECT key FROM follows)",
            (before, before),
        )
        return cursor.rowcount

    # --- actions in their undo window ---------------------------------------------------

    def keep_follow(self, follow: Follow) -> None:
        """Follow an action until it ends (kept until `drop_follow`)."""
        self._db.execute(
            "INSERT INTO follows (key, action_id, conversation_id, undo_until) "
            "VALUES (?, ?, ?, ?) ON CONFLICT(key) DO UPDATE SET undo_until = excluded.undo_until",
            (follow.key, follow.action_id, follow.conversation_id, follow.undo_until),
        )

    def follow(self, key: str) -> Follow | None:
        """The follow of the action with button key `key`, if it is followed."""
        row = self._db.execute(
            "SELECT key, action_id, conversation_id, undo_until FROM follows WHERE key = ?",
            (key,),
        ).fetchone()
        return Follow(str(row[0]), str(row[1]), str(row[2]), float(row[3])) if row else None

    def follows(self) -> list[Follow]:
        """Every action followed, the soonest first."""
        rows = self._db.execute(
            "SELECT key, action_id, conversation_id, undo_until FROM follows ORDER BY undo_until"
        )
        return [Follow(str(r[0]), str(r[1]), str(r[2]), float(r[3])) for r in rows]

    def drop_follow(self, key: str) -> None:
        """The action's end was told (or needs no telling)."""
        self._db.execute("DELETE FROM follows WHERE key = ?", (key,))
