"""An agent's status as people see it (none, idle, connected, unreachable), and its changes."""

from __future__ import annotations

from talkie_tui.devserver.cuckoo.live import AgentLinks, ClientFeeds
from talkie_tui.devserver.cuckoo.storage import Storage


class Presence:
    """Whether an agent is on, and telling the people who talk to it when that changes."""

    def __init__(self, storage: Storage, links: AgentLinks, feeds: ClientFeeds) -> None:
        self.storage = storage
        self.links = links
        self.feeds = feeds

    def status_of(self, agent_id: str) -> str:
        """`none` without a binding, `unreachable` after 5 min of failures, else whether it is
        on."""
        binding = self.storage.live_binding(agent_id)
        if binding is None:
            return "none"
        agent = self.storage.get_agent(agent_id)
        if agent is not None and agent["unreachable"]:
            return "unreachable"
        if binding["mode"] == "webhook" or self.links.connected(agent_id):
            return "connected"
        return "idle"

    def people_with(self, agent_id: str) -> list[str]:
        """The people who share a conversation with an agent."""
        return [row["user_id"] for row in self.storage.conversations_of(agent_id)]

    def announce(self, agent_id: str) -> None:
        """Tell the people who talk to an agent its current status."""
        status = self.status_of(agent_id)
        self.feeds.push(
            self.people_with(agent_id), "agent.status", {"agent_id": agent_id, "status": status}
        )
