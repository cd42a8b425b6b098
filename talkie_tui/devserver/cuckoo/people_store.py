"""Storage of people: users, their signed-in devices (sessions), sign-in codes, API keys."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from talkie_tui.devserver.common.sqlite import Row
from talkie_tui.devserver.cuckoo.database import HubDatabase


class PeopleStore(HubDatabase):
    """The people tables (part of `Storage`)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        # Ids of users known to exist (users are never deleted): a dev-mode request names its
        # user in a header, and looking it up each time would be a read per request.
        self._known_users: set[str] = set()

    def get_meta(self, name: str) -> str | None:
        """A value of the hub's own (its signing key), or None."""
        row = self._one("SELECT value FROM meta WHERE name = ?", name)
        return str(row["value"]) if row is not None else None

    def set_meta(self, name: str, value: str) -> None:
        """Keep a value of the hub's own."""
        with self._transaction() as db:
            db.execute("INSERT OR REPLACE INTO meta (name, value) VALUES (?, ?)", (name, value))

    # users

    def get_user(self, user_id: str) -> Row | None:
        """A user by id, or None."""
        return self._one("SELECT * FROM users WHERE id = ?", user_id)

    def ensure_user(self, user_id: str, display_name: str, now: Callable[[], str]) -> None:
        """Make a user with this id and name unless one exists (a dev-mode caller); `now`
        gives the time of its making."""
        if user_id in self._known_users:
            return
        if self.get_user(user_id) is None:
            self.create_user(user_id, None, display_name, now())
        self._known_users.add(user_id)

    def user_by_email(self, email: str) -> Row | None:
        """A user by e-mail address, or None."""
        return self._one("SELECT * FROM users WHERE email = ?", email)

    def create_user(self, user_id: str, email: str | None, display_name: str, now: str) -> Row:
        """Insert a user (a dev user has no address) and return it."""
        with self._transaction() as db:
            db.execute(
                "INSERT OR IGNORE INTO users (id, email, display_name, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (user_id, email, display_name, now, now),
            )
        row = self.get_user(user_id)
        assert row is not None
        return row

    def set_display_name(self, user_id: str, display_name: str, now: str) -> None:
        """Rename a user."""
        with self._transaction() as db:
            db.execute(
                "UPDATE users SET display_name = ?, updated_at = ? WHERE id = ?",
                (display_name, now, user_id),
            )
        self._memberships_changed()

    # sign-in codes

    def put_code(self, email: str, code_hash: str, expires_at: str) -> None:
        """Replace the pending sign-in code of an address."""
        with self._transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO sign_in_codes (email, code_hash, expires_at, attempts)"
                " VALUES (?, ?, ?, 0)",
                (email, code_hash, expires_at),
            )

    def get_code(self, email: str) -> Row | None:
        """The pending code of an address, or None."""
        return self._one("SELECT * FROM sign_in_codes WHERE email = ?", email)

    def count_code_attempt(self, email: str) -> None:
        """One more wrong guess."""
        with self._transaction() as db:
            db.execute("UPDATE sign_in_codes SET attempts = attempts + 1 WHERE email = ?", (email,))

    def drop_code(self, email: str) -> None:
        """Forget the code of an address (used or spent)."""
        with self._transaction() as db:
            db.execute("DELETE FROM sign_in_codes WHERE email = ?", (email,))

    # sessions (devices)

    def create_session(self, row: Row, max_devices: int) -> list[str]:
        """Insert a session; sign out the longest-unused ones past `max_devices` (their ids)."""
        with self._transaction() as db:
            db.execute(
                "INSERT INTO sessions (id, user_id, token_hash, name, created_at, last_seen_at,"
                " expires_at) VALUES (:id, :user_id, :token_hash, :name, :created_at,"
                " :last_seen_at, :expires_at)",
                row,
            )
            ids = [
                str(found[0])
                for found in db.execute(
                    "SELECT id FROM sessions WHERE user_id = ?"
                    " ORDER BY COALESCE(last_seen_at, created_at) DESC, rowid DESC",
                    (row["user_id"],),
                ).fetchall()
            ]
            evicted = [sid for sid in ids[max_devices:] if sid != row["id"]]
            db.executemany("DELETE FROM sessions WHERE id = ?", [(sid,) for sid in evicted])
        return evicted

    def session_by_hash(self, token_hash: str, now: str) -> Row | None:
        """The live session of a token (touching its last use, to the minute), or None."""
        row = self._one(
            "SELECT * FROM sessions WHERE token_hash = ? AND expires_at > ?", token_hash, now
        )
        # A write per request would end the hub's grouped commit early; devices show the minute.
        if row is not None and (row["last_seen_at"] or "")[:16] != now[:16]:
            with self._transaction() as db:
                db.execute("UPDATE sessions SET last_seen_at = ? WHERE id = ?", (now, row["id"]))
        return row

    def sessions_of(self, user_id: str) -> list[Row]:
        """A user's sessions, most recently used first."""
        return self._all(
            "SELECT * FROM sessions WHERE user_id = ?"
            " ORDER BY COALESCE(last_seen_at, created_at) DESC",
            user_id,
        )

    def delete_session(self, user_id: str, session_id: str) -> bool:
        """Sign out one device of a user; False when there is no such device."""
        return self._changed(
            "DELETE FROM sessions WHERE id = ? AND user_id = ?", session_id, user_id
        )

    def delete_other_sessions(self, user_id: str, keep: str | None) -> list[str]:
        """Sign out every device of a user but `keep`; the ids of those signed out."""
        with self._transaction() as db:
            found = db.execute(
                "DELETE FROM sessions WHERE user_id = ? AND id IS NOT ? RETURNING id",
                (user_id, keep),
            ).fetchall()
        return [str(row[0]) for row in found]

    # API keys

    def create_api_key(self, row: Row) -> None:
        """Insert an API key (its token only as a hash)."""
        with self._transaction() as db:
            db.execute(
                "INSERT INTO api_keys (id, user_id, name, token_hash, created_at)"
                " VALUES (:id, :user_id, :name, :token_hash, :created_at)",
                row,
            )

    def api_key_by_hash(self, token_hash: str) -> Row | None:
        """The unrevoked API key of a token, or None."""
        return self._one(
            "SELECT * FROM api_keys WHERE token_hash = ? AND revoked_at IS NULL", token_hash
        )

    def api_keys_of(self, user_id: str) -> list[Row]:
        """A user's unrevoked API keys, newest first."""
        return self._all(
            "SELECT * FROM api_keys WHERE user_id = ? AND revoked_at IS NULL"
            " ORDER BY created_at DESC",
            user_id,
        )

    def revoke_api_key(self, user_id: str, key_id: str, now: str) -> bool:
        """Revoke one of a user's API keys; False when there is no such key."""
        return self._changed(
            "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND user_id = ?"
            " AND revoked_at IS NULL",
            now,
            key_id,
            user_id,
        )
