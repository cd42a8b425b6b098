"""How a person reaches agents on a hub, for the UI: a pairing code resolved then accepted,
the public catalogue, and their contacts (pin, mute, archive, remove, block, report).

`HubReach` wraps the wire's `ReachClient` for one `CuckooBackend` as the `AgentReach` part,
handing over the model objects of `parts/reach.py`; `arrange` puts the person's choices on the
thread list (pinned first, archived out, muted without an unread count, blocked said), and
`opening` tells what a conversation shows when it opens: the agent's starters while nothing was
said yet, and that the person blocked it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from talkie_tui.backends.cuckoo.records import model_of
from talkie_tui.backends.cuckoo.threads import HubThread, hub_thread
from talkie_tui.backends.parts.reach import (
    CatalogueEntry,
    Complaint,
    Contact,
    Opening,
    PairAccepted,
    PairResolve,
    PairToken,
    PublicAgent,
)
from talkie_tui.core.errors import NotFoundError
from talkie_tui.protocol.cuckoo import reach_models as wire
from talkie_tui.protocol.cuckoo.contacts import ReachClient, clean_code

if TYPE_CHECKING:
    from talkie_tui.protocol.cuckoo.client import CuckooClient

__all__ = [
    "HubReach",
    "arrange",
    "catalogue_entry",
    "clean_code",
    "contact",
    "contacts_of",
    "pair_accepted",
    "pair_resolve",
    "public_agent",
]


def public_agent(agent: wire.PublicAgent) -> PublicAgent:
    """An agent as anyone may see it."""
    return model_of(PublicAgent, agent, starters=tuple(agent.starters))


def catalogue_entry(entry: wire.CatalogueEntry, *, in_contacts: bool = False) -> CatalogueEntry:
    """An agent of the catalogue."""
    return model_of(CatalogueEntry, entry, starters=tuple(entry.starters), in_contacts=in_contacts)


def contact(record: wire.Contact) -> Contact:
    """A contact of the person, with its agent."""
    return model_of(Contact, record, agent=public_agent(record.agent))


def pair_resolve(record: wire.PairResolve) -> PairResolve:
    """What a code adds."""
    token = record.pair_token
    return PairResolve(
        public_agent(record.agent),
        PairToken(token.id, token.label) if token is not None else None,
    )


def pair_accepted(record: wire.PairAccepted) -> PairAccepted:
    """The conversation with the agent just added, as a thread of the list."""
    return PairAccepted(hub_thread(record.conversation), record.new)


async def contacts_of(client: CuckooClient) -> list[Contact] | None:
    """The person's contacts, or None where the hub has no contacts route (a 404 to a
    listing can mean nothing else, whatever its code)."""
    try:
        return [contact(record) for record in await ReachClient(client).contacts()]
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
    """Pairing, the catalogue and contacts of the hub a backend is signed in to (`AgentReach`);
    `all_threads` gives every conversation of the person, archived or not."""

    def __init__(
        self,
        client: CuckooClient,
        all_threads: Callable[[], Awaitable[Sequence[HubThread]]] | None = None,
    ) -> None:
        self._wire = ReachClient(client)
        self._client = client
        self._all_threads = all_threads

    async def resolve_code(self, code: str) -> PairResolve:
        """Which agent a pairing code adds (nothing is added yet)."""
        return pair_resolve(await self._wire.resolve_code(code))

    async def accept_code(self, code: str) -> PairAccepted:
        """Add the code's agent: the conversation with it."""
        return pair_accepted(await self._wire.accept_code(code))

    async def catalogue(self) -> list[CatalogueEntry]:
        """The agents their owners list publicly, those the person added marked so."""
        listed, contacts = await asyncio.gather(self._wire.catalogue(), self._wire.contacts())
        added = {record.id for record in contacts}
        return [catalogue_entry(entry, in_contacts=entry.id in added) for entry in listed]

    async def add(self, agent_id: str) -> PairAccepted:
        """Add an agent of the catalogue: the conversation with it."""
        return pair_accepted(await self._wire.add_from_catalogue(agent_id))

    async def contact(self, agent_id: str) -> Contact | None:
        """The person's contact with an agent, or None."""
        for record in await self._wire.contacts():
            if record.id == agent_id:
                return contact(record)
        return None

    async def archived(self) -> list[HubThread]:
        """The threads whose agent the person archived."""
        if self._all_threads is None:
            return []
        return await self.archived_threads(await self._all_threads())

    async def archived_threads(self, threads: Sequence[HubThread]) -> list[HubThread]:
        """Of `threads`, those whose agent the person archived."""
        return arrange(threads, await contacts_of(self._client), archived=True)

    async def pin(self, agent_id: str, pinned: bool) -> Contact:
        """Pin a contact (first in the list), or unpin it."""
        return contact(await self._wire.update_contact(agent_id, pinned=pinned))

    async def archive(self, agent_id: str, archived: bool) -> Contact:
        """Archive a contact (out of the list, under "Archived"), or bring it back."""
        return contact(await self._wire.update_contact(agent_id, archived=archived))

    async def mute(self, agent_id: str, until: datetime | None) -> Contact:
        """Mute a contact until a time (None: unmute now)."""
        if until is None:
            return contact(await self._wire.update_contact(agent_id, unmute=True))
        return contact(await self._wire.update_contact(agent_id, muted_until=until))

    async def remove(self, agent_id: str) -> None:
        """Remove a contact: out of the person's lists until they add the agent again."""
        await self._wire.remove_contact(agent_id)

    async def block(self, agent_id: str, blocked: bool) -> None:
        """Block an agent (it leaves the conversation, and takes no messages), or unblock it."""
        if blocked:
            await self._wire.block(agent_id)
        else:
            await self._wire.unblock(agent_id)

    async def report(self, agent_id: str, complaint: Complaint) -> None:
        """Report an agent: why, an optional note, the message it is about."""
        await self._wire.report(agent_id, complaint)

    async def opening(self, conversation_id: str) -> Opening:
        """What the conversation shows as it opens: its agent's starters while nothing was
        said, and whether the person blocked the agent."""
        conversation = await self._client.conversation(conversation_id)
        agents = conversation.agents()
        if not agents:
            return Opening(None)
        first = agents[0]
        contacts = await contacts_of(self._client) or []
        known = next((c for c in contacts if c.id == first.id), None)
        agent = known.agent if known is not None else None
        if agent is None:
            agent = PublicAgent(
                id=first.id,
                handle=first.handle or "",
                display_name=first.display_name,
                starters=tuple(first.starters),
            )
        blocked = known is not None and known.blocked
        quiet = conversation.last_message is None
        starters = tuple(first.starters) if quiet and not blocked else ()
        return Opening(agent, starters, blocked)
