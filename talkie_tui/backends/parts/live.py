"""Changes outside any turn (`capabilities.live`): an agent's status, a message elsewhere."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

__all__ = ["LiveUpdate", "LiveUpdates"]


@dataclass(frozen=True, slots=True)
class LiveUpdate:
    """Something that happened outside the turn being read."""

    kind: Literal["question_resolved", "message_elsewhere", "agent_status", "thread_changed"]
    thread_id: str | None = None
    detail: str = ""  # the question id, the agent's new status…


@runtime_checkable
class LiveUpdates(Protocol):
    """A stream of changes outside any turn (`capabilities.live`)."""

    def live(self) -> AsyncIterator[LiveUpdate]:
        """Updates as they come, until the backend is closed."""
        ...
