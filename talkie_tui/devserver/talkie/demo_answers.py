"""The demo agent's answers (Czech or English): the replies, tool statuses, cards and action
proposals for each thing it understands. The chat agent picks one by intent (demo_agent.py);
the voice tools call them by name (voice_tools.py).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable

from talkie_tui.devserver.common import clock
from talkie_tui.devserver.talkie import cards
from talkie_tui.devserver.talkie.accounts import DEV_USER
from talkie_tui.devserver.talkie.assets import sample_files
from talkie_tui.devserver.talkie.demo_data import (
    COMPANIES,
    CONTACTS,
    DEALS,
    DEALS_SHOWN,
    MEETINGS,
    MEETINGS_LATER_THIS_WEEK,
    OFFERS,
    WON_THIS_MONTH_CZK,
    Company,
    Offer,
    Text,
    company,
    contact,
    contacts_of,
    format_czk,
    offer_for_company,
    pick,
)
from talkie_tui.devserver.talkie.demo_request import Request
from talkie_tui.devserver.talkie.run_context import RunContext

# An answer: what the agent does for one request it understood.
Handler = Callable[[RunContext, Request], Awaitable[None]]

# The status labels of the agent's tools (English, Czech); voice sessions send them too (§10.1).
TOOL_LABELS: dict[str, Text] = {
    "list_meetings": ("Checking your calendar…", "Prohlížím kalendář…"),
    "search_contacts": ("Searching contacts…", "Hledám v kontaktech…"),
    "find_offer": ("Loading offers…", "Načítám nabídky…"),
    "load_pipeline": ("Adding up the pipeline…", "Sčítám obchodní příležitosti…"),
    "fetch_invoices": ("Contacting the accounting system…", "Spojuji se s účetnictvím…"),
    "send_offer_email": ("Preparing the e-mail…", "Připravuji e-mail…"),
    "add_note": ("Preparing the note…", "Připravuji poznámku…"),
    "delete_contact": ("Checking the contact…", "Ověřuji kontakt…"),
}


def tool_label(name: str, czech: bool) -> str:
    """The status label of a tool in the answer language."""
    return pick(TOOL_LABELS[name], czech)


def _tool_pause(ctx: RunContext) -> float:
    # Tools "work" a little longer than a text delta, so their status label is visible.
    return ctx.config.demo_delay * 8


def _first_name() -> str:
    return DEV_USER["name"].split()[0]


# --- answers ---------------------------------------------------------------------------------


async def help_answer(ctx: RunContext, req: Request) -> None:
    """What the assistant understands."""
    await ctx.say(
        req.t(
            "I'm the assistant of the **Talkie Demo CRM**. The data are samples and nothing is "
            "really sent. Try:\n\n"
            "1. *Meetings* – `what meetings do I have today?`\n"
            "2. *Companies and people* – `show Alfa` or `who is Petr Novák?`\n"
            "3. *Offers* – `show offer N-2026-014`\n"
            "4. *Sales pipeline* – `pipeline overview`\n"
            "5. *Invoices* – `unpaid invoices`\n\n"
            "Things that change data wait for your confirmation:\n\n"
            "- `add a note to Alfa: call back on Friday` – low risk\n"
            "- `send the offer to Alfa` – an e-mail, with a short undo window\n"
            "- `delete contact Tomáš Dvořák` – high risk, button only\n\n"
            "Write in Czech and I'll answer in Czech.",
            "Jsem asistent **Talkie Demo CRM**. Data jsou ukázková a nic se doopravdy "
            "neodesílá. Zkuste:\n\n"
            "1. *Schůzky* – `jaké mám dnes schůzky?`\n"
            "2. *Firmy a lidé* – `ukaž Alfu` nebo `kdo je Petr Novák?`\n"
            "3. *Nabídky* – `ukaž nabídku N-2026-014`\n"
            "4. *Obchody* – `přehled obchodů`\n"
            "5. *Faktury* – `nezaplacené faktury`\n\n"
            "Co mění data, čeká na vaše potvrzení:\n\n"
            "- `přidej poznámku k Alfě: zavolat v pátek` – nízké riziko\n"
            "- `pošli nabídku Alfě` – e-mail, který jde ještě chvíli vrátit\n"
            "- `smaž kontakt Tomáš Dvořák` – vysoké riziko, jen tlačítkem\n\n"
            "Write in English and I'll answer in English.",
        )
    )


async def greeting_answer(ctx: RunContext, req: Request) -> None:
    """A friendly hello."""
    name = _first_name()
    await ctx.say(
        req.t(
            f"Hello, {name}! I can look into your meetings, companies, offers and pipeline. "
            "Type `help` to see everything I understand.",
            f"Dobrý den, {name}! Podívám se vám do schůzek, firem, nabídek a obchodů. "
            "Napište `pomoc` a ukážu, čemu rozumím.",
        )
    )


async def thanks_answer(ctx: RunContext, req: Request) -> None:
    """You're welcome."""
    await ctx.say(req.t("You're welcome!", "Rádo se stalo!"))


