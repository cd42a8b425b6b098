"""Turns end to end: the real app on the reference gateway — steering a running turn, a late
interjection sent again, Esc, a dropped socket, a session opened mid-turn, the server's search,
UI blocks, and a history attachment downloaded."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Button

from talkie_tui.chat.turns import AttachmentPart, InterjectionPart
from talkie_tui.ui.widgets.attachment import AttachmentView
from talkie_tui.ui.widgets.chart import ChartView
from talkie_tui.ui.widgets.columns import TableBlockView
from talkie_tui.ui.widgets.header import TalkieHeader
from talkie_tui.ui.widgets.interjection import InterjectionView
from talkie_tui.ui.widgets.question import QuestionView
from talkie_tui.ui.widgets.thread_list import ThreadList
from talkie_tui.ui.widgets.ui_block import UiBlockView
from tests.ui.decision_keys import reach
from tests.ui.minara_e2e import (
    SIZE,
    WAIT,
    answer_text,
    chat,
    gateway_app,
    gateway_http,
    last_answer,
    notices,
    open_question,
    say,
    screen_text,
    session_done,
    until,
)

pytestmark = pytest.mark.slow

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8  # 2 kB


def user_texts(screen: object) -> list[str]:
    """The person's messages in the conversation on screen, in order."""
    turns = screen.session.conversation.turns  # type: ignore[attr-defined]
    return [turn.text for turn in turns if turn.role == "user"]


