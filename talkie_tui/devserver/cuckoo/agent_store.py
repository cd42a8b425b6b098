"""Storage of agents, their bindings (how their backend connects) and pairing codes."""

from __future__ import annotations

import json
from typing import Any

from talkie_tui.devserver.common.sqlite import Row
from talkie_tui.devserver.cuckoo.database import HubDatabase


def _decode_agent(row: Row | None) -> Row | None:
    if row is not None:
        row["starters"] = json.loads(row["starters"])
        row["supports_schedules"] = bool(row["supports_schedules"])
        row["unreachable"] = bool(row["unreachable"])
    return row


class AgentStore(HubDatabase):
    """The agent tables (part of `Storage`)."""

    def create_agent(self, row: Row) -> Row:
        """Insert an agent and return it."""
        values = {**row, "starters": json.dumps(row.get("starters") or [])}
        values["supports_schedules"] = int(bool(row.get("supports_schedules")))
        with self._transaction() as db:
            db.execute(
                "INSERT INTO agents (id, handle, display_name, description, owner_id, starters,"
                " supports_schedules, created_at, updated_at) VALUES (:id, :handle,"
                " :display_name, :description, :owner_id, :starters, :supports_schedules,"
                " :created_at, :created_at)",
                values,
            )
        agent = self.get_agent(row["id"])
        assert agent is not None
        return agent

    def get_agent(self, agent_id: str) -> Row | None:
        """An agent by id, or None."""
        return _decode_agent(self._one("SELECT * FROM agents WHERE id = ?", agent_id))

    def handle_taken(self, handle: str) -> bool:
        """Whether an agent already has this handle."""
        return self._one("SELECT 1 FROM agents WHERE handle = ?", handle) is not None

    def agents_of(self, owner_id: str) -> list[Row]:
        """The agents a user owns, oldest first."""
        rows = self._all("SELECT * FROM agents WHERE owner_id = ? ORDER BY created_at", owner_id)
        return [row for row in map(_decode_agent, rows) if row is not None]

    def set_failing(self, agent_id: str, since: str | None, unreachable: bool) -> None:
        """Record the start of a run of failed deliveries (None: it ended) and reachability."""
        with self._transaction() as db:
            db.execute(
                "UPDATE agents SET failing_since = ?, unreachable = ? WHERE id = ?",
                (since, int(unreachable), agent_id),
            )

    # bindings

    def replace_binding(self, row: Row) -> list[str]:
        """Insert a binding, revoking the agent's earlier ones; the ids revoked."""
        with self._transaction() as db:
            old = [
                str(found[0])
                for found in db.execute(
                    "SELECT id FROM bindings WHERE agent_id = ? AND revoked_at IS NULL",
                    (row["agent_id"],),
                ).fetchall()
            ]
            db.execute(
                "UPDATE bindings SET revoked_at = ? WHERE agent_id = ? AND revoked_at IS NULL",
                (row["created_at"], row["agent_id"]),
            )
            db.execute(
                "INSERT INTO bindings (id, agent_id, mode, webhook_url, secret_hash, created_at)"
                " VALUES (:id, :agent_id, :mode, :webhook_url, :secret_hash, :created_at)",
                row,
            )
        return old

    def revoke_bindings(self, agent_id: str, now: str) -> list[str]:
        """Revoke an agent's live binding; the ids revoked."""
        with self._transaction() as db:
            old = [
                str(found[0])
                for found in db.execute(
                    "SELECT id FROM bindings WHERE agent_id = ? AND revoked_at IS NULL",
                    (agent_id,),
                ).fetchall()
            ]
            db.execute(
                "UPDATE bindings SET revoked_at = ? WHERE agent_id = ? AND revoked_at IS NULL",
                (now, agent_id),
            )
        return old

    def binding_by_hash(self, secret_hash: str) -> Row | None:
        """The binding of a secret, revoked or not, or None."""
        return self._one("SELECT * FROM bindings WHERE secret_hash = ?", secret_hash)

    def live_binding(self, agent_id: str) -> Row | None:
        """An agent's unrevoked binding, or None."""
        return self._one(
            "SELECT * FROM bindings WHERE agent_id = ? AND revoked_at IS NULL", agent_id
        )

    def webhook_bindings(self) -> list[Row]:
        """The live webhook bindings."""
        return self._all("SELECT * FROM bindings WHERE mode = 'webhook' AND revoked_at IS NULL")

    def socket_bindings(self) -> list[Row]:
        """The live socket bindings."""
        return self._all("SELECT * FROM bindings WHERE mode = 'socket' AND revoked_at IS NULL")

    # pairing codes

    def create_pair_token(self, row: Row) -> Row:
        """Insert a pairing code and return it."""
        values = {**row, "payload": json.dumps(row["payload"])}
        with self._transaction() as db:
            db.execute(
                "INSERT INTO pair_tokens (id, agent_id, code, label, payload, max_uses,"
                " created_at) VALUES (:id, :agent_id, :code, :label, :payload, :max_uses,"
                " :created_at)",
                values,
            )
        token = self.get_pair_token(row["id"])
        assert token is not None
        return token

    def get_pair_token(self, token_id: str) -> Row | None:
        """A pairing code by id, or None."""
        return _decode_token(self._one("SELECT * FROM pair_tokens WHERE id = ?", token_id))

    def pair_token_by_code(self, code: str) -> Row | None:
        """A live pairing code by its code, or None."""
        return _decode_token(
            self._one(
                "SELECT * FROM pair_tokens WHERE code = ? AND revoked_at IS NULL"
                " AND (max_uses IS NULL OR uses < max_uses)",
                code,
            )
        )

    def pair_tokens_of(self, agent_id: str) -> list[Row]:
        """An agent's unrevoked pairing codes, newest first."""
        rows = self._all(
            "SELECT * FROM pair_tokens WHERE agent_id = ? AND revoked_at IS NULL"
            " ORDER BY created_at DESC",
            agent_id,
        )
        return [row for row in map(_decode_token, rows) if row is not None]

    def use_pair_token(self, token_id: str) -> None:
        """Count one use of a code."""
        with self._transaction() as db:
            db.execute("UPDATE pair_tokens SET uses = uses + 1 WHERE id = ?", (token_id,))

    def revoke_pair_token(self, agent_id: str, token_id: str, now: str) -> bool:
        """Revoke a code; False when there is no such live code."""
        return self._changed(
            "UPDATE pair_tokens SET revoked_at = ? WHERE id = ? AND agent_id = ?"
            " AND revoked_at IS NULL",
            now,
            token_id,
            agent_id,
        )


def _decode_token(row: Row | None) -> Row | None:
    if row is not None:
        payload: Any = json.loads(row["payload"]) if row["payload"] is not None else None
        row["payload"] = payload
    return row
