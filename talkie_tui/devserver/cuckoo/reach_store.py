"""Storage of how people reach agents: the public catalogue, each person's contacts (pinned,
muted, archived, removed) and reports about agents.

A contact is an agent a person has a conversation with; its row here only holds what the person
chose about it, so an agent reached before any choice has no row and the defaults.
"""

from __future__ import annotations

from talkie_tui.devserver.common.sqlite import Row
from talkie_tui.devserver.cuckoo.database import HubDatabase

REACH_SCHEMA = """
CREATE TABLE IF NOT EXISTS listings (
    agent_id TEXT PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,
    listed_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS contacts (
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    agent_id TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    pinned INTEGER NOT NULL DEFAULT 0,
    muted_until TEXT,
    archived INTEGER NOT NULL DEFAULT 0,
    -- removed by the person: out of their lists until they add the agent again
    removed INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (user_id, agent_id)
);
CREATE TABLE IF NOT EXISTS reports (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    agent_id TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    reason TEXT NOT NULL,
    note TEXT,
    message_id TEXT,
    created_at TEXT NOT NULL
);
"""

CHOICES = ("pinned", "muted_until", "archived")
"""What a person chooses about a contact (`PATCH /v1/client/contacts/{id}`)."""


class ReachStore(HubDatabase):
    """The catalogue, contact and report tables (part of `Storage`)."""

    # the catalogue

    def set_listed(self, agent_id: str, listed: bool, now: str) -> None:
        """List an agent in the public catalogue, or take it out."""
        if listed:
            self._write(
                "INSERT OR IGNORE INTO listings (agent_id, listed_at) VALUES (?, ?)",
                (agent_id, now),
            )
        else:
            self._write("DELETE FROM listings WHERE agent_id = ?", (agent_id,))

    def is_listed(self, agent_id: str) -> bool:
        """Whether an agent is in the catalogue."""
        return self._one("SELECT 1 FROM listings WHERE agent_id = ?", agent_id) is not None

    def listed_agents(self) -> list[Row]:
        """The agents of the catalogue, by name (their `starters` still JSON text)."""
        return self._all(
            "SELECT a.* FROM agents a JOIN listings l ON l.agent_id = a.id"
            " ORDER BY a.display_name COLLATE NOCASE, a.handle"
        )

    # contacts

    def contact_rows(self, user_id: str) -> list[Row]:
        """Every agent a person has a conversation with, with the conversation's id, the
        person's choices (defaults where there is no row) and whether they blocked it."""
        return self._all(
            "SELECT a.*, c.id AS conversation_id, c.created_at AS added_at,"
            " COALESCE(k.pinned, 0) AS pinned, k.muted_until,"
            " COALESCE(k.archived, 0) AS archived, COALESCE(k.removed, 0) AS removed,"
            " EXISTS (SELECT 1 FROM blocks b WHERE b.user_id = c.user_id"
            " AND b.agent_id = c.agent_id) AS blocked"
            " FROM conversations c JOIN agents a ON a.id = c.agent_id"
            " LEFT JOIN contacts k ON k.user_id = c.user_id AND k.agent_id = c.agent_id"
            " WHERE c.user_id = ? ORDER BY c.created_at",
            user_id,
        )

    def set_contact(self, user_id: str, agent_id: str, **choices: object) -> None:
        """Change some of a person's choices about an agent (`CHOICES`, and `removed`)."""
        for name in choices:
            assert name in (*CHOICES, "removed"), name
        with self._transaction() as db:
            db.execute(
                "INSERT OR IGNORE INTO contacts (user_id, agent_id) VALUES (?, ?)",
                (user_id, agent_id),
            )
            for name, value in choices.items():
                # The column names are checked against CHOICES above: never the caller's text.
                sql = f"UPDATE contacts SET {name} = ? WHERE user_id = ? AND agent_id = ?"  # noqa: S608
                db.execute(sql, (value, user_id, agent_id))

    def removed_agents(self, user_id: str) -> set[str]:
        """The agents a person removed from their contacts."""
        rows = self._all("SELECT agent_id FROM contacts WHERE user_id = ? AND removed = 1", user_id)
        return {str(row["agent_id"]) for row in rows}

    # reports

    def add_report(self, row: Row) -> None:
        """Keep a person's report about an agent."""
        self._write(
            "INSERT INTO reports (user_id, agent_id, reason, note, message_id, created_at)"
            " VALUES (:user_id, :agent_id, :reason, :note, :message_id, :created_at)",
            row,
        )

    def reports_about(self, agent_id: str) -> list[Row]:
        """What people reported about an agent, oldest first."""
        return self._all("SELECT * FROM reports WHERE agent_id = ? ORDER BY seq", agent_id)
