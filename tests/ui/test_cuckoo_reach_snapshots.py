"""SVG snapshots of reaching agents on a hub, in the real app with all its stylesheets: the
catalogue ("Find agents") and what to do about a contact, each a box over the chat."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from talkie_tui.backends.parts.reach import CatalogueEntry, Contact
from talkie_tui.ui.chat.reach import contact_choices, contact_state
from talkie_tui.ui.screens.reach import CatalogueScreen, ContactScreen
from tests.ui.cuckoo_fake import FakeCuckooBackend, cuckoo_app
from tests.ui.snapshot_steps import ready

SIZE = (110, 34)
ENTRIES = [
    CatalogueEntry(
        id="agt_trains",
        handle="train-times",
        display_name="Train Times",
        description="When the trains go, and which are late, anywhere in the country.",
        starters=("Next train to Brno?", "Delays today"),
    ),
    CatalogueEntry(
        id="agt_weather",
        handle="weather",
        display_name="Weather",
        description="Today's weather and the week ahead.",
    ),
]


async def settled(pilot: Pilot[None]) -> None:
    await pilot.app.workers.wait_for_complete()
    for box in pilot.app.screen.query("Input, TextArea"):
        box.cursor_blink = False  # type: ignore[attr-defined]
    await pilot.pause(0.2)


def test_find_agents(snap_compare, tmp_path: Path) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        await ready(pilot)
        await pilot.app.push_screen(CatalogueScreen(ENTRIES))
        await settled(pilot)

    app = cuckoo_app(FakeCuckooBackend(), tmp_path)
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_contact_choices(snap_compare, tmp_path: Path) -> None:
    contact = Contact(
        id="agt_trains", agent=ENTRIES[0], conversation_id="cnv_1", pinned=True, archived=True
    )

    async def run_before(pilot: Pilot[None]) -> None:
        await ready(pilot)
        screen = ContactScreen(contact.agent, contact_state(contact), contact_choices(contact))
        await pilot.app.push_screen(screen)
        await settled(pilot)

    app = cuckoo_app(FakeCuckooBackend(), tmp_path)
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
