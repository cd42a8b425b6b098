"""Sample CRM data of the demo agent: companies, contacts, meetings, offers, deals."""

from __future__ import annotations

from dataclasses import dataclass

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
class Company:
    """A customer or prospect."""

    id: str
    name: str
    city: str
    kind: Text
    status: Text
    tone: Tone
    ico: str
    turnover_czk: int
    owner: str
    phone: str
    note: Text
    aliases: tuple[str, ...]

    @property
    def url(self) -> str:
        """Same-origin path of the record page."""
        return f"/crm/companies/{self.id}"


@dataclass(frozen=True)
class Contact:
    """A person at a company."""

    id: str
    name: str
    company_id: str
    role: Text
    email: str
    phone: str
    aliases: tuple[str, ...]

    @property
    def url(self) -> str:
        """Same-origin path of the record page."""
        return f"/crm/contacts/{self.id}"


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


COMPANIES: tuple[Company, ...] = (
    Company(
        id="alfa",
        name="Alfa s.r.o.",
        city="Brno",
        kind=("Client", "Klient"),
        status=("Active", "Aktivní"),
        tone="positive",
        ico="12345678",
        turnover_czk=1_200_000,
        owner="Jana Nováková",
        phone="+420 541 123 456",
        note=(
            "Renewal of the **annual licence** is due in November.",
            "V listopadu končí **roční licence**, je čas na obnovu.",
        ),
        aliases=("alfa", "alfu", "alfe", "alfy", "alfou"),
    ),
    Company(
        id="beta",
        name="Beta Logistics a.s.",
        city="Praha",
        kind=("Prospect", "Potenciální klient"),
        status=("Evaluating", "Rozhoduje se"),  # not the kind again: the card shows both
        tone="neutral",
        ico="23456789",
        turnover_czk=0,
        owner="Jana Nováková",
        phone="+420 222 987 654",
        note=(
            "Asked for a *demo of the mobile app*.",
            "Chtějí *ukázku mobilní aplikace*.",
        ),
        aliases=("beta", "betu", "bete", "bety", "betou"),
    ),
    Company(
        id="gamma",
        name="Gamma Foods s.r.o.",
        city="Ostrava",
        kind=("Client", "Klient"),
        status=("Overdue invoices", "Faktury po splatnosti"),
        tone="negative",
        ico="34567890",
        turnover_czk=480_000,
        owner="Martin Kučera",
        phone="+420 596 555 010",
        note=(
            "Two invoices are **over 30 days** past due.",
            "Dvě faktury jsou **přes 30 dní** po splatnosti.",
        ),
        aliases=("gamm",),
    ),
    Company(
        id="delta",
        name="Delta Software GmbH",
        city="Wien",
        kind=("Partner", "Partner"),
        status=("Contract ends soon", "Smlouva brzy končí"),
        tone="warning",
        ico="ATU12345678",
        turnover_czk=2_350_000,
        owner="Jana Nováková",
        phone="+43 1 234 5678",
        note=(
            "Partnership contract ends on *31 December*.",
            "Partnerská smlouva končí *31. prosince*.",
        ),
        aliases=("delta", "deltu", "delte", "delty", "deltou"),
    ),
)

CONTACTS: tuple[Contact, ...] = (
    Contact(
        id="novak",
        name="Petr Novák",
        company_id="alfa",
        role=("Managing director", "Jednatel"),
        email="novak@alfa.cz",
        phone="+420 603 111 222",
        aliases=("novak", "petr"),
    ),
    Contact(
        id="cerna",
        name="Lucie Černá",
        company_id="alfa",
        role=("Purchasing", "Nákup"),
        email="cerna@alfa.cz",
        phone="+420 603 333 444",
        aliases=("cern", "lucie", "lucii"),
    ),
    Contact(
        id="svobodova",
        name="Jana Svobodová",
        company_id="beta",
        role=("Head of operations", "Vedoucí provozu"),
        email="svobodova@betalogistics.cz",
        phone="+420 777 555 666",
        aliases=("svobodov",),
    ),
    Contact(
        id="dvorak",
        name="Tomáš Dvořák",
        company_id="gamma",
        role=("Finance", "Finance"),
        email="dvorak@gammafoods.cz",
        phone="+420 731 777 888",
        aliases=("dvorak", "tomas"),
    ),
    Contact(
        id="fischer",
        name="Emma Fischer",
        company_id="delta",
        role=("Partner manager", "Partnerská manažerka"),
        email="emma.fischer@delta-software.at",
        phone="+43 664 123 4567",
        aliases=("fischer", "emma"),
    ),
)

MEETINGS: tuple[Meeting, ...] = (
    Meeting(
        "10:00",
        ("Quarterly review", "Čtvrtletní schůzka"),
        "novak",
        ("Alfa office, Brno", "Kancelář Alfa, Brno"),
    ),
    Meeting(
        "13:30",
        ("Mobile app demo", "Ukázka mobilní aplikace"),
        "svobodova",
        ("Video call", "Videohovor"),
    ),
    Meeting(
        "16:00",
        ("Partnership renewal", "Obnova partnerství"),
        "fischer",
        ("Phone", "Telefon"),
    ),
)

# Meetings later this week, counted in the card's `more`.
MEETINGS_LATER_THIS_WEEK = 4

OFFERS: tuple[Offer, ...] = (
    Offer(
        number="N-2026-014",
        company_id="alfa",
        contact_id="novak",
        amount_czk=1_240_000,
        valid_until="2026-12-15",
        status=("Awaiting reply", "Čeká na odpověď"),
        tone="warning",
        lines=("CRM licence, 50 users, 24 months", "Onboarding workshop", "Priority support"),
    ),
    Offer(
        number="N-2026-015",
        company_id="beta",
        contact_id="svobodova",
        amount_czk=380_000,
        valid_until="2026-12-31",
        status=("Draft", "Koncept"),
        tone="neutral",
        lines=("CRM licence, 15 users, 12 months", "Mobile app rollout"),
    ),
)

DEALS: tuple[Deal, ...] = (
    Deal("Licence renewal 2027", "alfa", ("Negotiation", "Vyjednávání"), 1_240_000),
    Deal("Partner programme", "delta", ("Proposal", "Nabídka"), 900_000),
    Deal("Fleet CRM", "beta", ("Qualification", "Kvalifikace"), 380_000),
    Deal("Support upgrade", "gamma", ("On hold", "Pozastaveno"), 120_000),
    Deal("Warehouse tablets", "beta", ("Discovery", "Průzkum"), 95_000),
    Deal("Training package", "alfa", ("Proposal", "Nabídka"), 60_000),
)
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