async def unknown_answer(ctx: RunContext, req: Request) -> None:
    """A friendly answer that points to `help`."""
    snippet = " ".join(req.text.split())
    if len(snippet) > 60:
        snippet = snippet[:59].rstrip() + "…"
    await ctx.say(
        req.t(
            f"I'm not sure what you mean by “{snippet}”. I'm a demo assistant and understand "
            "only a few things – type `help` to see them.",
            f"Nejsem si jistý, co myslíte tím „{snippet}“. Jsem ukázkový asistent a rozumím "
            "jen několika věcem – napište `pomoc` a ukážu je.",
        )
    )


async def meetings_answer(ctx: RunContext, req: Request) -> None:
    """Today's calendar as a list card."""
    async with ctx.tool(
        "list_meetings",
        tool_label("list_meetings", req.czech),
        args={"day": "today"},
    ):
        await ctx.sleep(_tool_pause(ctx))
    items = []
    for meeting in MEETINGS:
        person = contact(meeting.contact_id)
        firm = company(person.company_id)
        items.append(
            cards.item(
                f"{meeting.time} {pick(meeting.title, req.czech)}",
                f"{person.name} · {firm.name} · {pick(meeting.place, req.czech)}",
                person.url,
            )
        )
    title = req.t("Today's meetings", "Dnešní schůzky")
    fallback = f"{title}: " + ", ".join(f"{item['title']} ({item['subtitle']})" for item in items)
    ctx.card(
        cards.card(
            title,
            [
                # All of today's are listed: the week's others are the calendar's to show.
                cards.list_block(items),
                cards.link(
                    req.t(
                        f"Open the calendar ({MEETINGS_LATER_THIS_WEEK} more this week)",
                        f"Otevřít kalendář (tento týden ještě {MEETINGS_LATER_THIS_WEEK})",
                    ),
                    "/crm/calendar",
                ),
            ],
            fallback,
            subtitle=clock.now().date().isoformat(),
            a11y_label=req.t("Card with today's meetings", "Karta s dnešními schůzkami"),
        )
    )
    first = MEETINGS[0]
    person = contact(first.contact_id)
    firm = company(person.company_id)
    await ctx.say(
        req.t(
            f"You have **{len(MEETINGS)} meetings** today. The first one starts at "
            f"**{first.time}** – *{pick(first.title, False)}* with {person.name} from "
            f"[{firm.name}]({firm.url}).",
            f"Dnes máte **{len(MEETINGS)} schůzky**. První začíná v **{first.time}** – "
            f"*{pick(first.title, True)}* s {person.name} z [{firm.name}]({firm.url}).",
        )
    )


def company_card(firm: Company, czech: bool) -> cards.Card:
    """The record card of a company with its people; its title opens the record (`url`)."""
    turnover = format_czk(firm.turnover_czk, czech=czech) if firm.turnover_czk else "—"
    people = [
        cards.item(person.name, f"{pick(person.role, czech)} · {person.email}", person.url)
        for person in contacts_of(firm.id)
    ]
    kind, status = pick(firm.kind, czech), pick(firm.status, czech)
    return cards.card(
        firm.name,
        [
            cards.badge(status, firm.tone),
            cards.fields(
                ("IČO", firm.ico),
                ("Obrat" if czech else "Turnover", turnover),
                ("Obchodník" if czech else "Account owner", firm.owner),
                ("Telefon" if czech else "Phone", firm.phone),
            ),
            cards.heading("Lidé" if czech else "People"),
            cards.list_block(people),
            cards.text(pick(firm.note, czech)),
        ],
        f"{firm.name} – {kind.lower()}, {firm.city}, {status.lower()}",
        subtitle=f"{kind} · {firm.city}",
        url=firm.url,
        a11y_label=f"{'Karta firmy' if czech else 'Company card'} {firm.name}",
    )


