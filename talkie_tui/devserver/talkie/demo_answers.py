"""The demo agent's answers (Czech or English): the tools' status labels, and the replies to
help, greetings, thanks, what it does not understand and the day's meetings. The CRM lookups
are in demo_lookups.py, the action proposals in demo_proposals.py. The chat agent picks an
answer by intent (demo_agent.py); the voice tools call them by name (voice_tools.py).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from talkie_tui.devserver.common import clock
from talkie_tui.devserver.talkie import cards
from talkie_tui.devserver.talkie.accounts import DEV_USER
from talkie_tui.devserver.talkie.demo_data import (
    MEETINGS,
    MEETINGS_LATER_THIS_WEEK,
    Text,
    company,
    contact,
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


def tool_pause(ctx: RunContext) -> float:
    """How long a tool "works" in the demo."""
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
        await ctx.sleep(tool_pause(ctx))
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
