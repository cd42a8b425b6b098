"""A server's SQLite database: one WAL connection shared by threads, its schema, transactions."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

Row = dict[str, Any]


def database_file(chosen: Path | None, default: Path) -> Path:
    """The SQLite file a server uses: `chosen` (`--db`), or its `default` (in talkie's data
    folder, which its configuration knows)."""
    return Path(chosen) if chosen is not None else default


def folder_beside(chosen: Path | None, database: Path, suffix: str) -> Path:
    """The folder a server keeps file bytes in: `chosen`, or `<database stem>-<suffix>` beside
    its database."""
    if chosen is not None:
        return Path(chosen)
    return database.parent / f"{database.stem}-{suffix}"


class Database:
    """One SQLite connection shared by the event loop and worker threads, guarded by a lock.

    A server's storage subclasses it: `SCHEMA` (`CREATE … IF NOT EXISTS`, run on every open)
    and its queries, written with `_transaction`, `_one` and `_all`.
    """

    SCHEMA: ClassVar[str] = ""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._db.executescript(self.SCHEMA)

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._db.close()

    def _before_statement(self) -> None:
        """Called under the lock before each statement (a hook: the hub commits its group)."""

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._before_statement()
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _changed(self, sql: str, *args: Any) -> bool:
        """Run one statement in its transaction; whether it changed a row (an insert not
        ignored, an update or a delete that matched)."""
        with self._transaction() as db:
            return db.execute(sql, args).rowcount > 0

    def _one(self, sql: str, *args: Any) -> Row | None:
        with self._lock:
            self._before_statement()
            row = self._db.execute(sql, args).fetchone()
        return dict(row) if row is not None else None

    def _all(self, sql: str, *args: Any) -> list[Row]:
        with self._lock:
            self._before_statement()
            return [dict(row) for row in self._db.execute(sql, args).fetchall()]
