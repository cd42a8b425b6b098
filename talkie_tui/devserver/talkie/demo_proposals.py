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
    company,
    contact,
    offer_for_company,
)
from talkie_tui.devserver.talkie.demo_request import Request
from talkie_tui.devserver.talkie.run_context import RunContext


async def _propose(
    ctx: RunContext,
    req: Request,
    tool: str,
    *,
    summary: str,
    params: dict[str, Any],
    voice_keyword: str | None = None,
) -> None:
    """Propose the action of a tool (its kind is the tool's name), with its status label."""
    await ctx.propose(
        kind=tool,
        tool_name=tool,
        label=tool_label(tool, req.czech),
        summary=summary,
        params=params,
        voice_keyword=voice_keyword,
    )


async def _ask_which(
    ctx: RunContext, req: Request, english: str, czech: str, names: list[str]
) -> None:
    listing = "\n".join(f"- {name}" for name in names)
    await ctx.say(req.t(f"{english}\n\n{listing}", f"{czech}\n\n{listing}"))


async def send_offer_answer(ctx: RunContext, req: Request) -> None:
    """Propose e-mailing an offer (medium risk, outbound with undo)."""
    offer = req.offer or (offer_for_company(req.company.id) if req.company else None)
    if offer is None:
        await _ask_which(
            ctx,
            req,
            "Which offer should I send?",
            "Kterou nabídku mám poslat?",
            [f"`{item.number}` – {company(item.company_id).name}" for item in OFFERS],
        )
        return
    person = contact(offer.contact_id)
    await _propose(
        ctx,
        req,
        "send_offer_email",
        summary=req.t(
            f"Send offer {offer.number} to {person.email}",
            f"Odeslat nabídku {offer.number} na {person.email}",
        ),
        params={"offer": offer.number, "to": person.email, "attachment": offer.file_name},
        voice_keyword=req.t("send", "odeslat"),
    )
    seconds = f"{ctx.config.undo_seconds:g}"
    await ctx.say(
        req.t(
            f"I've prepared the e-mail with offer **{offer.number}** for *{person.name}* "
            f"(`{person.email}`). Nothing goes out until you confirm – and then you still have "
            f"{seconds} seconds to take it back.",
            f"E-mail s nabídkou **{offer.number}** pro *{person.name}* (`{person.email}`) je "
            f"připravený. Nic neodejde, dokud to nepotvrdíte – a pak ho ještě {seconds} s "
            "můžete vzít zpět.",
        )
    )


NOTE_SEPARATOR = re.compile(r"[:–]\s*")


async def add_note_answer(ctx: RunContext, req: Request) -> None:
    """Propose adding a note to a company (low risk)."""
    firm = req.company
    if firm is None:
        await _ask_which(
            ctx,
            req,
            "Which company is the note for? For example `add a note to Alfa: call back on Friday`.",
            "Ke které firmě mám poznámku přidat? Třeba `přidej poznámku k Alfě: zavolat v pátek`.",
            [item.name for item in COMPANIES],
        )
        return
    parts = NOTE_SEPARATOR.split(req.text, maxsplit=1)
    note = parts[1].strip() if len(parts) == 2 and parts[1].strip() else ""
    note = note or req.t("Follow up next week.", "Ozvat se příští týden.")
    await _propose(
        ctx,
        req,
        "add_note",
        summary=req.t(
            f"Add a note to {firm.name}: “{note}”", f"Přidat poznámku k {firm.name}: „{note}“"
        ),
        params={"company": firm.id, "note": note},
    )
    await ctx.say(
        req.t(
            f"Here is the note for **{firm.name}** – confirm it and I'll save it.",
            f"Poznámka pro **{firm.name}** je připravená – po potvrzení ji uložím.",
        )
    )


async def delete_contact_answer(ctx: RunContext, req: Request) -> None:
    """Propose deleting a contact (high risk: button only)."""
    person = req.contact
    if person is None:
        await _ask_which(
            ctx,
            req,
            "Which contact should I delete?",
            "Který kontakt mám smazat?",
            [f"{item.name} ({company(item.company_id).name})" for item in CONTACTS],
        )
        return
    firm = company(person.company_id)
    await _propose(
        ctx,
        req,
        "delete_contact",
        summary=req.t(
            f"Delete contact {person.name} ({firm.name})",
            f"Smazat kontakt {person.name} ({firm.name})",
        ),
        params={"contact": person.id, "name": person.name},
    )
    await ctx.say(
        req.t(
            f"Deleting **{person.name}** can't be undone, so it needs a press of the button – "
            "voice confirmation is off for this one.",
            f"Smazání kontaktu **{person.name}** nejde vrátit, proto je potřeba stisknout "
            "tlačítko – hlasem to potvrdit nejde.",
        )
    )
