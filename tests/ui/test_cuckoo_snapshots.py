"""SVG snapshots of talkie on a hub, in the real app: a chat with buttons (one taken), quick
replies, a reply quote, the activity line and a streaming bubble; the devices screen.

The fake backend (`cuckoo_fake`) plays fixed hub frames through the real `CuckooConversation`,
so every run draws the same. Times shown are relative ("used 3 h ago"), so they do not move.
"""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from talkie_tui.ui.screens.devices import DevicesScreen
from talkie_tui.ui.widgets.buttons import ButtonsView, QuickRepliesView
from tests.ui.cuckoo_fake import (
    BOOKING_BUTTONS,
    HOLD,
    FakeCuckooBackend,
    activity,
    auto_id,
    created,
    cuckoo_app,
    delta,
    hub_message,
)
from tests.ui.snapshot_steps import ready

SIZE = (120, 40)


def chat_backend() -> FakeCuckooBackend:
    backend = FakeCuckooBackend()
    booked = auto_id("booked")
    stream = auto_id("stream")
    backend.scripts["Book me a train to Brno on Friday"] = [
        created(
            hub_message(
                auto_id("offer"),
                "The 9:15 from Praha hl.n. arrives at 11:47. Shall I book a seat?",
                buttons=BOOKING_BUTTONS,
            )
        ),
        created(
            hub_message(
                booked,
                "Which class?",
                quick_replies=["First class", "Second class", "The cheapest"],
                reply_to={
                    "id": "msg_00000001",
                    "sender_kind": "user",
                    "text_preview": "Book me a train to Brno on Friday",
                },
            )
        ),
        activity("working", "Checking seats", seconds=3600),
        created(hub_message(stream, "", status="streaming"), "message.started"),
        delta(stream, "Meanwhile, the weather in Brno on Friday: "),
        delta(stream, "sunny, 18 °C in the afternoon, a light wind from the"),
        HOLD,
    ]
    return backend


def test_chat_with_buttons_quick_replies_and_a_streaming_bubble(
    snap_compare, tmp_path: Path
) -> None:
    backend = chat_backend()

    async def run_before(pilot: Pilot[None]) -> None:
        screen = await ready(pilot)
        screen.composer.insert("Book me a train to Brno on Friday")
        await pilot.press("enter")
        for _ in range(300):
            views = screen.transcript.query(QuickRepliesView)
            text = screen.session.conversation.turns[-1].text if backend.live else ""
            if views and "wind from the" in text:
                break
            await pilot.pause(0.02)
        view = screen.transcript.query_one(ButtonsView)
        while view.is_guarded or any(v.is_guarded for v in views):
            await pilot.pause(0.05)
        await pilot.pause(0.6)  # the activity line reads the conversation twice a second
        for box in screen.query("Input, TextArea"):
            box.cursor_blink = False  # type: ignore[attr-defined]
        await pilot.pause(0.1)

    app = cuckoo_app(backend, tmp_path)
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_devices_screen(snap_compare, tmp_path: Path) -> None:
    backend = FakeCuckooBackend()

    async def run_before(pilot: Pilot[None]) -> None:
        await ready(pilot)
        app = pilot.app
        await app.run_action("devices")
        for _ in range(200):
            screen = app.screen
            if isinstance(screen, DevicesScreen) and screen.is_mounted and screen.storage_text:
                break
            await pilot.pause(0.02)
        await app.workers.wait_for_complete()
        await pilot.pause(0.1)

    app = cuckoo_app(backend, tmp_path)
    assert snap_compare(app, terminal_size=(100, 30), run_before=run_before)
