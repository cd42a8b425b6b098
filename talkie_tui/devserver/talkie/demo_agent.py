"""The scripted demo CRM assistant: which intent a message asks for, and the answer it gets.

What a message says (language, names) is read in demo_request.py; the answers themselves are in
demo_answers.py, demo_lookups.py and demo_proposals.py, shared with the voice tools.
"""

from __future__ import annotations

from dataclasses import dataclass

from talkie_tui.devserver.talkie.demo_answers import (
    Handler,
    greeting_answer,
    help_answer,
    meetings_answer,
    thanks_answer,
    unknown_answer,
)
from talkie_tui.devserver.talkie.demo_lookups import (
    invoices_answer,
    lookup_answer,
    offer_answer,
    pipeline_answer,
)
from talkie_tui.devserver.talkie.demo_proposals import (
    add_note_answer,
    delete_contact_answer,
    send_offer_answer,
)
from talkie_tui.devserver.talkie.demo_request import Request, mentions, parse
from talkie_tui.devserver.talkie.run_context import RunContext


@dataclass(frozen=True)
class Intent:
    """A request the agent understands: every group must have a stem in the message."""

    name: str
    groups: tuple[tuple[str, ...], ...]
    handler: Handler
    whole_words: bool = False

    def matches(self, req: Request) -> bool:
        """Whether the message asks for this."""
        return all(
            mentions(req.normalized, *group, whole=self.whole_words) for group in self.groups
        )


# Word stems (lowercase, no diacritics) that select an intent.
HELP = ("help", "pomoc", "napoved", "what can you", "co umis")
SEND = ("send", "e-mail", "email", "mail", "posl", "odesl")
OFFER = ("offer", "quote", "nabid", "n-2026")
DELETE = ("delete", "remove", "smaz", "odstran")
NOTE = ("note", "poznam", "zapis")
INVOICES = ("invoice", "faktur", "unpaid", "nezaplac", "payment")
MEETING_WORDS = ("meeting", "calendar", "schuz", "kalendar", "agenda", "today", "dnes")
PIPELINE = ("pipeline", "deal", "obchod", "prilezitost", "forecast", "sales", "overview", "prehled")
LOOKUP = (
    *("contact", "kontakt", "company", "firm", "spolecnost", "client", "klient"),
    *("who is", "kdo je", "find", "najdi", "hledej", "show", "ukaz", "search"),
)
GREETINGS = ("hi", "hello", "hey", "good morning", "ahoj", "cau", "dobry den", "zdravim")
THANKS = ("thank", "thx", "dik", "dekuj")

# Order matters: the more specific requests come first.
INTENTS: tuple[Intent, ...] = (
    Intent("help", (HELP,), help_answer),
    Intent("send_offer", (SEND, OFFER), send_offer_answer),
    Intent("delete_contact", (DELETE,), delete_contact_answer),
    Intent("add_note", (NOTE,), add_note_answer),
    Intent("invoices", (INVOICES,), invoices_answer),
    Intent("meetings", (MEETING_WORDS,), meetings_answer),
    Intent("offer", (OFFER,), offer_answer),
    Intent("pipeline", (PIPELINE,), pipeline_answer),
    Intent("lookup", (LOOKUP,), lookup_answer),
    Intent("greeting", (GREETINGS,), greeting_answer, whole_words=True),
    Intent("thanks", (THANKS,), thanks_answer),
)


def match(text: str) -> tuple[str, Handler, Request]:
    """The intent name, its handler and the parsed request for a message."""
    req = parse(text)
    for intent in INTENTS:
        if intent.matches(req):
            return intent.name, intent.handler, req
    if req.company is not None or req.contact is not None:
        return "lookup", lookup_answer, req
    return "unknown", unknown_answer, req


async def answer(ctx: RunContext) -> None:
    """Answer one user message (the agent entry point)."""
    _, handler, req = match(ctx.user_text)
    ctx.locale = "cs" if req.czech else "en"
    await handler(ctx, req)