async def lookup_answer(ctx: RunContext, req: Request) -> None:
    """A company or person from the CRM."""
    found = req.contact or req.company
    async with ctx.tool(
        "search_contacts",
        tool_label("search_contacts", req.czech),
        args={"query": found.name if found else req.text},
    ):
        await ctx.sleep(_tool_pause(ctx))
    firm = req.company
    if firm is None:
        names = ", ".join(f"**{item.name}**" for item in COMPANIES)
        await ctx.say(
            req.t(
                f"I found no company or person matching that. The CRM knows {names}.",
                f"Nic takového jsem nenašel. V CRM jsou firmy {names}.",
            )
        )
        return
    ctx.card(company_card(firm, req.czech))
    person = req.contact
    if person is not None:
        role = pick(person.role, req.czech).lower()
        text = req.t(
            f"**{person.name}** is the *{role}* of {firm.name} – e-mail `{person.email}`, "
            f"phone `{person.phone}`.",
            f"**{person.name}** – *{role}* ve firmě {firm.name}, e-mail `{person.email}`, "
            f"telefon `{person.phone}`.",
        )
    else:
        text = req.t(
            f"**{firm.name}** is a {pick(firm.kind, False).lower()} from {firm.city} "
            f"(*{pick(firm.status, False).lower()}*). {pick(firm.note, False)}",
            f"**{firm.name}** – {pick(firm.kind, True).lower()} z města {firm.city} "
            f"(*{pick(firm.status, True).lower()}*). {pick(firm.note, True)}",
        )
    await ctx.say(text)
    ctx.open_link(firm.url, req.t(f"Open {firm.name} in the CRM", f"Otevřít {firm.name} v CRM"))


def offer_card(offer: Offer, czech: bool) -> cards.Card:
    """The card of one offer with its PDF; its title opens the offer (`url`)."""
    firm, person = company(offer.company_id), contact(offer.contact_id)
    pdf = sample_files()[offer.file_name]
    title = f"{'Nabídka' if czech else 'Offer'} {offer.number}"
    amount = format_czk(offer.amount_czk, czech=czech)
    return cards.card(
        title,
        [
            cards.badge(pick(offer.status, czech), offer.tone),
            cards.fields(
                ("Částka" if czech else "Amount", amount),
                ("Platnost do" if czech else "Valid until", offer.valid_until),
                ("Kontakt" if czech else "Contact", f"{person.name} <{person.email}>"),
            ),
            cards.file(f"{title}.pdf", pdf.url, mime=pdf.mime, size=pdf.size),
        ],
        f"{title} – {firm.name}, {amount}, {pick(offer.status, czech).lower()}",
        subtitle=firm.name,
        url=f"/crm/offers/{offer.number}",
    )


async def offer_answer(ctx: RunContext, req: Request) -> None:
    """One offer in detail, or the list of offers."""
    async with ctx.tool(
        "find_offer", tool_label("find_offer", req.czech), args={"query": req.text}
    ):
        await ctx.sleep(_tool_pause(ctx))
    offer = req.offer or (offer_for_company(req.company.id) if req.company else None)
    if offer is None and req.company is not None:
        await ctx.say(
            req.t(
                f"There is no offer for **{req.company.name}** yet.",
                f"Pro **{req.company.name}** zatím žádná nabídka není.",
            )
        )
        return
    if offer is None:
        items = [
            cards.item(
                f"{item.number} – {company(item.company_id).name}",
                f"{format_czk(item.amount_czk, czech=req.czech)} · {pick(item.status, req.czech)}",
                f"/crm/offers/{item.number}",
            )
            for item in OFFERS
        ]
        title = req.t("Open offers", "Otevřené nabídky")
        ctx.card(
            cards.card(
                title,
                [cards.list_block(items)],
                f"{title}: " + ", ".join(item["title"] for item in items),
            )
        )
        await ctx.say(
            req.t(
                f"You have **{len(OFFERS)} open offers**. Ask for one by its number, "
                f"e.g. `show offer {OFFERS[0].number}`.",
                f"Máte **{len(OFFERS)} otevřené nabídky**. Konkrétní ukážu podle čísla, "
                f"třeba `ukaž nabídku {OFFERS[0].number}`.",
            )
        )
        return
    ctx.card(offer_card(offer, req.czech))
    firm, person = company(offer.company_id), contact(offer.contact_id)
    amount = format_czk(offer.amount_czk, czech=req.czech)
    await ctx.say(
        req.t(
            f"Offer **{offer.number}** for *{firm.name}* is worth **{amount}** and is valid "
            f"until {offer.valid_until}. Status: *{pick(offer.status, False).lower()}* "
            f"({person.name}). Say `send the offer to {firm.name.split()[0]}` and I'll prepare "
            "the e-mail.",
            f"Nabídka **{offer.number}** pro *{firm.name}* je na **{amount}** a platí do "
            f"{offer.valid_until}. Stav: *{pick(offer.status, True).lower()}* ({person.name}). "
            f"Napište `pošli nabídku {offer.number}` a připravím e-mail.",
        )
    )


