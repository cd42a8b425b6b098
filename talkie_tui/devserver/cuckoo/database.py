"""The hub's base of every store: the shared connection, one-statement writes, transactions that
nest, and group commit.

Group commit: the hot paths (a person's send, an agent socket's frames, pushing events) write
inside `grouped()`. Their writes join one transaction that is committed once the current turn
of the event loop is over, so the messages, events and acknowledgements of many requests share
one COMMIT instead of one each. Nothing they cause leaves the hub before that COMMIT: socket
frames and pushes wait in `after_commit`, an HTTP answer waits in `durable()`. Any other read or
write commits the open group first, so the rest of the hub never answers from, or writes over,
rows that are not committed yet.

Every store method runs on the event loop's thread (the hub keeps no database work in worker
threads), so "the open group" is one per hub.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from talkie_tui.devserver.common.sqlite import Database

logger = logging.getLogger(__name__)

Effect = Callable[[], None]


class HubDatabase(Database):
    """`Database` with `_write` (one statement, its own transaction), nesting transactions
    (inside another one a block is a savepoint) and the group commit of `grouped()`."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self._grouping = 0  # `grouped()` blocks now running (they nest)
        self._group_open = False  # a transaction of grouped writes waits for its COMMIT
        self._group_done: asyncio.Future[None] | None = None  # made when `durable()` waits
        self._effects: list[tuple[Effect, Effect | None]] = []

    # group commit

    @contextmanager
    def grouped(self) -> Iterator[None]:
        """Writes in this block join the turn's transaction; an error undoes this block only
        (a block inside another is part of it: the outermost one is undone).

        The block must not await: the COMMIT runs as soon as the loop gets control back.
        Without a running loop (a script, a unit test) the block commits when it ends.
        """
        with self._lock:
            if not self._group_open:
                self._db.execute("BEGIN IMMEDIATE")
                self._group_open = True
                if _loop_running():  # else the outermost block commits when it ends
                    asyncio.get_running_loop().call_soon(self.flush)
            outermost = not self._grouping
            self._grouping += 1
            try:
                if outermost:
                    with self._savepoint():
                        yield
                else:
                    yield  # part of the enclosing block, undone with it
            finally:
                self._grouping -= 1
            if not self._grouping and not _loop_running():
                self.flush()

    def after_commit(self, effect: Effect, failed: Effect | None = None) -> None:
        """Run `effect` once what was written so far is committed (now, when nothing waits);
        `failed` instead if that COMMIT fails."""
        if self._group_open:
            self._effects.append((effect, failed))
        else:
            effect()

    async def durable(self) -> None:
        """Return once the grouped writes made so far are committed (raise if that failed)."""
        if not self._group_open:
            return
        if self._group_done is None:
            self._group_done = asyncio.get_running_loop().create_future()
        await asyncio.shield(self._group_done)

    def flush(self) -> None:
        """Commit the open group, if any, then run what waited for it."""
        with self._lock:
            if not self._group_open:
                return
            self._group_open = False
            effects, self._effects = self._effects, []
            done, self._group_done = self._group_done, None
            error: sqlite3.Error | None = None
            try:
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                error = exc
                logger.exception("the hub could not commit a group of writes")
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
        for effect, failed in effects:
            action = failed if error is not None else effect
            if action is None:
                continue
            try:
                action()
            except Exception:
                logger.exception("an effect of a commit failed")
        if done is not None and not done.done():
            if error is not None:
                done.set_exception(error)
            else:
                done.set_result(None)

    @contextmanager
    def _savepoint(self) -> Iterator[None]:
        """A part of the open transaction: on an error its writes and effects are undone."""
        mark = len(self._effects)
        self._db.execute("SAVEPOINT part")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK TO part")
            self._db.execute("RELEASE part")
            del self._effects[mark:]
            raise
        self._db.execute("RELEASE part")

    def _memberships_changed(self) -> None:
        """Names or memberships changed: what the stores keep of them is stale (a hook)."""

    def _settle(self) -> None:
        """Before a statement outside `grouped()`: commit the open group first."""
        if self._group_open and not self._grouping:
            self.flush()

    # the statements of every store

    def _write(self, sql: str, params: Any = ()) -> sqlite3.Cursor:
        """One statement: its own transaction (autocommit), or part of the open one."""
        with self._lock:
            self._settle()
            return self._db.execute(sql, params)

    def _update(self, table: str, row_id: str, fields: dict[str, Any]) -> None:
        """Set some columns (names of the code's own, never a client's) of one row by id."""
        assignments = ", ".join(f"{name} = :{name}" for name in fields)
        self._write(
            f"UPDATE {table} SET {assignments} WHERE id = :row_id",  # noqa: S608
            {**fields, "row_id": row_id},
        )

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """The base's transaction; inside a grouped one, a savepoint of it."""
        with self._lock:
            self._settle()
            if self._db.in_transaction:
                with self._savepoint():
                    yield self._db
                return
            with super()._transaction() as db:
                yield db

    def _before_statement(self) -> None:
        self._settle()

    def close(self) -> None:
        """Commit what is grouped, then close the connection."""
        self.flush()
        super().close()


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True
