"""The hub's base of every store: the shared connection, plus one-statement writes."""

from __future__ import annotations

import sqlite3
from typing import Any

from ..common.sqlite import Database


class HubDatabase(Database):
    """`Database` with `_write`: one statement is its own transaction (autocommit), so a
    single insert or update needs no BEGIN and COMMIT of its own."""

    def _write(self, sql: str, params: Any = ()) -> sqlite3.Cursor:
        with self._lock:
            return self._db.execute(sql, params)
