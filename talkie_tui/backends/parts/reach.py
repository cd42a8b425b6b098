"""How a person reaches agents (a Cuckoo hub's): a pairing code resolved then accepted, the
public catalogue, and their contacts (pin, mute, archive, remove, block, report).

The model objects here are what the UI reads; a backend makes them of its wire records.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from talkie_tui.core.moments import still_ahead
from talkie_tui.core.reports import MAX_NOTE_CHARS, REPORT_REASONS, Complaint, ReportReason

if TYPE_CHECKING:
    from talkie_tui.backends.parts.threads import MarkedThread

__all__ = [
    "MAX_NOTE_CHARS",
    "MUTE_CHOICES",
    "REPORT_REASONS",
    "AgentReach",
    "CatalogueEntry",
    "Complaint",
    "Contact",
    "Opening",
    "PairAccepted",
    "PairResolve",
    "PairToken",
    "PublicAgent",
    "ReachesAgents",
    "ReportReason",
]

MUTE_CHOICES: tuple[timedelta, ...] = (
    timedelta(hours=1),
    timedelta(hours=8),
    timedelta(days=1),
    timedelta(days=7),
)
"""How long a person may mute a contact for, from the menu."""


@dataclass(frozen=True, slots=True)
class PublicAgent:
    """An agent as anyone may see it: its name, handle, what it does, how to start."""

    id: str
    handle: str = ""
    display_name: str = ""
    description: str = ""
    starters: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """How it is named on screen: its display name, else its handle, else its id."""
        return self.display_name or self.handle or self.id


@dataclass(frozen=True, slots=True)
class CatalogueEntry(PublicAgent):
    """An agent its owner lists publicly; `in_contacts` once the person added it."""

    supports_schedules: bool = False
    in_contacts: bool = False


@dataclass(frozen=True, slots=True)
class PairToken:
    """The code a person is about to accept: its id and the owner's label for it."""

    id: str
    label: str | None = None


@dataclass(frozen=True, slots=True)
class PairResolve:
    """The agent a pairing code adds, before the person accepts."""

    agent: PublicAgent
    pair_token: PairToken | None = None


@dataclass(frozen=True, slots=True)
class PairAccepted:
    """The conversation with an agent just added, and whether it is new to the person."""

    conversation: MarkedThread
    new: bool = False


@dataclass(frozen=True, slots=True)
class Contact:
    """An agent the person has a conversation with, and what they chose about it."""

    id: str  # the agent's id
    agent: PublicAgent
    conversation_id: str = ""
    pinned: bool = False
    muted_until: datetime | None = None
    archived: bool = False
    blocked: bool = False

    def muted(self, now: datetime | None = None) -> bool:
        """True while the mute lasts."""
        return still_ahead(self.muted_until, now)


@dataclass(frozen=True, slots=True)
class Opening:
    """What a conversation shows as it opens: its agent, the starters to offer (none once
    anything was said), whether the person blocked the agent."""

    agent: PublicAgent | None
    starters: tuple[str, ...] = ()
    blocked: bool = False


class AgentReach(Protocol):
    """Pairing, the catalogue and contacts of the server a backend is signed in to."""

    async def resolve_code(self, code: str) -> PairResolve:
        """Which agent a pairing code adds (nothing is added yet)."""
        ...

    async def accept_code(self, code: str) -> PairAccepted:
        """Add the code's agent: the conversation with it."""
        ...

    async def catalogue(self) -> Sequence[CatalogueEntry]:
        """The agents their owners list publicly, those the person added marked so."""
        ...

    async def add(self, agent_id: str) -> PairAccepted:
        """Add an agent of the catalogue: the conversation with it."""
        ...

    async def contact(self, agent_id: str) -> Contact | None:
        """The person's contact with an agent, or None."""
        ...

    async def archived(self) -> Sequence[MarkedThread]:
        """The threads whose agent the person archived."""
        ...

    async def pin(self, agent_id: str, pinned: bool) -> Contact:
        """Pin a contact (first in the list), or unpin it."""
        ...

    async def archive(self, agent_id: str, archived: bool) -> Contact:
        """Archive a contact (out of the list, under "Archived"), or bring it back."""
        ...

    async def mute(self, agent_id: str, until: datetime | None) -> Contact:
        """Mute a contact until a time (None: unmute now)."""
        ...

    async def remove(self, agent_id: str) -> None:
        """Remove a contact: out of the person's lists until they add the agent again."""
        ...

    async def block(self, agent_id: str, blocked: bool) -> None:
        """Block an agent (it leaves the conversation, and takes no messages), or unblock it."""
        ...

    async def report(self, agent_id: str, complaint: Complaint) -> None:
        """Report an agent: why, an optional note, the message it is about."""
        ...

    async def opening(self, conversation_id: str) -> Opening:
        """What the conversation shows as it opens: its agent's starters while nothing was
        said, and whether the person blocked the agent."""
        ...


@runtime_checkable
class ReachesAgents(Protocol):
    """A backend whose person adds agents by code or from a catalogue, and keeps contacts."""

    @property
    def reach(self) -> AgentReach:
        """Pairing codes, the catalogue and the person's contacts."""
        ...
