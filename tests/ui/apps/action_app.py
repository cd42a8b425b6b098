"""Fixed clocks and sample actions for action-card tests and snapshots."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from talkie_tui.protocol.talkie.models import Action

NOW = datetime(2026, 10, 22, 10, 0, 0, tzinfo=UTC)


class FakeClock:
    """A clock that moves only when told; serves as both wall and monotonic time."""

    def __init__(self, start: float = NOW.timestamp()) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        """Move time forward."""
        self.now += seconds


def make_action(**overrides: Any) -> Action:
    """A pending medium-risk action that expires 10 minutes after NOW."""
    data: dict[str, Any] = {
        "id": "a_77",
        "threadId": "t_123",
        "summary": "Odeslat nabídku N-2026-014 na novak@alfa.cz",
        "riskLevel": "medium",
        "status": "pending",
        "paramsHash": "sha256:4f1c",
        "createdAt": NOW.isoformat(),
        "expiresAt": (NOW + timedelta(minutes=10)).isoformat(),
    }
    data.update(overrides)
    return Action.model_validate(data)


def undo_until(seconds: float) -> str:
    """An `undoUntil` this many seconds after NOW."""
    return (NOW + timedelta(seconds=seconds)).isoformat()
