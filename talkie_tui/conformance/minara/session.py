"""What the Minara checks share: the wire, and turns run once and read by several checks."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from talkie_tui.conformance.minara.wire import MinaraWire, Turn, follow

__all__ = ["BRIEF", "LONG", "Finished", "Session"]

# Messages any agent answers; no check depends on what it says.
BRIEF = "This is a conformance check by talkie: please answer in one short sentence."
LONG = (
    "Research the history of chat protocols, at length and step by step "
    "(a conformance check by talkie)."
)


@dataclass(frozen=True)
class Finished:
    """A turn run to its end: the message sent, the POST's answer, the events read."""

    message: str
    accepted: dict[str, object]
    turn: Turn

    @property
    def session_id(self) -> str:
        """The session the turn ran in."""
        return str(self.accepted["session_id"])


@dataclass
class Session:
    """The wire, a word unique to this run (for search), and the turns run so far."""

    wire: MinaraWire
    word: str = field(default_factory=lambda: f"talkiecheck{uuid.uuid4().hex[:10]}")
    _finished: Finished | None = None
    _follow_up: dict[str, object] | None = None

    async def finished_turn(self) -> Finished:
        """A brief turn in a new session, run to its end once and shared by the checks."""
        if self._finished is None:
            message = f"{BRIEF} ({self.word})"
            accepted = await self.wire.start_turn(message)
            turn = await follow(self.wire, str(accepted["session_id"]))
            self._finished = Finished(message, accepted, turn)
        return self._finished

    async def follow_up(self) -> dict[str, object]:
        """A second message to the finished turn's session, posted once: the POST's answer
        (the turn runs on; the seq check reads it)."""
        if self._follow_up is None:
            finished = await self.finished_turn()
            self._follow_up = await self.wire.start_turn(
                "Thank you.", session_id=finished.session_id
            )
        return self._follow_up
