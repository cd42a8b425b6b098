"""What a conversation tells of its agents besides their messages: what each is doing now, and
whether one cannot be reached (a Cuckoo hub's conversations do)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable

__all__ = ["AgentActivity", "ShowsAgents"]


@dataclass(frozen=True, eq=False)
class AgentActivity:
    """An agent thinks, works (with a label) or is idle, until `expires_at` (None: the app's
    own while). Each report is a new object, so a repeated report shows for a while again."""

    state: str
    label: str | None = None
    expires_at: datetime | None = None


@runtime_checkable
class ShowsAgents(Protocol):
    """A conversation that tells what its agents are doing and whether they are away."""

    @property
    def agents_away(self) -> bool:
        """Whether an agent of the conversation cannot be reached now."""
        ...

    @property
    def agent_activities(self) -> Sequence[AgentActivity]:
        """What each agent last said it is doing."""
        ...
