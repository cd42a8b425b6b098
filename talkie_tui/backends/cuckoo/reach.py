"""How a person reaches agents on a hub, for the UI: a pairing code resolved then accepted,
the public catalogue, and their contacts (pin, mute, archive, remove, block, report).

`HubReach` wraps the wire's `ReachClient` for one `CuckooBackend`; `arrange` puts the person's
choices on the thread list (pinned first, archived out, muted without an unread count, blocked
said), and `opening` tells what a conversation shows when it opens: the agent's starters while
nothing was said yet, and that the person blocked it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from talkie_tui.core.errors import NotFoundError
from talkie_tui.protocol.cuckoo.contacts import MAX_NOTE_CHARS, ReachClient, clean_code
from talkie_tui.protocol.cuckoo.reach_models import (
    REPORT_REASONS,
    CatalogueEntry,
    Contact,
    PairAccepted,
    PairResolve,
    PublicAgent,
    ReportReason,
)

if TYPE_CHECKING:
    from talkie_tui.backends.cuckoo.backend import HubThread
    from talkie_tui.protocol.cuckoo.client import CuckooClient

__all__ = [
    "MAX_NOTE_CHARS",
    "MUTE_CHOICES",
    "REPORT_REASONS",
    "CatalogueEntry",
    "Contact",
    "HubReach",
    "Opening",
    "PairAccepted",
    "PairResolve",
    "PublicAgent",
    "ReportReason",
    "arrange",
    "clean_code",
    "contacts_of",
]

MUTE_CHOICES: tuple[timedelta, ...] = (
    timedelta(hours=1),
    timedelta(hours=8),
    timedelta(days=1),
    timedelta(days=7),
)
"""How long a person may mute a contact for, from the menu."""


@dataclass(frozen=True, slots=True)
class Opening:
    """What a conversation shows as it opens: its agent, the starters to offer (none once
    anything was said), whether the person blocked the agent."""

    agent: PublicAgent | None
    starters: tuple[str, ...] = ()
    blocked: bool = False


async def contacts_of(client: CuckooClient) -> list[Contact] | None:
    """The person's contacts, or None where the hub has no contacts route (a 404 to a
    listing can mean nothing else, whatever its code)."""
    try:
        return await ReachClient(client).contacts()
    except NotFoundError:
        return None


def arrange(
    threads: Sequence[HubThread], contacts: Sequence[Contact] | None, *, archived: bool = False
) -> list[HubThread]:
    """The threads with the person's choices about their agents: pinned first (the order
    otherwise kept), the archived ones out (`archived`: only those), each marked."""
    if contacts is None:
        return [] if archived else list(threads)
    by_agent = {contact.id: contact for contact in contacts}
    now = datetime.now(UTC)
    shown: list[HubThread] = []
    for thread in threads:
        contact = next((by_agent[a] for a in thread.agents if a in by_agent), None)
        if contact is None:
            if not archived:
                shown.append(thread)
            continue
        if contact.archived != archived:
            continue
        shown.append(
            thread.model_copy(
                update={
                    "pinned": contact.pinned,
                    "muted": contact.muted(now),
                    "archived": contact.archived,
                    "blocked": contact.blocked,
                }
            )
        )
    shown.sort(key=lambda thread: not thread.pinned)  # stable: recency within each part
    return shown


class HubReach:
    """Pairing, the catalogue and contacts of the hub a backend is signed in to."""

    def __init__(self, client: CuckooClient) -> None:
        self._wire = ReachClient(client)
        self._client = client

    async def resolve_code(self, code: str) -> PairResolve:
        """Which agent a pairing code adds (nothing is added yet)."""
        return await self._wire.resolve_code(code)

    async def accept_code(self, code: str) -> PairAccepted:
        """Add the code's agent: the conversation with it."""
        return await self._wire.accept_code(code)

    async def catalogue(self) -> list[CatalogueEntry]:
        """The agents their owners list publicly."""
        return await self._wire.catalogue()

    async def add(self, agent_id: str) -> PairAccepted:
        """Add an agent of the catalogue: the conversation with it."""
        return await self._wire.add_from_catalogue(agent_id)

    async def contact(self, agent_id: str) -> Contact | None:
        """The person's contact with an agent, or None."""
        for contact in await self._wire.contacts():
            if contact.id == agent_id:
                return contact
        return None

    async def archived_threads(self, threads: Sequence[HubThread]) -> list[HubThread]:
        """The threads whose agent the person archived."""
        return arrange(threads, await contacts_of(self._client), archived=True)

    async def pin(self, agent_id: str, pinned: bool) -> Contact:
        """Pin a contact (first in the list), or unpin it."""
        return await self._wire.update_contact(agent_id, pinned=pinned)

    async def archive(self, agent_id: str, archived: bool) -> Contact:
        """Archive a contact (out of the list, under "Archived"), or bring it back."""
        return await self._wire.update_contact(agent_id, archived=archived)

    async def mute(self, agent_id: str, until: datetime | None) -> Contact:
        """Mute a contact until a time (None: unmute now)."""
        if until is None:
            return await self._wire.update_contact(agent_id, unmute=True)
        return await self._wire.update_contact(agent_id, muted_until=until)

    async def remove(self, agent_id: str) -> None:
        """Remove a contact: out of the person's lists until they add the agent again."""
        await self._wire.remove_contact(agent_id)

    async def block(self, agent_id: str, blocked: bool) -> None:
        """Block an agent (it leaves the conversation, and takes no messages), or unblock it."""
        if blocked:
            await self._wire.block(agent_id)
        else:
            await self._wire.unblock(agent_id)

    async def report(
        self,
        agent_id: str,
        reason: ReportReason,
        note: str | None = None,
        message_id: str | None = None,
    ) -> None:
        """Report an agent: why, an optional note, the message it is about."""
        await self._wire.report(agent_id, reason, note=note, message_id=message_id)

    async def opening(self, conversation_id: str) -> Opening:
        """What the conversation shows as it opens: its agent's starters while nothing was
        said, and whether the person blocked the agent."""
        conversation = await self._client.conversation(conversation_id)
        agents = conversation.agents()
        if not agents:
            return Opening(None)
        first = agents[0]
        contacts = await contacts_of(self._client) or []
        contact = next((c for c in contacts if c.id == first.id), None)
        agent = contact.agent if contact is not None else None
        if agent is None:
            agent = PublicAgent(
                id=first.id,
                handle=first.handle or "",
                display_name=first.display_name,
                starters=first.starters,
            )
        blocked = contact is not None and contact.blocked
        quiet = conversation.last_message is None
        starters = tuple(first.starters) if quiet and not blocked else ()
        return Opening(agent, starters, blocked)
