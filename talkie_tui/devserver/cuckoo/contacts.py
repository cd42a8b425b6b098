"""How a person reaches agents: adding one (by a pairing code or from the catalogue), and their
contacts — the agents they have a conversation with, and what they chose about each.

Removing a contact takes the agent out of the person's lists (conversations and contacts) and
tells the agent nothing: `user_blocked` is the only reason of `conversation.left` the hub
emits. Adding it again (a code, the catalogue) brings the same conversation back, and the agent
hears `conversation.joined` once more, with the code when one was used.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from talkie_tui.devserver.common.sqlite import Row
from talkie_tui.devserver.cuckoo.errors import forbidden, not_found

if TYPE_CHECKING:
    from talkie_tui.devserver.cuckoo.services import Hub

REASONS = ("spam", "impersonation", "abuse", "other")
"""Why a person reports an agent."""


def public_agent(row: Row) -> dict[str, Any]:
    """An agent as anyone may see it: in the catalogue, behind a code, among contacts."""
    starters = row["starters"]
    return {
        "id": row["id"],
        "handle": row["handle"],
        "display_name": row["display_name"],
        "description": row["description"],
        "has_avatar": False,
        "starters": json.loads(starters) if isinstance(starters, str) else list(starters),
    }


def contact_json(row: Row) -> dict[str, Any]:
    """A contact (`ReachStore.contact_rows`) as the client API shows it."""
    return {
        "id": row["id"],
        "agent": public_agent(row),
        "conversation_id": row["conversation_id"],
        "pinned": bool(row["pinned"]),
        "muted_until": row["muted_until"],
        "archived": bool(row["archived"]),
        "blocked": bool(row["blocked"]),
        "created_at": row["added_at"],
    }


def contacts_of(hub: Hub, user_id: str) -> list[dict[str, Any]]:
    """A person's contacts, pinned first, then by name (removed ones left out)."""
    rows = [row for row in hub.storage.contact_rows(user_id) if not row["removed"]]
    rows.sort(key=lambda row: (not row["pinned"], str(row["display_name"]).casefold()))
    return [contact_json(row) for row in rows]


def contact_of(hub: Hub, user_id: str, agent_id: str) -> dict[str, Any]:
    """One contact of a person, or 404 `contact_not_found`."""
    for row in hub.storage.contact_rows(user_id):
        if row["id"] == agent_id and not row["removed"]:
            return contact_json(row)
    raise not_found("contact_not_found", "That agent is not among your contacts.")


def add_agent(
    hub: Hub, user_id: str, agent_id: str, pair_token: Row | None = None
) -> tuple[Row, bool]:
    """The person's conversation with the agent, made or brought back (the agent hears
    `conversation.joined` then); whether it is new to the person's list."""
    removed = agent_id in hub.storage.removed_agents(user_id)
    if not removed:
        return hub.conversations.open_dm(user_id, agent_id, pair_token)
    if hub.storage.is_blocked(user_id, agent_id):
        raise forbidden("blocked", "You blocked this agent; unblock it to add it again.")
    row = hub.storage.dm_between(user_id, agent_id)
    assert row is not None  # a contact row is only made for an agent one has a conversation with
    hub.storage.set_contact(user_id, agent_id, removed=0, pinned=0, archived=0, muted_until=None)
    token = None
    if pair_token is not None:
        token = {"id": pair_token["id"], "payload": pair_token["payload"]}
    hub.conversations.tell_joined(row, agent_id, token)
    return row, True


def hidden_conversations(hub: Hub, user_id: str) -> set[str]:
    """The conversations of the agents a person removed (out of their list)."""
    removed = hub.storage.removed_agents(user_id)
    if not removed:
        return set()
    return {
        str(row["conversation_id"])
        for row in hub.storage.contact_rows(user_id)
        if row["id"] in removed
    }