async def pipeline_answer(ctx: RunContext, req: Request) -> None:
    """The sales pipeline summary."""
    async with ctx.tool("load_pipeline", tool_label("load_pipeline", req.czech)):
        await ctx.sleep(_tool_pause(ctx))
    total = sum(deal.amount_czk for deal in DEALS)
    ranked = sorted(DEALS, key=lambda deal: deal.amount_czk, reverse=True)
    items = [
        cards.item(
            f"{deal.title} – {company(deal.company_id).name}",
            f"{pick(deal.stage, req.czech)} · {format_czk(deal.amount_czk, czech=req.czech)}",
            company(deal.company_id).url,
        )
        for deal in ranked[:DEALS_SHOWN]
    ]
    title = req.t("Sales pipeline", "Obchodní příležitosti")
    total_text = format_czk(total, czech=req.czech)
    won_text = format_czk(WON_THIS_MONTH_CZK, czech=req.czech)
    ctx.card(
        cards.card(
            title,
            [
                cards.badge(req.t("On track", "V plánu"), "positive"),
                cards.fields(
                    (req.t("Open deals", "Otevřené obchody"), str(len(DEALS))),
                    (req.t("Total value", "Celková hodnota"), total_text),
                    (req.t("Won this month", "Vyhráno tento měsíc"), won_text),
                ),
                cards.heading(req.t("Biggest deals", "Největší obchody")),
                cards.list_block(items, more=len(DEALS) - DEALS_SHOWN),
                cards.link(req.t("Open the pipeline", "Otevřít obchody"), "/crm/pipeline"),
            ],
            req.t(
                f"{title}: {len(DEALS)} open deals worth {total_text}",
                f"{title}: {len(DEALS)} otevřených obchodů za {total_text}",
            ),
            subtitle="Q4 2026",
        )
    )
    lines = "\n".join(
        f"{index}. **{deal.title}** – {company(deal.company_id).name}, "
        f"*{pick(deal.stage, req.czech).lower()}*, {format_czk(deal.amount_czk, czech=req.czech)}"
        for index, deal in enumerate(ranked[:3], start=1)
    )
    await ctx.say(
        req.t(
            f"Your pipeline holds **{len(DEALS)} open deals** worth **{total_text}**. "
            f"The biggest ones:\n\n{lines}\n\nThis month you've already won **{won_text}**.",
            f"Máte **{len(DEALS)} otevřených obchodů** v hodnotě **{total_text}**. "
            f"Největší:\n\n{lines}\n\nTento měsíc už máte vyhráno **{won_text}**.",
        )
    )


async def invoices_answer(ctx: RunContext, req: Request) -> None:
    """The accounting system is down: a tool that fails, and a helpful answer."""
    async with ctx.tool(
        "fetch_invoices",
        tool_label("fetch_invoices", req.czech),
        args={"status": "unpaid"},
    ) as call:
        await ctx.sleep(_tool_pause(ctx) * 2)
        call.fail(
            req.t(
                "The accounting system did not respond (timeout after 5 s).",
                "Účetní systém neodpověděl (časový limit 5 s).",
            )
        )
    await ctx.say(
        req.t(
            "I couldn't reach the **accounting system**, so I can't list invoices right now. "
            "You can:\n\n- try again in a minute\n- open [Invoices in the CRM](/crm/invoices)\n\n"
            "From the CRM itself I know that *Gamma Foods s.r.o.* has two invoices "
            "**over 30 days** past due.",
            "Nepodařilo se mi spojit s **účetním systémem**, faktury teď nezjistím. Můžete:\n\n"
            "- zkusit to za minutu znovu\n- otevřít [Faktury v CRM](/crm/invoices)\n\n"
            "Z CRM vím aspoň to, že *Gamma Foods s.r.o.* má dvě faktury **přes 30 dní** po "
            "splatnosti.",
        )
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
    await ctx.propose(
        kind="send_offer_email",
        tool_name="send_offer_email",
        label=tool_label("send_offer_email", req.czech),
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
    await ctx.propose(
        kind="add_note",
        tool_name="add_note",
        label=tool_label("add_note", req.czech),
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
    await ctx.propose(
        kind="delete_contact",
        tool_name="delete_contact",
        label=tool_label("delete_contact", req.czech),
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
