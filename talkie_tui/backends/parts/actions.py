"""Actions a person confirms or cancels (`capabilities.actions`): talkie/1's."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:
    from talkie_tui.protocol.talkie.models import Action, DecisionResult

__all__ = ["DecidedBy", "Decides", "Decision"]

Decision = Literal["confirm", "cancel"]
DecidedBy = Literal["button", "voice"]


@runtime_checkable
class Decides(Protocol):
    """Proposed actions, read and decided (`capabilities.actions`)."""

    async def action(self, action_id: str) -> Action:
        """The current state of an action (the server's word is authoritative)."""
        ...

    async def decide(self, action: Action, decision: Decision, method: DecidedBy) -> DecisionResult:
        """Send the person's decision on an action, made by `method` (button or voice)."""
        ...
