"""A hub's conversations as threads of the list: titled by their agents' names, with the
unread count and the agents' status (`HubThread`), most recent first."""

from __future__ import annotations

from talkie_tui.backends.parts.threads import MarkedThread
from talkie_tui.protocol.cuckoo.models import Conversation
from talkie_tui.protocol.talkie.models import Thread

__all__ = ["AWAY", "HubThread", "hub_thread", "recency"]

AWAY = "unreachable"
"""An agent's status while the hub cannot reach it: what is sent waits for it ("away")."""


class HubThread(MarkedThread):
    """A conversation in the thread list, with what a hub says beside it (the person's
    choices about its agent are put on it by `reach.arrange`)."""

    agents: tuple[str, ...] = ()  # the agents' ids
    agent_status: str | None = None  # the first agent's: idle, connected, unreachable

    @property
    def away(self) -> bool:
        """The hub cannot reach the agent: what is sent is delivered when it is back."""
        return self.agent_status == AWAY


def hub_thread(conversation: Conversation) -> HubThread:
    """A conversation as the thread list shows it."""
    agents = conversation.agents()
    names = [a.display_name or a.handle or a.id for a in agents]
    if not names:
        names = [p.display_name for p in conversation.participants if p.display_name]
    last = conversation.last_message
    return HubThread(
        id=conversation.id,
        title=", ".join(names),
        channel="chat",
        created_at=conversation.created_at,
        updated_at=(last.created_at if last else None) or conversation.created_at,
        unread=conversation.unread_count,
        agents=tuple(a.id for a in agents),
        agent_status=agents[0].status if agents else None,
    )


def recency(thread: Thread) -> float:
    """When a thread last changed, as a number to sort by (newest largest)."""
    when = thread.updated_at or thread.created_at
    return when.timestamp() if when is not None else 0.0