async def test_a_message_sent_while_the_agent_works_goes_into_the_turn(
    gateway_url: str, tmp_path: Path
) -> None:
    app = await gateway_app(gateway_url, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await chat(app, pilot)
        await say(pilot, screen, "minara-test:slow", wait=False)
        await until(pilot, lambda: "part 1 " in answer_text(screen), WAIT)
        screen.composer.insert("also check ETH")
        await pilot.press("enter")  # into the running turn
        await until(pilot, lambda: bool(screen.transcript.query(InterjectionView)), WAIT)
        turn = last_answer(screen)
        assert turn is not None
        assert [p.text for p in turn.parts if isinstance(p, InterjectionPart)] == ["also check ETH"]
        view = screen.transcript.query_one(InterjectionView)
        assert view.parent is screen.transcript.turn_view(turn)  # inside the turn, not after it
        await until(pilot, lambda: not screen.answering, WAIT)
        assert "part 20 " in answer_text(screen)
        assert user_texts(screen) == ["minara-test:slow"]  # not sent again as a message
        assert "You, while the agent worked" in screen_text(app)


async def test_a_late_interjection_is_sent_again_once(gateway_url: str, tmp_path: Path) -> None:
    app = await gateway_app(gateway_url, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await chat(app, pilot)
        await say(pilot, screen, "minara-test:slow", wait=False)
        # The gateway takes interjections in for the first two thirds of the turn only.
        await until(pilot, lambda: "part 16 " in answer_text(screen), WAIT)
        await say(pilot, screen, "minara-test:echo too late", wait=False)
        await until(pilot, lambda: len(user_texts(screen)) == 2, WAIT)
        await until(pilot, lambda: not screen.answering and not screen.steering.waiting, WAIT)
        assert user_texts(screen) == ["minara-test:slow", "minara-test:echo too late"]
        assert answer_text(screen) == "too late"
        slow = screen.session.conversation.turns[1]
        assert not any(isinstance(p, InterjectionPart) for p in slow.parts)
        await pilot.pause(0.3)  # nothing else follows
        assert len(user_texts(screen)) == 2


async def test_esc_stops_an_endless_turn_and_keeps_its_text(
    gateway_url: str, tmp_path: Path
) -> None:
    app = await gateway_app(gateway_url, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await chat(app, pilot)
        await say(pilot, screen, "minara-test:endless", wait=False)
        await until(pilot, lambda: "tick 2 " in answer_text(screen), WAIT)
        await pilot.press("escape")
        await until(pilot, lambda: not screen.answering, WAIT)
        turn = last_answer(screen)
        assert turn is not None and turn.state == "cancelled"
        assert answer_text(screen).startswith("tick 1 tick 2 ")
        assert "Stopped." in screen_text(app)
        assert screen.header.state == "connected"


async def test_a_dropped_socket_reconnects_and_the_turn_is_complete(
    gateway_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    states: list[str] = []
    shown = TalkieHeader.watch_state

    def recording(header: TalkieHeader, state: str) -> None:
        states.append(state)  # every state the header showed, however briefly
        shown(header, state)

    monkeypatch.setattr(TalkieHeader, "watch_state", recording)
    app = await gateway_app(gateway_url, tmp_path)
    async with app.run_test(size=SIZE) as pilot, gateway_http(gateway_url) as http:
        screen = await chat(app, pilot)
        await say(pilot, screen, "minara-test:count 40 40", wait=False)
        await until(pilot, lambda: "3 " in answer_text(screen), WAIT)
        dropped = (await http.post("/v1/_test/drop_sockets")).json()
        assert dropped["dropped"] >= 1
        await until(pilot, lambda: not screen.answering, WAIT)
        assert "reconnecting" in states[states.index("streaming") :]
        assert answer_text(screen) == "".join(f"{n} " for n in range(1, 41))  # each once
        turn = last_answer(screen)
        assert turn is not None and turn.state == "done"
        assert screen.header.state == "connected"


async def test_a_session_opened_mid_turn_is_followed_live(gateway_url: str, tmp_path: Path) -> None:
    app = await gateway_app(gateway_url, tmp_path)
    async with app.run_test(size=SIZE) as pilot, gateway_http(gateway_url) as http:
        screen = await chat(app, pilot)
        # Another client starts a turn that waits for an answer.
        started = await http.post(
            "/v1/chat/stream", json={"message": "minara-test:question select"}
        )
        session_id = started.json()["session_id"]
        screen.refresh_threads()
        thread_list = screen.query_one(ThreadList)
        await until(pilot, lambda: session_id in thread_list.visible_thread_ids, WAIT)
        thread_list.options.focus()
        thread_list.highlight_thread(session_id)
        await pilot.press("enter")  # opened from the list
        view = await open_question(pilot, screen)
        assert len(screen.transcript.query(QuestionView)) == 1  # its question, shown once
        assert screen.session.thread_id == session_id and screen.answering
        assert screen.header.state == "streaming"
        # It waits: the focus stays where the person was until they reach it with Ctrl+O.
        assert app.focused is not None and app.focused not in view.query("*")
        await reach(pilot, screen, view)
        assert answer_text(screen) == "Asking."
        savings = next(b for b in view.query(Button) if b.label.plain == "Savings")
        await pilot.click(savings)
        await until(pilot, lambda: not screen.answering, WAIT)
        assert answer_text(screen) == "Asking.Answer: Savings"  # what followed, live
        assert not view.is_open and screen.header.state == "connected"
        assert len(screen.transcript.query(QuestionView)) == 1
        stored = await session_done(http, session_id, 2)
        assert stored["messages"][-1]["content"] == "Asking.Answer: Savings"


async def test_esc_stops_a_turn_followed_after_opening_its_session(
    gateway_url: str, tmp_path: Path
) -> None:
    app = await gateway_app(gateway_url, tmp_path)
    async with app.run_test(size=SIZE) as pilot, gateway_http(gateway_url) as http:
        screen = await chat(app, pilot)
        started = await http.post("/v1/chat/stream", json={"message": "minara-test:endless"})
        session_id = started.json()["session_id"]
        screen.open_thread(session_id)
        await until(pilot, lambda: "tick 2 " in answer_text(screen), WAIT)
        assert screen.answering and screen.header.state == "streaming"
        await pilot.press("escape")
        await until(pilot, lambda: not screen.answering, WAIT)
        turn = last_answer(screen)
        assert turn is not None and turn.state == "cancelled"
        assert answer_text(screen).startswith("tick 1 tick 2 ")
        stored = await session_done(http, session_id, 2)
        assert stored["messages"][-1]["metadata"].get("interrupted") is True


async def test_the_server_search_opens_the_session_at_the_message_found(
    gateway_url: str, tmp_path: Path
) -> None:
    app = await gateway_app(gateway_url, tmp_path)
    async with gateway_http(gateway_url) as http:
        first = await http.post("/v1/chat/stream", json={"message": "minara-test:echo alpha"})
        session_id = first.json()["session_id"]
        await session_done(http, session_id, 2)
        body = {"message": "minara-test:echo the quokka smiles", "session_id": session_id}
        await http.post("/v1/chat/stream", json=body)
        await session_done(http, session_id, 4)
        other = await http.post("/v1/chat/stream", json={"message": "minara-test:echo beta"})
        await session_done(http, other.json()["session_id"], 2)
    async with app.run_test(size=SIZE) as pilot:
        screen = await chat(app, pilot)
        thread_list = screen.query_one(ThreadList)
        await until(pilot, lambda: len(thread_list.visible_thread_ids) == 2, WAIT)
        thread_list.filter_input.focus()
        await pilot.press(*"quokka")
        await until(pilot, lambda: bool(thread_list.hits), WAIT)  # asked once the typing paused
        assert thread_list.visible_thread_ids == []  # no title says it
        best = thread_list.hits[0]
        assert best.thread_id == session_id and "«quokka»" in best.snippet
        await pilot.press("enter")
        await until(pilot, lambda: screen.session.thread_id == session_id, WAIT)
        await until(pilot, lambda: bool(screen.transcript.query(".found")), WAIT)
        found = screen.transcript.query_one(".found")
        assert getattr(found, "turn").id == best.message_id  # noqa: B009
        assert "quokka" in getattr(found, "turn").text  # noqa: B009
        assert len(screen.session.conversation.turns) == 4


async def test_blocks_render_a_table_and_a_chart(gateway_url: str, tmp_path: Path) -> None:
    app = await gateway_app(gateway_url, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await chat(app, pilot)
        await say(pilot, screen, "minara-test:blocks")
        kinds = [view.part.kind for view in screen.transcript.query(UiBlockView)]
        assert kinds[:5] == ["markdown", "table", "kv", "link", "chart"]
        table = screen.transcript.query_one(TableBlockView).render().plain.split("\n")
        assert table[0].split() == ["Asset", "Amount", "Value"]
        assert len(table) == 6 and table[2].split()[0] == "BTC" and "USDC" in table[5]
        chart = screen.transcript.query_one(ChartView).render().plain
        assert "Prices this week" in chart and "BTC" in chart and "ETH" in chart
        assert "Mon" in chart
        text = screen_text(app)
        assert "A map of Prague." in text  # an unknown kind's fallback text
        assert "hologram" not in text


async def test_a_history_attachment_downloads_on_enter(gateway_url: str, tmp_path: Path) -> None:
    chart = tmp_path / "chart.png"
    chart.write_bytes(PNG)
    app = await gateway_app(gateway_url, tmp_path)
    downloads = tmp_path / "downloads"
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = await chat(app, pilot)
        screen.composer.insert(f"/attach {chart}")
        await pilot.press("enter")
        await until(pilot, lambda: screen.attachments.items != [], WAIT)
        await until(pilot, lambda: screen.attachments.not_ready() is None, WAIT)
        await say(pilot, screen, "minara-test:echo here")
        assert answer_text(screen).startswith("I received chart.png, 2 kB")
        thread_id = screen.session.thread_id
        assert thread_id is not None
        screen.action_new_thread()
        await until(pilot, lambda: not screen.transcript.query(AttachmentView), WAIT)
        screen.open_thread(thread_id)  # from history
        await until(pilot, lambda: bool(screen.transcript.query(AttachmentView)), WAIT)
        await until(pilot, lambda: not screen.answering, WAIT)  # the thread is open
        view = screen.transcript.query_one(AttachmentView)
        assert view.part.url and view.can_focus
        view.focus()
        await pilot.press("enter")
        saved = downloads / "chart.png"
        await until(pilot, lambda: saved.exists() and saved.read_bytes() == PNG, WAIT)
        await until(pilot, lambda: "Saved" in notices(app), WAIT)
        await pilot.click(view)  # a click is the same gesture
        await until(pilot, lambda: (downloads / "chart (2).png").exists(), WAIT)

        # A URL of another origin is not fetched with the token (nor at all).
        view.part = AttachmentPart(
            "k", "elsewhere.png", "image/png", 10, "image", "https://elsewhere.example/f.png"
        )
        await pilot.press("enter")
        await until(pilot, lambda: "not on this server" in notices(app), WAIT)
        assert sorted(p.name for p in downloads.iterdir()) == ["chart (2).png", "chart.png"]
