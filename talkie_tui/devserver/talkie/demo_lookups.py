"""The demo agent's answers from the CRM (Czech or English): a company or a person, an offer,
the pipeline and the invoices, each with its tool status and its card."""

from __future__ import annotations

from talkie_tui.devserver.talkie import cards
from talkie_tui.devserver.talkie.assets import sample_files
from talkie_tui.devserver.talkie.demo_answers import tool_label, tool_pause
from talkie_tui.devserver.talkie.demo_data import (
    COMPANIES,
    DEALS,
    DEALS_SHOWN,
    OFFERS,
    WON_THIS_MONTH_CZK,
    Company,
    Offer,
    company,
    contact,
    contacts_of,
    format_czk,
    offer_for_company,
    pick,
)
from talkie_tui.devserver.talkie.demo_request import Request
from talkie_tui.devserver.talkie.run_context import RunContext


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
        await ctx.sleep(tool_pause(ctx))
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
        await ctx.sleep(tool_pause(ctx))
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
        await ctx.sleep(tool_pause(ctx))
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
        await ctx.sleep(tool_pause(ctx) * 2)
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
