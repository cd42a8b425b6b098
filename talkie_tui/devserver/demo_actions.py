"""What the demo agent's actions do once a person confirmed them."""

from __future__ import annotations

from typing import Any

from . import cards
from .actions import ActionKind, ActionResult
from .assets import sample_files
from .demo_data import company, pick


def _result(
    czech: bool, text: tuple[str, str], title: tuple[str, str], *blocks: Any
) -> ActionResult:
    chosen_title = pick(title, czech)
    chosen_text = pick(text, czech)
    return ActionResult(chosen_text, cards.card(chosen_title, list(blocks), chosen_text))


def _add_note(params: dict[str, Any], czech: bool) -> ActionResult:
    firm = company(params["company"])
    return _result(
        czech,
        (f"The note was added to {firm.name}.", f"Poznámka je uložená u firmy {firm.name}."),
        ("Note added", "Poznámka uložena"),
        cards.badge("Uloženo" if czech else "Saved", "positive"),
        cards.fields(
            ("Firma" if czech else "Company", firm.name),
            ("Poznámka" if czech else "Note", params["note"]),
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
        cards.badge("Odesláno" if czech else "Sent", "positive"),
        cards.fields(
            ("Komu" if czech else "To", params["to"]),
            ("Nabídka" if czech else "Offer", params["offer"]),
        ),
        cards.file(pdf.name, pdf.url, mime=pdf.mime, size=pdf.size),
    )


def _delete_contact(params: dict[str, Any], czech: bool) -> ActionResult:
    # The sample data are shared by every server in the process, so nothing is really removed.
    return _result(
        czech,
        (f"Contact {params['name']} was deleted.", f"Kontakt {params['name']} je smazaný."),
        ("Contact deleted", "Kontakt smazán"),
        cards.badge("Smazáno" if czech else "Deleted", "negative"),
        cards.fields(("Jméno" if czech else "Name", params["name"])),
    )


ACTION_KINDS: dict[str, ActionKind] = {
    "add_note": ActionKind("add_note", "low", _add_note),
    "send_offer_email": ActionKind("send_offer_email", "medium", _send_offer, outbound=True),
    "delete_contact": ActionKind("delete_contact", "high", _delete_contact),
}
