"""What the demo agent reads in a message: its language and the companies, contacts and offers it
names (a `Request`), and the stem test that the intents match with too (no case, no diacritics).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cache

from talkie_tui.devserver.talkie.demo_data import (
    COMPANIES,
    CONTACTS,
    OFFERS,
    Company,
    Contact,
    Offer,
    company,
)

__all__ = ["Request", "looks_czech", "mentions", "normalize", "parse"]

CZECH_LETTERS = frozenset("áčďéěíňóřšťúůýž")
# Word stems that give away a Czech message written without diacritics.
CZECH_STEMS = (
    "ahoj", "pomoc", "napoved", "schuzk", "kalendar", "dnes", "nabid", "posli", "odesl",
    "smaz", "odstran", "poznam", "faktur", "obchod", "kontakt", "prosim", "dekuj", "diky",
    "kdo je", "ukaz", "najdi", "hledej", "pridej", "zapis", "prehled", "firm", "spolecnost",
    "dobry den", "cau", "zdravim", "mam ", "jake", "jaky",
)  # fmt: skip


def normalize(text: str) -> str:
    """Lowercase without diacritics, for keyword matching."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(char for char in decomposed if not unicodedata.combining(char))


@cache
def _stem_pattern(stems: tuple[str, ...], whole: bool) -> re.Pattern[str]:
    end = r"\b" if whole else ""
    return re.compile(r"\b(?:" + "|".join(re.escape(stem) for stem in stems) + ")" + end)


def mentions(normalized: str, *stems: str, whole: bool = False) -> bool:
    """Whether any stem starts a word of the normalized text (or is a whole word)."""
    return _stem_pattern(stems, whole).search(normalized) is not None


NAME_STEMS = tuple(stem for item in COMPANIES for stem in item.aliases) + tuple(
    stem for item in CONTACTS for stem in item.aliases
)


def looks_czech(text: str) -> bool:
    """Czech diacritics (outside the Czech names of people and firms) or typical Czech words."""
    # "delete contact Tomáš Dvořák" is English although the name has diacritics.
    words = [
        word
        for word in re.findall(r"\w+", text.lower())
        if not mentions(normalize(word), *NAME_STEMS)
    ]
    has_letters = any(char in CZECH_LETTERS for word in words for char in word)
    return has_letters or mentions(normalize(text), *CZECH_STEMS)


@dataclass(frozen=True)
class Request:
    """A user message with what the agent recognised in it."""

    text: str
    normalized: str
    czech: bool
    company: Company | None
    contact: Contact | None
    offer: Offer | None

    def t(self, english: str, czech: str) -> str:
        """Pick the answer language."""
        return czech if self.czech else english


def parse(text: str) -> Request:
    """Recognise the language and the companies, contacts and offers a message names."""
    normalized = normalize(text)
    found_contact = next((c for c in CONTACTS if mentions(normalized, *c.aliases)), None)
    found_company = next((c for c in COMPANIES if mentions(normalized, *c.aliases)), None)
    if found_company is None and found_contact is not None:
        found_company = company(found_contact.company_id)
    found_offer = next((o for o in OFFERS if o.number.lower() in normalized), None)
    return Request(text, normalized, looks_czech(text), found_company, found_contact, found_offer)
