"""What the bridge remembers between runs, in one small SQLite file (WAL).

- `handled`: the ids of the hub's events whose work is done (kept a week): a redelivered event
  is acknowledged and nothing else; the event ids feed the send's idempotency keys too.
- `cursor`: the last event up to which everything received was handled, for `?since=`.
- `conversations`: the Talkie thread of each hub conversation, whether the conversation was
  left (`conversation.left`: no more replies) and whether a stranger was told it is private.
- `actions`: the short key a Confirm / Cancel button carries, the Talkie action it names and the
  conversation it was offered in (a tap elsewhere decides nothing).

The file is opened by one bridge at a time; its calls are quick and made on the event loop.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from talkie_tui.config import ensure_private_dir, state_dir

__all__ = ["BridgeState", "KeptAction", "default_state_path"]

HANDLED_DAYS = 7

_SCHEMA = """
CREATE TABLE IF NOT EXISTS handled (event_id TEXT PRIMARY KEY, at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS cursor (agent_id TEXT PRIMARY KEY, event_id TEXT NOT NULL);
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
"""


def default_state_path(agent_id: str) -> Path:
    """The bridge's file for one agent, in the user's state folder."""
    folder = ensure_private_dir(state_dir() / "bridge")
    return folder / f"cuckoo-{agent_id}.sqlite3"


@dataclass(frozen=True, slots=True)
class KeptAction:
    """An action offered as buttons: the Talkie action and the conversation it is in."""

    action_id: str
    conversation_id: str


class BridgeState:
    """The bridge's SQLite file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        self._db.execute("DELETE FROM handled WHERE at < ?", (time.time() - HANDLED_DAYS * 86_400,))

    def close(self) -> None:
        """Close the file."""
        self._db.close()

    # --- events -------------------------------------------------------------------------

    def is_handled(self, event_id: str) -> bool:
        """True when the event's work was done (it may be acknowledged again at once)."""
        row = self._db.execute("SELECT 1 FROM handled WHERE event_id = ?", (event_id,))
        return row.fetchone() is not None

    def mark_handled(self, event_id: str) -> None:
        """The event's work is done."""
        self._db.execute(
            "INSERT OR IGNORE INTO handled (event_id, at) VALUES (?, ?)", (event_id, time.time())
        )

    def cursor(self, agent_id: str) -> str | None:
        """The last event up to which everything received was handled."""
        row = self._db.execute("SELECT event_id FROM cursor WHERE agent_id = ?", (agent_id,))
        found = row.fetchone()
        return str(found[0]) if found else None

    def set_cursor(self, agent_id: str, event_id: str) -> None:
        """Move the cursor."""
        self._db.execute(
            "INSERT INTO cursor (agent_id, event_id) VALUES (?, ?) "
            "ON CONFLICT(agent_id) DO UPDATE SET event_id = excluded.event_id",
            (agent_id, event_id),
        )

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

    def has_left(self, conversation_id: str) -> bool:
        """True once the agent left (was blocked in) the conversation."""
        row = self._db.execute(
            "SELECT left_at FROM conversations WHERE conversation_id = ?", (conversation_id,)
        ).fetchone()
        return bool(row and row[0] is not None)

    def mark_left(self, conversation_id: str) -> None:
        """The conversation is over for the agent: nothing is sent there again."""
        self._ensure(conversation_id)
        self._db.execute(
            "UPDATE conversations SET left_at = ? WHERE conversation_id = ?",
            (time.time(), conversation_id),
        )

    def mark_joined(self, conversation_id: str) -> None:
        """The agent is (again) in the conversation: a join after a block starts afresh."""
        self._ensure(conversation_id)
        self._db.execute(
            "UPDATE conversations SET left_at = NULL WHERE conversation_id = ?",
            (conversation_id,),
        )

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

    def keep_action(self, key: str, action_id: str, conversation_id: str) -> None:
        """Remember which action a button key names, and where it was offered."""
        self._db.execute(
            "INSERT OR IGNORE INTO actions (key, action_id, conversation_id) VALUES (?, ?, ?)",
            (key, action_id, conversation_id),
        )

    def action(self, key: str) -> KeptAction | None:
        """The action a button key names."""
        row = self._db.execute(
            "SELECT action_id, conversation_id FROM actions WHERE key = ?", (key,)
        ).fetchone()
        return KeptAction(str(row[0]), str(row[1])) if row else None
