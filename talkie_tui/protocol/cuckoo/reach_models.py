"""Typed models of how a person reaches agents on a hub (`notes/cuckoo.md` §1.2): what a
pairing code adds, the public catalogue, the person's contacts and a report.

As in `models.py`: the hub's field names, unknown fields ignored, values frozen, every string a
screen may show cleaned of control sequences as it is parsed.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import BeforeValidator, Field

from talkie_tui.core.moments import still_ahead
from talkie_tui.core.reports import REPORT_REASONS, ReportReason
from talkie_tui.core.sanitize import SafeStr
from talkie_tui.protocol.cuckoo.models import Conversation, CuckooModel, Time, strings

__all__ = [
    "REPORT_REASONS",
    "CatalogueEntry",
    "Contact",
    "PairAccepted",
    "PairResolve",
    "PairTokenInfo",
    "PublicAgent",
    "Report",
    "ReportReason",
]


class PublicAgent(CuckooModel):
    """An agent as anyone may see it: its name, handle, what it does, how to start."""

    id: str = Field(min_length=1)
    handle: SafeStr = ""
    display_name: SafeStr = ""
    description: SafeStr = ""
    has_avatar: bool = False
    starters: Annotated[tuple[SafeStr, ...], BeforeValidator(strings)] = ()

    @property
    def name(self) -> str:
        """How it is named on screen: its display name, else its handle, else its id."""
        return self.display_name or self.handle or self.id


class CatalogueEntry(PublicAgent):
    """An agent its owner lists publicly (`GET /v1/client/catalogue`)."""

    supports_schedules: bool = False


class PairTokenInfo(CuckooModel):
    """The code a person is about to accept: its id and the owner's label for it."""

    id: str = Field(min_length=1)
    label: SafeStr | None = None


class PairResolve(CuckooModel):
    """`GET /v1/client/pair/{code}`: the agent a code adds, before the person accepts."""

    agent: PublicAgent
    pair_token: PairTokenInfo | None = None


class PairAccepted(CuckooModel):
    """`POST …/pair/{code}/accept` and `POST …/catalogue/{id}/add`: the conversation with the
    agent, and whether it is new to the person."""

    conversation: Conversation
    new: bool = False


class Contact(CuckooModel):
    """An agent the person has a conversation with, and what they chose about it."""

    id: str = Field(min_length=1)  # the agent's id
    agent: PublicAgent
    conversation_id: str = ""
    pinned: bool = False
    muted_until: Time = None
    archived: bool = False
    blocked: bool = False
    created_at: Time = None

    def muted(self, now: datetime | None = None) -> bool:
        """True while the mute lasts."""
        return still_ahead(self.muted_until, now)


class Report(CuckooModel):
    """A report as the hub kept it."""

    agent_id: str = ""
    reason: SafeStr = ""
    note: SafeStr | None = None
    message_id: str | None = None
    created_at: Time = None
