"""The routes of a hub's client API by which a person reaches agents (`notes/cuckoo.md` §1.2):
a pairing code resolved then accepted, the public catalogue, their contacts (pin, mute until a
time, archive, remove), blocking and reporting an agent.

`ReachClient` speaks through a `CuckooClient`'s own request path: the session token for the
hub's origin only, no redirect followed, errors in the hub's words. Bodies carry only the
fields chosen: the hub refuses unknown ones.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from talkie_tui.core.reports import MAX_NOTE_CHARS, Complaint
from talkie_tui.protocol.cuckoo.client import CuckooClient
from talkie_tui.protocol.cuckoo.reach_models import (
    REPORT_REASONS,
    CatalogueEntry,
    Contact,
    PairAccepted,
    PairResolve,
    Report,
)
from talkie_tui.protocol.net.rest import path_segment

__all__ = ["MAX_NOTE_CHARS", "ReachClient", "clean_code"]


def clean_code(code: str) -> str:
    """A pairing code as typed or pasted: spaces and dashes out, lower case (a code is
    letters and digits; a code shown in groups, `abcd-efgh`, is the same code)."""
    return "".join(ch for ch in code.strip().lower() if ch not in " -\t")


class ReachClient:
    """Pairing, the catalogue and contacts of one hub, for the signed-in person."""

    def __init__(self, client: CuckooClient) -> None:
        self.client = client

    # --- pairing codes -------------------------------------------------------------------

    async def resolve_code(self, code: str) -> PairResolve:
        """`GET /v1/client/pair/{code}`: which agent the code adds (nothing is added yet)."""
        route = f"v1/client/pair/{path_segment(clean_code(code))}"
        return await self.client._model(PairResolve, "GET", route)

    async def accept_code(self, code: str) -> PairAccepted:
        """`POST /v1/client/pair/{code}/accept`: the conversation with the code's agent (the
        agent hears `conversation.joined` with the code and its payload)."""
        route = f"v1/client/pair/{path_segment(clean_code(code))}/accept"
        return await self.client._model(PairAccepted, "POST", route)

    # --- the catalogue -------------------------------------------------------------------

    async def catalogue(self) -> list[CatalogueEntry]:
        """`GET /v1/client/catalogue`: the agents their owners list publicly."""
        entries: list[CatalogueEntry] = await self.client._items(
            CatalogueEntry, "v1/client/catalogue", "agents"
        )
        return entries

    async def add_from_catalogue(self, agent_id: str) -> PairAccepted:
        """`POST /v1/client/catalogue/{id}/add`: the conversation with a listed agent."""
        route = f"v1/client/catalogue/{path_segment(agent_id)}/add"
        return await self.client._model(PairAccepted, "POST", route)

    # --- contacts ------------------------------------------------------------------------

    async def contacts(self) -> list[Contact]:
        """`GET /v1/client/contacts`: every agent the person reaches, pinned first."""
        found: list[Contact] = await self.client._items(Contact, "v1/client/contacts", "contacts")
        return found

    async def update_contact(
        self,
        agent_id: str,
        *,
        pinned: bool | None = None,
        archived: bool | None = None,
        muted_until: datetime | None = None,
        unmute: bool = False,
    ) -> Contact:
        """`PATCH /v1/client/contacts/{id}`: change only what is named (`unmute`: the mute
        ends now; `muted_until`: it lasts until then)."""
        body: dict[str, Any] = {}
        if pinned is not None:
            body["pinned"] = pinned
        if archived is not None:
            body["archived"] = archived
        if unmute:
            body["muted_until"] = None
        elif muted_until is not None:
            moment = muted_until if muted_until.tzinfo else muted_until.replace(tzinfo=UTC)
            body["muted_until"] = moment.astimezone(UTC).isoformat().replace("+00:00", "Z")
        route = f"v1/client/contacts/{path_segment(agent_id)}"
        contact: Contact = await self.client._field(Contact, "PATCH", route, "contact", body=body)
        return contact

    async def remove_contact(self, agent_id: str) -> None:
        """`DELETE /v1/client/contacts/{id}`: the agent leaves the person's lists."""
        route = f"v1/client/contacts/{path_segment(agent_id)}"
        await self.client._send("DELETE", self.client.url(route))

    # --- blocking and reporting ----------------------------------------------------------

    async def block(self, agent_id: str) -> None:
        """`POST /v1/client/agents/{id}/block`: the agent leaves the person's conversation and
        may write there no more."""
        route = f"v1/client/agents/{path_segment(agent_id)}/block"
        await self.client._send("POST", self.client.url(route))

    async def unblock(self, agent_id: str) -> None:
        """`DELETE /v1/client/agents/{id}/block`: the agent joins the conversation again."""
        route = f"v1/client/agents/{path_segment(agent_id)}/block"
        await self.client._send("DELETE", self.client.url(route))

    async def report(self, agent_id: str, complaint: Complaint) -> Report:
        """`POST /v1/client/agents/{id}/report`: why (`spam | impersonation | abuse | other`),
        an optional note, and the agent's message it is about."""
        reason, note, message_id = complaint.reason, complaint.note, complaint.message_id
        if reason not in REPORT_REASONS:
            raise ValueError(f"reason must be one of {REPORT_REASONS}, not {reason!r}")
        body: dict[str, Any] = {"reason": reason}
        if note is not None and note.strip():
            body["note"] = note.strip()[:MAX_NOTE_CHARS]
        if message_id is not None:
            body["message_id"] = message_id
        route = f"v1/client/agents/{path_segment(agent_id)}/report"
        report: Report = await self.client._field(Report, "POST", route, "report", body=body)
        return report
