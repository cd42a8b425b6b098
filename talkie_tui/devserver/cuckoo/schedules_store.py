"""Storage of schedules: what an agent runs on a timer in a conversation (`schedules.py`).

A deleted schedule keeps its row (status `deleted`): a send for it is then refused as deleted,
not as unknown, and the messages it sent still name it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from talkie_tui.devserver.common.sqlite import Row
from talkie_tui.devserver.cuckoo.database import HubDatabase

SCHEDULES_SCHEMA = """
CREATE TABLE IF NOT EXISTS schedules (
    id TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    agent_id TEXT NOT NULL,
    title TEXT NOT NULL,
    instruction TEXT NOT NULL,
    cadence TEXT NOT NULL,
    -- pending (the agent has not confirmed it), active, paused, deleted
    status TEXT NOT NULL,
    -- who paused it (user or agent): only the person resumes their own pause
    paused_by TEXT,
    confirmed INTEGER NOT NULL DEFAULT 0,
    created_by TEXT NOT NULL,
    next_run_at TEXT,
    last_run_at TEXT,
    missed_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS schedules_conversation ON schedules(conversation_id, created_at);
"""

COLUMNS = (
    "id",
    "conversation_id",
    "agent_id",
    "title",
    "instruction",
    "cadence",
    "status",
    "paused_by",
    "confirmed",
    "created_by",
    "next_run_at",
    "last_run_at",
    "missed_at",
    "created_at",
    "updated_at",
)


def _decode(row: Row | None) -> Row | None:
    if row is not None:
        row["cadence"] = json.loads(row["cadence"])
        row["confirmed"] = bool(row["confirmed"])
    return row


def _encoded(fields: dict[str, Any]) -> dict[str, Any]:
    out = dict(fields)
    if "cadence" in out:
        out["cadence"] = json.dumps(out["cadence"], ensure_ascii=False)
    if "confirmed" in out:
        out["confirmed"] = int(bool(out["confirmed"]))
    return out


class SchedulesStore(HubDatabase):
    """The schedules table (part of `Storage`)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        with self._lock:
            self._db.executescript(SCHEDULES_SCHEMA)
            # A database made before messages named their schedule gains the column.
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(messages)")}
            if "schedule_id" not in columns:
                self._db.execute("ALTER TABLE messages ADD COLUMN schedule_id TEXT")

    def add_schedule(self, row: Row) -> Row:
        """Insert a schedule and return it."""
        values = _encoded({name: row.get(name) for name in COLUMNS})
        self._write(
            f"INSERT INTO schedules ({', '.join(COLUMNS)})"  # noqa: S608
            f" VALUES ({', '.join(f':{name}' for name in COLUMNS)})",
            values,
        )
        stored = self.get_schedule(row["id"])
        assert stored is not None
        return stored

    def get_schedule(self, schedule_id: str) -> Row | None:
        """A schedule by id (a deleted one too), or None."""
        return _decode(self._one("SELECT * FROM schedules WHERE id = ?", schedule_id))

    def schedules_in(self, conversation_id: str) -> list[Row]:
        """A conversation's schedules that are not deleted, oldest first."""
        rows = self._all(
            "SELECT * FROM schedules WHERE conversation_id = ? AND status != 'deleted'"
            " ORDER BY created_at, id",
            conversation_id,
        )
        return [row for row in map(_decode, rows) if row is not None]

    def update_schedule(self, schedule_id: str, **fields: Any) -> Row:
        """Change some columns of a schedule and return it."""
        self._update("schedules", schedule_id, _encoded(fields))
        stored = self.get_schedule(schedule_id)
        assert stored is not None
        return stored

    def schedule_titles(self, schedule_ids: list[str]) -> dict[str, str]:
        """The titles of these schedules by id."""
        if not schedule_ids:
            return {}
        marks = ", ".join("?" for _ in schedule_ids)
        rows = self._all(
            f"SELECT id, title FROM schedules WHERE id IN ({marks})",  # noqa: S608
            *schedule_ids,
        )
        return {str(row["id"]): str(row["title"]) for row in rows}
