"""The demo agent's action proposals (Czech or English): e-mailing an offer, adding a note to
a company, deleting a contact; each asks which one when the request did not say."""

from __future__ import annotations

import re
from typing import Any

from talkie_tui.devserver.talkie.demo_answers import tool_label
from talkie_tui.devserver.talkie.demo_data import (
    COMPANIES,
    CONTACTS,
    OFFERS,
    Text,
    company,
    contact,
    offer_for_company,
    pick,
)
from talkie_tui.devserver.talkie.demo_request import Request
from talkie_tui.devserver.talkie.run_context import RunContext

# What the agent asks when a request did not say which one (English, Czech).
WHICH_OFFER = ("Which offer should I send?", "Kterou nabídku mám poslat?")
WHICH_COMPANY = (
    "Which company is the note for? For example `add a note to Alfa: call back on Friday`.",
    "Ke které firmě mám poznámku přidat? Třeba `přidej poznámku k Alfě: zavolat v pátek`.",
)
WHICH_CONTACT = ("Which contact should I delete?", "Který kontakt mám smazat?")

# The word that confirms a tool's action by voice ("yes, send"); the others are confirmed on
# the screen (a note needs no more, a deletion wants the button).
VOICE_KEYWORDS: dict[str, Text] = {"send_offer_email": ("send", "odeslat")}


async def _ask_which(ctx: RunContext, req: Request, question: Text, names: list[str]) -> None:
    listing = "\n".join(f"- {name}" for name in names)
    await ctx.say(f"{pick(question, req.czech)}\n\n{listing}")


async def _propose(
    ctx: RunContext, req: Request, tool: str, summary: str, params: dict[str, Any], then: str
) -> None:
    """Propose the action of a tool (its kind is the tool's name), then say what happens next."""
    await ctx.propose(
        kind=tool,
        tool_name=tool,
        label=tool_label(tool, req.czech),
        summary=summary,
        params=params,
        voice_keyword=pick(VOICE_KEYWORDS[tool], req.czech) if tool in VOICE_KEYWORDS else None,
    )
    await ctx.say(then)


async def send_offer_answer(ctx: RunContext, req: Request) -> None:
    """Propose e-mailing an offer (medium risk, outbound with undo)."""
    offer = req.offer or (offer_for_company(req.company.id) if req.company else None)
    if offer is None:
        offers = [f"`{item.number}` – {company(item.company_id).name}" for item in OFFERS]
        return await _ask_which(ctx, req, WHICH_OFFER, offers)
    person, seconds = contact(offer.contact_id), f"{ctx.config.undo_seconds:g}"
    summary = req.t(
        f"Send offer {offer.number} to {person.email}",
        f"Odeslat nabídku {offer.number} na {person.email}",
    )
    params = {"offer": offer.number, "to": person.email, "attachment": offer.file_name}
    then = req.t(
        f"I've prepared the e-mail with offer **{offer.number}** for *{person.name}* "
        f"(`{person.email}`). Nothing goes out until you confirm – and then you still have "
        f"{seconds} seconds to take it back.",
        f"E-mail s nabídkou **{offer.number}** pro *{person.name}* (`{person.email}`) je "
        f"připravený. Nic neodejde, dokud to nepotvrdíte – a pak ho ještě {seconds} s "
        "můžete vzít zpět.",
    )
    await _propose(ctx, req, "send_offer_email", summary, params, then)


NOTE_SEPARATOR = re.compile(r"[:–]\s*")


async def add_note_answer(ctx: RunContext, req: Request) -> None:
    """Propose adding a note to a company (low risk)."""
    firm = req.company
    if firm is None:
        return await _ask_which(ctx, req, WHICH_COMPANY, [item.name for item in COMPANIES])
    parts = NOTE_SEPARATOR.split(req.text, maxsplit=1)
    note = parts[1].strip() if len(parts) == 2 and parts[1].strip() else ""
    note = note or req.t("Follow up next week.", "Ozvat se příští týden.")
    summary = req.t(
        f"Add a note to {firm.name}: “{note}”", f"Přidat poznámku k {firm.name}: „{note}“"
    )
    then = req.t(
        f"Here is the note for **{firm.name}** – confirm it and I'll save it.",
        f"Poznámka pro **{firm.name}** je připravená – po potvrzení ji uložím.",
    )
    await _propose(ctx, req, "add_note", summary, {"company": firm.id, "note": note}, then)


async def delete_contact_answer(ctx: RunContext, req: Request) -> None:
    """Propose deleting a contact (high risk: button only)."""
    person = req.contact
    if person is None:
        people = [f"{item.name} ({company(item.company_id).name})" for item in CONTACTS]
        return await _ask_which(ctx, req, WHICH_CONTACT, people)
    firm = company(person.company_id)
    summary = req.t(
        f"Delete contact {person.name} ({firm.name})", f"Smazat kontakt {person.name} ({firm.name})"
    )
    then = req.t(
        f"Deleting **{person.name}** can't be undone, so it needs a press of the button – "
        "voice confirmation is off for this one.",
        f"Smazání kontaktu **{person.name}** nejde vrátit, proto je potřeba stisknout "
        "tlačítko – hlasem to potvrdit nejde.",
    )
    params = {"contact": person.id, "name": person.name}
    await _propose(ctx, req, "delete_contact", summary, params, then)
