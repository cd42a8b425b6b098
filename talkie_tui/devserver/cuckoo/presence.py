"""An agent's status as people see it (none, idle, connected, unreachable), and its changes."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from talkie_tui.devserver.cuckoo.services import Hub


def status_of(hub: Hub, agent_id: str) -> str:
    """`none` without a binding, `unreachable` after 5 min of failures, else whether it is on."""
    binding = hub.storage.live_binding(agent_id)
    if binding is None:
        return "none"
    agent = hub.storage.get_agent(agent_id)
    if agent is not None and agent["unreachable"]:
        return "unreachable"
    if binding["mode"] == "webhook" or hub.links.connected(agent_id):
        return "connected"
    return "idle"


def people_with(hub: Hub, agent_id: str) -> list[str]:
    """The people who share a conversation with an agent."""
    return [row["user_id"] for row in hub.storage.conversations_of(agent_id)]


def announce(hub: Hub, agent_id: str) -> None:
    """Tell the people who talk to an agent its current status."""
    status = status_of(hub, agent_id)
    hub.feeds.push(
        people_with(hub, agent_id), "agent.status", {"agent_id": agent_id, "status": status}
    )
