"""What the demo agent's actions do once a person confirmed them."""

from __future__ import annotations

from typing import Any

from talkie_tui.devserver.talkie import cards
from talkie_tui.devserver.talkie.actions import ActionKind, ActionResult
from talkie_tui.devserver.talkie.assets import sample_files
from talkie_tui.devserver.talkie.demo_data import company, contact, pick


def _result(
    czech: bool, fallback: tuple[str, str], title: tuple[str, str], *blocks: Any, **extra: Any
) -> ActionResult:
    # Each result says each thing once: the title says what happened, the blocks add only what
    # the title does not (no badge that repeats it), and the fallback says it all in one line.
    return ActionResult(
        cards.card(pick(title, czech), list(blocks), pick(fallback, czech), **extra)
    )


def _add_note(params: dict[str, Any], czech: bool) -> ActionResult:
    firm, note = company(params["company"]), params["note"]
    return _result(
        czech,
        (f"Note added to {firm.name}: “{note}”", f"Poznámka k firmě {firm.name} uložena: „{note}“"),
        ("Note added", "Poznámka uložena"),
        cards.fields(
            ("Firma" if czech else "Company", firm.name),
            ("Poznámka" if czech else "Note", note),
        ),
        cards.link("Otevřít v CRM" if czech else "Open in the CRM", firm.url),
    )


def _send_offer(params: dict[str, Any], czech: bool) -> ActionResult:
    pdf = sample_files()[params["attachment"]]
    return _result(
        czech,
        (
            f"Offer {params['offer']} was sent to {params['to']}.",
            f"Nabídka {params['offer']} odešla na {params['to']}.",
        ),
        ("Offer sent", "Nabídka odeslána"),
        cards.fields(
            ("Komu" if czech else "To", params["to"]),
            ("Nabídka" if czech else "Offer", params["offer"]),
        ),
        cards.file(pdf.name, pdf.url, mime=pdf.mime, size=pdf.size),
    )


def _delete_contact(params: dict[str, Any], czech: bool) -> ActionResult:
    # The sample data are shared by every server in the process, so nothing is really removed.
    # An irreversible outcome gets its red badge; the title then names whom it concerns.
    person = contact(params["contact"])
    firm = company(person.company_id)
    return _result(
        czech,
        (
            f"Contact {params['name']} ({firm.name}) was deleted.",
            f"Kontakt {params['name']} ({firm.name}) je smazaný.",
        ),
        (params["name"], params["name"]),
        cards.badge("Smazáno" if czech else "Deleted", "negative"),
        subtitle=firm.name,
    )


ACTION_KINDS: dict[str, ActionKind] = {
    "add_note": ActionKind("add_note", "low", _add_note),
    "send_offer_email": ActionKind("send_offer_email", "medium", _send_offer, outbound=True),
    "delete_contact": ActionKind("delete_contact", "high", _delete_contact),
}
