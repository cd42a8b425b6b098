"""Sample CRM data of the demo agent: companies, contacts, meetings, offers, deals.

The records are data (`demo_crm.json`); this module gives them their types.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from talkie_tui.devserver.talkie.cards import Tone

# (English, Czech)
Text = tuple[str, str]


def pick(text: Text, czech: bool) -> str:
    """The Czech or the English variant."""
    return text[1] if czech else text[0]


def format_czk(amount: int, *, czech: bool) -> str:
    """`1 240 000 Kč` in Czech, `CZK 1,240,000` in English."""
    if czech:
        return f"{amount:,} Kč".replace(",", " ")
    return f"CZK {amount:,}"


@dataclass(frozen=True)
class Record:
    """A company or a person: a page of its own in the CRM, found by the stems of its name."""

    id: str
    name: str
    phone: str
    # Stems of the name's Czech forms ("alfu", "alfou"…) that a request may mention.
    aliases: tuple[str, ...]
    # Its pages are `/crm/<folder>/<id>`.
    folder: ClassVar[str]

    @property
    def url(self) -> str:
        """Same-origin path of the record page."""
        return f"/crm/{self.folder}/{self.id}"


@dataclass(frozen=True)
class Company(Record):
    """A customer or prospect."""

    city: str
    kind: Text
    # Not the kind again: the card shows both.
    status: Text
    tone: Tone
    ico: str
    turnover_czk: int
    owner: str
    note: Text
    folder = "companies"


@dataclass(frozen=True)
class Contact(Record):
    """A person at a company."""

    company_id: str
    role: Text
    email: str
    folder = "contacts"


@dataclass(frozen=True)
class Meeting:
    """An entry of today's calendar."""

    time: str
    title: Text
    contact_id: str
    place: Text


@dataclass(frozen=True)
class Offer:
    """A price offer sent or about to be sent to a customer."""

    number: str
    company_id: str
    contact_id: str
    amount_czk: int
    valid_until: str
    status: Text
    tone: Tone
    lines: tuple[str, ...]

    @property
    def file_name(self) -> str:
        """Name of its PDF under /api/files/."""
        return f"Nabidka-{self.number}.pdf"


@dataclass(frozen=True)
class Deal:
    """An open opportunity in the sales pipeline."""

    title: str
    company_id: str
    stage: Text
    amount_czk: int


R = TypeVar("R")


def _records(kind: type[R], rows: list[dict[str, Any]]) -> tuple[R, ...]:
    """Records of one kind from their JSON rows (whose lists are the records' tuples)."""
    return tuple(
        kind(**{key: tuple(v) if isinstance(v, list) else v for key, v in row.items()})
        for row in rows
    )


_DATA = json.loads(Path(__file__).with_name("demo_crm.json").read_text(encoding="utf-8"))
COMPANIES = _records(Company, _DATA["companies"])
CONTACTS = _records(Contact, _DATA["contacts"])
MEETINGS = _records(Meeting, _DATA["meetings"])
OFFERS = _records(Offer, _DATA["offers"])
DEALS = _records(Deal, _DATA["deals"])

# Meetings later this week, counted in the card's `more`.
MEETINGS_LATER_THIS_WEEK = 4
DEALS_SHOWN = 4
WON_THIS_MONTH_CZK = 640_000


def company(company_id: str) -> Company:
    """A company by id."""
    return next(item for item in COMPANIES if item.id == company_id)


def contact(contact_id: str) -> Contact:
    """A contact by id."""
    return next(item for item in CONTACTS if item.id == contact_id)


def contacts_of(company_id: str) -> list[Contact]:
    """The people at a company."""
    return [item for item in CONTACTS if item.company_id == company_id]


def offer_for_company(company_id: str) -> Offer | None:
    """The newest offer for a company, if any."""
    return next((item for item in reversed(OFFERS) if item.company_id == company_id), None)
