"""What the bridge says to a person who starts a conversation with the agent.

A hub shows an agent's quick replies as chips under its message; a tap sends their words as
the person's own. A greeting with starters gives a newcomer something to tap, not a blank box.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["MAX_STARTERS", "MAX_STARTER_CHARS", "Greeting"]

MAX_STARTERS = 6  # a hub takes up to six quick replies
MAX_STARTER_CHARS = 40  # a label's length the hub takes


@dataclass(frozen=True)
class Greeting:
    """A line, and things to ask that a tap sends (the hub's quick replies)."""

    text: str
    starters: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if len(self.starters) > MAX_STARTERS:
            raise ValueError(f"at most {MAX_STARTERS} starters")
        for starter in self.starters:
            if not 1 <= len(starter) <= MAX_STARTER_CHARS:
                raise ValueError(f"a starter has 1 to {MAX_STARTER_CHARS} characters: {starter!r}")

    def message(self, event_id: str) -> dict[str, Any]:
        """The send op's fields; one greeting per join, however often the join comes again."""
        fields: dict[str, Any] = {"text": self.text, "idempotency_key": f"greeting-{event_id}"}
        if self.starters:
            fields["quick_replies"] = [{"label": starter} for starter in self.starters]
        return fields
