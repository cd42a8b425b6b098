"""What a hub's agent puts in a conversation, inside the real `TalkieApp`: buttons (tapped once,
guarded, taken), URL buttons (opened on a gesture, `tel:` copied), quick replies, the reply
quote, the activity line and the agent's "away" status, and a stopped reply said once. Driven by
a fake backend whose conversation is the real `CuckooConversation` fed hub frames."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from talkie_tui.backends.cuckoo.backend import HubThread
from talkie_tui.core.errors import ConflictError
from talkie_tui.ui.app import TalkieApp
from talkie_tui.ui.chat import takeaways
from talkie_tui.ui.chat.screen import ChatScreen
from talkie_tui.ui.support.links import LinkTarget
from talkie_tui.ui.widgets.activity import ActivityLine
from talkie_tui.ui.widgets.buttons import (
    ButtonsView,
    MessageButtonWidget,
    QuickRepliesView,
    ReplyQuoteView,
)
from talkie_tui.ui.widgets.thread_list import ThreadList
from talkie_tui.ui.widgets.transcript import TurnView
from tests.ui.cuckoo_fake import (
    BOOKING_BUTTONS,
    CONVERSATION,
    END,
    HOLD,
    FakeCuckooBackend,
    activity,
    agent_status,
    auto_id,
    created,
    cuckoo_app,
    delta,
    hub_message,
    next_id,
    reply,
)
from tests.ui.flows import screen_text, until


async def chat(app: TalkieApp, pilot: Pilot[None]) -> ChatScreen:
    """The chat screen, connected."""
    await until(pilot, lambda: isinstance(app.screen, ChatScreen) and app.screen.is_mounted)
    screen = app.screen
    assert isinstance(screen, ChatScreen)
    await until(pilot, lambda: screen.header.state == "connected")
    return screen


async def say(pilot: Pilot[None], screen: ChatScreen, text: str) -> None:
    """Type `text`, press Enter, and wait until the answer ended."""
    screen.composer.focus()
    screen.composer.insert(text)
    await pilot.press("enter")
    await until(pilot, lambda: len(screen.session.conversation.turns) >= 2)
    await until(pilot, lambda: not screen.answering)
    await pilot.pause()


async def buttons_view(pilot: Pilot[None], screen: ChatScreen) -> ButtonsView:
    await until(pilot, lambda: bool(screen.transcript.query(ButtonsView)))
    view = screen.transcript.query_one(ButtonsView)
    await until(pilot, lambda: not view.is_guarded)
    return view


def button(view: ButtonsView, label: str) -> MessageButtonWidget:
    return next(w for w in view.query(MessageButtonWidget) if w.button.label == label)


def booking(backend: FakeCuckooBackend) -> None:
    backend.scripts["Book my trip"] = reply("Shall I book it?", buttons=BOOKING_BUTTONS)
    backend.scripts["tap:confirm"] = reply("Booked: reference K42.")


# --- buttons ----------------------------------------------------------------------------------


async def test_buttons_render_in_their_rows_and_styles(tmp_path: Path) -> None:
    backend = FakeCuckooBackend()
    booking(backend)
    app = cuckoo_app(backend, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat(app, pilot)
        await say(pilot, screen, "Book my trip")
        view = await buttons_view(pilot, screen)
        rows = [[w.button.label for w in row.query(MessageButtonWidget)] for row in view.children]
        assert rows[:3] == [
            ["Book it", "Not now"],
            ["Cancel the trip"],
            ["Details", "Call the desk"],
        ]
        assert button(view, "Book it").variant == "primary"
        assert button(view, "Cancel the trip").variant == "error"
        assert button(view, "Cancel the trip").has_class("-style-danger")
        assert button(view, "Not now").variant == "default"
        text = screen_text(app)
        assert "Details ↗" in text and "Call the desk · tel:+420123456789" in text
        # Nothing took the focus from the composer.
        assert screen.focused is screen.composer


async def test_a_tap_reaches_the_hub_once_and_the_taken_button_disables_the_others(
    tmp_path: Path,
) -> None:
    backend = FakeCuckooBackend()
    booking(backend)
    app = cuckoo_app(backend, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat(app, pilot)
        await say(pilot, screen, "Book my trip")
        view = await buttons_view(pilot, screen)
        source = view.part.source_message_id
        chosen = button(view, "Book it")
        await pilot.click(chosen)
        await pilot.click(chosen)  # a second click while the tap goes: nothing more
        await until(pilot, lambda: view.taken == "confirm")
        await until(pilot, lambda: not screen.answering)
        await pilot.pause()
        assert backend.taps == [(source, "confirm")]
        assert chosen.has_class("-chosen") and "✓" in str(chosen.label)
        # Drawn whole: the button grew to its new label (the tick did not push the words out).
        await pilot.pause()
        assert "✓ Book it" in screen_text(app)
        assert chosen.content_region.width >= len("✓ Book it")
        others = [w for w in view.query(MessageButtonWidget) if w is not chosen]
        assert all(w.disabled for w in others if w.button.url is None)
        assert not any(w.disabled for w in others if w.button.url is not None)
        # The tap is the person's message (its label), and the agent's reply follows.
        turns = screen.session.conversation.turns
        assert [t.role for t in turns] == ["user", "assistant", "user", "assistant"]
        assert turns[2].text == "Book it" and turns[3].text == "Booked: reference K42."
        # Pressing another button now taps nothing.
        await pilot.click(button(view, "Not now"))
        await pilot.pause(0.1)
        assert backend.taps == [(source, "confirm")]


async def test_a_key_in_flight_taps_nothing(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(ButtonsView, "guard_seconds", 3.0)
    backend = FakeCuckooBackend()
    booking(backend)
    app = cuckoo_app(backend, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat(app, pilot)
        await say(pilot, screen, "Book my trip")
        await until(pilot, lambda: bool(screen.transcript.query(ButtonsView)))
        view = screen.transcript.query_one(ButtonsView)
        assert view.is_guarded
        first = button(view, "Book it")
        first.focus()
        await pilot.press("enter")
        await pilot.click(first)
        await pilot.pause(0.1)
        assert backend.taps == [] and view.taken is None and not view.is_busy


async def test_a_refused_tap_says_why_and_can_be_tried_again(tmp_path: Path) -> None:
    backend = FakeCuckooBackend(taps_by_session=False)
    backend.tap_failure = ConflictError(
        "This button was already taken.", status=409, code="already_taken", retryable=False
    )
    booking(backend)
    app = cuckoo_app(backend, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat(app, pilot)
        await say(pilot, screen, "Book my trip")
        view = await buttons_view(pilot, screen)
        await pilot.click(button(view, "Book it"))
        await until(pilot, lambda: view.has_class("-has-error"))
        assert "This button was already taken." in screen_text(app)
        assert view.taken is None and not button(view, "Not now").disabled
        backend.tap_failure = None
        await until(pilot, lambda: not view.is_guarded)
        await pilot.click(button(view, "Not now"))
        await until(pilot, lambda: view.taken == "later")
        source = view.part.source_message_id
        assert backend.taps == [(source, "confirm"), (source, "later")]
        assert button(view, "Not now").has_class("-chosen")


async def test_a_tap_made_elsewhere_shows_as_taken(tmp_path: Path) -> None:
    backend = FakeCuckooBackend()
    backend.scripts["Book my trip"] = [
        created(hub_message(auto_id(), "Shall I book it?", buttons=BOOKING_BUTTONS)),
        HOLD,
    ]
    app = cuckoo_app(backend, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat(app, pilot)
        screen.composer.insert("Book my trip")
        await pilot.press("enter")
        view = await buttons_view(pilot, screen)
        action = {"button_id": "cancel", "source_message_id": view.part.source_message_id}
        backend.push(
            created(hub_message(next_id(), "Cancel the trip", sender="user", action=action))
        )
        await until(pilot, lambda: button(view, "Cancel the trip").has_class("-chosen"))
        assert button(view, "Book it").disabled
        backend.push(END)


# --- URL buttons --------------------------------------------------------------------------------


async def test_url_buttons_open_only_on_a_gesture_and_tel_is_copied(
    tmp_path: Path, monkeypatch: Any
) -> None:
    opened: list[str] = []

    def fake_open(target: LinkTarget) -> bool:
        opened.append(target.url)
        return True

    monkeypatch.setattr(takeaways, "open_in_browser", fake_open)
    backend = FakeCuckooBackend()
    booking(backend)
    app = cuckoo_app(backend, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat(app, pilot)
        await say(pilot, screen, "Book my trip")
        view = await buttons_view(pilot, screen)
        await pilot.pause(0.2)
        assert opened == []  # shown, never opened by itself
        await pilot.click(button(view, "Details"))
        await until(pilot, lambda: opened == ["https://example.com/trip/42"])
        await pilot.click(button(view, "Call the desk"))
        await until(pilot, lambda: app.clipboard == "tel:+420123456789")
        await pilot.pause(0.1)
        assert opened == ["https://example.com/trip/42"]  # the number was not opened
        assert backend.taps == [] and view.taken is None  # links take no button


@pytest.mark.parametrize(
    ("url", "opens"),
    [
        ("http://example.com/plain", False),  # plain http to another site: the link rules
        ("upi://pay?pa=shop@bank", False),
        ("javascript:alert(1)", False),
    ],
)
async def test_other_url_buttons_are_not_opened(
    tmp_path: Path, monkeypatch: Any, url: str, opens: bool
) -> None:
    opened: list[str] = []
    monkeypatch.setattr(takeaways, "open_in_browser", lambda t: opened.append(t.url) or True)
    backend = FakeCuckooBackend()
    backend.scripts["Pay"] = reply("Here.", buttons=[[{"url": url, "label": "Go"}]])
    app = cuckoo_app(backend, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat(app, pilot)
        await say(pilot, screen, "Pay")
        view = await buttons_view(pilot, screen)
        await pilot.click(button(view, "Go"))
        await pilot.pause(0.2)
        assert bool(opened) is opens
        if url.startswith("upi:"):
            assert app.clipboard == url


# --- quick replies, reply quote ------------------------------------------------------------------


async def test_quick_replies_send_their_words(tmp_path: Path) -> None:
    backend = FakeCuckooBackend()
    backend.scripts["Hi"] = reply("How can I help?", quick_replies=["My order", "Opening hours"])
    backend.scripts["Opening hours"] = reply("9 to 5.", quick_replies=["Thanks"])
    app = cuckoo_app(backend, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat(app, pilot)
        await say(pilot, screen, "Hi")
        await until(pilot, lambda: bool(screen.transcript.query(QuickRepliesView)))
        first = screen.transcript.query_one(QuickRepliesView)
        await until(pilot, lambda: not first.is_guarded)
        chip = next(c for c in first.query(".quick-reply") if "Opening" in str(c.label))
        await pilot.click(chip)
        await until(pilot, lambda: backend.sent == ["Hi", "Opening hours"])
        await until(pilot, lambda: len(screen.session.conversation.turns) == 4)
        await until(pilot, lambda: len(screen.transcript.query(QuickRepliesView)) == 2)
        assert not first.display or first.has_class("-retired")  # the past's replies go
        newest = list(screen.transcript.query(QuickRepliesView))[-1]
        assert newest.is_open and not newest.has_class("-retired")


async def test_a_reply_quotes_the_message_it_answers(tmp_path: Path) -> None:
    backend = FakeCuckooBackend()
    quoted = {"id": "msg_00000001", "sender_kind": "user", "text_preview": "Where is my order?"}
    backend.scripts["Status"] = reply("It ships today.", reply_to=quoted)
    app = cuckoo_app(backend, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat(app, pilot)
        await say(pilot, screen, "Status")
        await until(pilot, lambda: bool(screen.transcript.query(ReplyQuoteView)))
        quote = screen.transcript.query_one(ReplyQuoteView)
        turn_view = next(v for v in screen.transcript.query(TurnView) if quote in v.children)
        kids = list(turn_view.children)
        assert kids.index(quote) < kids.index(turn_view.views[id(turn_view.turn.parts[1])])
        assert "↱ You: Where is my order?" in screen_text(app)


# --- activity, away, stopped --------------------------------------------------------------------


async def test_activity_shows_under_the_conversation_and_expires(tmp_path: Path) -> None:
    backend = FakeCuckooBackend()
    backend.scripts["Work"] = [HOLD]
    app = cuckoo_app(backend, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat(app, pilot)
        line = screen.query_one(ActivityLine)
        assert not line.display or line.has_class("-empty")
        screen.composer.insert("Work")
        await pilot.press("enter")
        await until(pilot, lambda: backend.live is not None)
        backend.push(activity("thinking"))
        await until(pilot, lambda: line.text == "thinking…")
        # The line shows once the next layout gives it its row (a frame later).
        await until(pilot, lambda: "thinking…" in screen_text(app))
        backend.push(activity("working", "Checking flights", seconds=2.5))
        await until(pilot, lambda: line.text == "working: Checking flights")
        await until(pilot, lambda: line.text == "", timeout=8)  # lapsed by itself
        assert line.has_class("-empty")
        backend.push(END)


async def test_an_unreachable_agent_is_away(tmp_path: Path) -> None:
    backend = FakeCuckooBackend()
    backend.scripts["Hello?"] = [agent_status("unreachable")]
    app = cuckoo_app(backend, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat(app, pilot)
        screen.composer.insert("Hello?")
        await pilot.press("enter")
        line = screen.query_one(ActivityLine)
        await until(pilot, lambda: "away" in line.text)
        assert "The agent is away; what you send is delivered when it is back." in screen_text(app)
        screen.session.conversation.agent_status["agt_fake"] = "connected"  # type: ignore[attr-defined]
        await until(pilot, lambda: line.text == "")


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        ({"stopped": True, "truncated": True}, "Stopped"),
        ({"truncated": True}, "The answer is incomplete"),
    ],
)
async def test_a_stopped_or_truncated_reply_says_so_once(
    tmp_path: Path, flags: dict[str, bool], said: str
) -> None:
    backend = FakeCuckooBackend()
    mid = auto_id("story")
    backend.scripts["Long story"] = [
        created(hub_message(mid, "", status="streaming"), "message.started"),
        delta(mid, "Once upon a time"),
        created(hub_message(mid, "Once upon a time", **flags), "message.completed"),
    ]
    app = cuckoo_app(backend, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat(app, pilot)
        await say(pilot, screen, "Long story")
        await pilot.pause(0.2)
        text = screen_text(app)
        assert text.count("Once upon a time") == 1
        assert text.count(said) == 1
        assert "Stopped." not in text


async def test_between_answers_the_conversation_is_followed_live(tmp_path: Path) -> None:
    """After an answer, what the hub pushes still shows: the agent's activity, a late reply,
    a tap made on another device."""
    backend = FakeCuckooBackend()
    booking(backend)
    app = cuckoo_app(backend, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat(app, pilot)
        await say(pilot, screen, "Book my trip")
        session = backend.sessions[-1]
        await until(pilot, lambda: session.following == 1)
        view = await buttons_view(pilot, screen)
        line = screen.query_one(ActivityLine)
        backend.push_outside(activity("thinking"))
        await until(pilot, lambda: line.text == "thinking…")
        action = {"button_id": "later", "source_message_id": view.part.source_message_id}
        backend.push_outside(
            created(hub_message(next_id(), "Not now", sender="user", action=action))
        )
        await until(pilot, lambda: button(view, "Not now").has_class("-chosen"))
        backend.push_outside(*reply("Fine, I will ask again tomorrow."))
        await until(pilot, lambda: "ask again tomorrow" in screen_text(app))
        assert session.following == 1  # one follower for the session
        backend.push_outside(END)


async def test_ctrl_o_reaches_the_buttons_and_the_quick_replies(tmp_path: Path) -> None:
    backend = FakeCuckooBackend()
    backend.scripts["Book my trip"] = reply(
        "Shall I book it?", buttons=BOOKING_BUTTONS, quick_replies=["Tell me more"]
    )
    app = cuckoo_app(backend, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat(app, pilot)
        await say(pilot, screen, "Book my trip")
        view = await buttons_view(pilot, screen)
        assert screen.focused is screen.composer  # nothing took the focus by itself
        await pilot.press("ctrl+o")
        assert screen.focused is button(view, "Book it")
        await pilot.press("ctrl+o")
        chips = screen.transcript.query_one(QuickRepliesView)
        assert screen.focused is chips.first_control()


# --- the thread list ----------------------------------------------------------------------------


async def test_the_open_conversation_is_the_highlighted_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not "+ New thread": the hub's conversation on screen is the highlighted row, also when
    it is not the newest."""
    backend = FakeCuckooBackend()
    booking(backend)
    listed = [HubThread(id="cnv_newer", title="Other Bot"), HubThread(id=CONVERSATION, title="Bot")]

    async def threads() -> list[HubThread]:
        return listed

    monkeypatch.setattr(backend, "threads", threads)
    app = cuckoo_app(backend, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat(app, pilot)
        await say(pilot, screen, "Book my trip")
        thread_list = screen.query_one(ThreadList)
        await until(pilot, lambda: thread_list.visible_thread_ids == ["cnv_newer", CONVERSATION])
        await until(pilot, lambda: thread_list.highlighted_thread_id == CONVERSATION)
        await pilot.pause(0.2)
        assert thread_list.highlighted_thread_id == CONVERSATION


def test_a_hubs_file_kinds_have_their_own_words_and_icons() -> None:
    from talkie_tui.chat.turns import AttachmentPart
    from talkie_tui.ui.widgets.attachment import OTHER_ICON, attachment_line

    def line(kind: str) -> tuple[str, str]:
        return attachment_line(AttachmentPart("med_1", "x.bin", "", 2048, kind))

    assert line("audio") == ("♪", "x.bin · audio · 2.0 kB")
    assert line("video") == ("▶", "x.bin · video · 2.0 kB")
    assert line("file") == (OTHER_ICON, "x.bin · file · 2.0 kB")
