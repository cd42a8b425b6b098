"""The parts Minara brings, inside the real `TalkieApp`: UI blocks, todos, questions,
interjections and attachments, driven by a fake backend whose conversation is the real
`MinaraConversation` fed real events."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from rich.cells import cell_len
from textual.message import Message
from textual.pilot import Pilot
from textual.widgets import Button, Checkbox, Input, Static

from talkie_tui.chat.export import conversation_markdown
from talkie_tui.chat.turns import AttachmentPart, QuestionPart
from talkie_tui.core.errors import TalkieError
from talkie_tui.logs import close_logging, log_folder, setup_logging
from talkie_tui.ui.app import TalkieApp
from talkie_tui.ui.chat import takeaways
from talkie_tui.ui.chat.screen import ChatScreen
from talkie_tui.ui.widgets.attachment import AttachmentView
from talkie_tui.ui.widgets.chart import ChartView
from talkie_tui.ui.widgets.columns import KvBlockView, TableBlockView
from talkie_tui.ui.widgets.interjection import InterjectionView
from talkie_tui.ui.widgets.question import QuestionView
from talkie_tui.ui.widgets.question_controls import SecretInput
from talkie_tui.ui.widgets.todos import TodoView
from talkie_tui.ui.widgets.ui_block import UiBlockView
from tests.ui.decision_keys import reach
from tests.ui.flows import screen_text, until
from tests.ui.minara_fake import (
    CHART_ONE,
    CHART_TWO,
    KV,
    TABLE,
    FakeMinaraBackend,
    answer_with,
    asking,
    event,
    minara_app,
)

MARGIN = 0.25  # time a key press may take to be handled on a busy machine
SECRET = "sk-live-TOPSECRET-4242-abcdef"


async def chat(app: TalkieApp, pilot: Pilot[None]) -> ChatScreen:
    """The chat screen, connected."""
    await until(pilot, lambda: isinstance(app.screen, ChatScreen) and app.screen.is_mounted)
    screen = app.screen
    assert isinstance(screen, ChatScreen)
    await until(pilot, lambda: screen.header.state == "connected")
    return screen


async def say(pilot: Pilot[None], screen: ChatScreen, text: str, *, wait: bool = True) -> None:
    """Type `text`, press Enter; with `wait`, until the answer ended."""
    screen.composer.focus()
    screen.composer.insert(text)
    await pilot.press("enter")
    await until(pilot, lambda: len(screen.session.conversation.turns) >= 2)
    if wait:
        await until(pilot, lambda: not screen.answering)
    await pilot.pause()


def lines(widget: TableBlockView | KvBlockView | ChartView) -> list[str]:
    """What the widget draws now, line by line."""
    return widget.render().plain.split("\n")


def plain(widget: Static) -> str:
    """The text a Static shows."""
    return str(widget.render())


def long_chart(series: int) -> dict[str, Any]:
    """A chart of 24 hourly points per series: wide enough to grow with the terminal."""
    return {
        "kind": "chart",
        "title": "Hourly prices",
        "series": [
            {
                "label": f"S{index}",
                "points": [
                    [f"{hour:02d}h", 100 + (hour * 7 + index * 13) % 40] for hour in range(24)
                ],
            }
            for index in range(series)
        ],
    }


async def question_view(pilot: Pilot[None], screen: ChatScreen) -> QuestionView:
    await until(pilot, lambda: bool(screen.transcript.query(QuestionView)))
    view = screen.transcript.query_one(QuestionView)
    await until(pilot, lambda: not view.is_guarded)
    return view


# --- UI blocks -------------------------------------------------------------------------------


@pytest.mark.parametrize("width", [60, 120])
async def test_every_block_kind_fits_and_aligns(tmp_path: Path, width: int) -> None:
    backend = FakeMinaraBackend()
    backend.scripts["blocks"] = answer_with(
        {"kind": "markdown", "text": "**Bold** and *calm*"},
        TABLE,
        KV,
        {"kind": "link", "label": "Docs", "url": "https://example.com/docs"},
        CHART_TWO,
        {"kind": "map", "fallback_text": "A map of [red]Prague[/red]"},
    )
    app = minara_app(backend, tmp_path)
    async with app.run_test(size=(width, 70)) as pilot:
        screen = await chat(app, pilot)
        await say(pilot, screen, "blocks")
        kinds = [view.part.kind for view in screen.transcript.query(UiBlockView)]
        assert kinds == ["markdown", "table", "kv", "link", "chart", "map"]

        table = screen.transcript.query_one(TableBlockView)
        room = table.content_region.width
        drawn = lines(table)
        assert all(cell_len(line) <= room for line in drawn)
        assert drawn[0].split()[:2] == ["Asset", "Price"]
        assert set(drawn[1]) <= {"─", " "}
        # numbers right-aligned: every price ends where the "Price" title ends
        price_end = drawn[0].index("Price") + len("Price")
        for row, price in zip(drawn[2:], ("68900.5", "3421", "171.25", "0.162"), strict=True):
            assert row.index(price) + len(price) == price_end
        long_note = drawn[2]
        if width == 60:
            assert long_note.rstrip().endswith("…")  # cut, not wrapped
        else:
            assert "every exchange" in long_note or long_note.rstrip().endswith("…")
        assert len(drawn) == 6  # header, rule, four rows: nothing wrapped

        kv = screen.transcript.query_one(KvBlockView)
        kv_lines = lines(kv)
        values = ("Salary", "12,480", "2026")
        starts = {line.index(value) for line, value in zip(kv_lines, values, strict=True)}
        assert len(starts) == 1  # values in one column
        assert all(cell_len(line) <= kv.content_region.width for line in kv_lines)

        chart = screen.transcript.query_one(ChartView)
        chart_lines = lines(chart)
        assert chart_lines[0] == "Prices this week"
        assert all(cell_len(line) <= chart.content_region.width for line in chart_lines)
        assert "61.2k–68.9k" in chart_lines[1] and "3.25k–3.51k" in chart_lines[2]
        assert chart_lines[3].split() == ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]

        assert "[bold]DOGE" in drawn[5]  # markup in server text is shown, not applied
        assert "\x1b" not in "".join(drawn) and "Markup stays" in drawn[5]  # escapes cleaned
        fallback = screen.transcript.query_one(".ui-block--fallback", Static)
        assert plain(fallback) == "A map of [red]Prague[/red]"
        text = screen_text(app)
        assert "Docs" in text and "https://example.com/docs" in text


async def test_a_link_block_opens_only_on_a_gesture(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[str] = []
    monkeypatch.setattr(takeaways, "open_in_browser", lambda target: opened.append(target.url))
    backend = FakeMinaraBackend()
    backend.scripts["links"] = answer_with(
        {"kind": "link", "label": "Docs", "url": "https://example.com/docs"},
        {"kind": "link", "label": "Run me", "url": "javascript:alert(1)"},
    )
    app = minara_app(backend, tmp_path)
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await chat(app, pilot)
        await say(pilot, screen, "links")
        assert opened == []  # shown, not opened
        docs, evil = (view.children[0] for view in screen.transcript.query(UiBlockView))
        docs.focus()
        await pilot.press("enter")
        evil.focus()
        await pilot.press("enter")
        await pilot.pause()
        assert opened == ["https://example.com/docs"]  # javascript: is refused


@pytest.mark.parametrize("chart", [CHART_ONE, CHART_TWO], ids=["one series", "two series"])
@pytest.mark.parametrize("width", [60, 120])
async def test_a_chart_fits_with_its_title_range_and_labels(
    tmp_path: Path, chart: dict[str, Any], width: int
) -> None:
    backend = FakeMinaraBackend()
    backend.scripts["chart"] = answer_with(chart)
    app = minara_app(backend, tmp_path)
    async with app.run_test(size=(width, 40)) as pilot:
        screen = await chat(app, pilot)
        await say(pilot, screen, "chart")
        view = screen.transcript.query_one(ChartView)
        drawn = lines(view)
        assert drawn[0] == chart["title"]
        assert all(cell_len(line) <= view.content_region.width for line in drawn)
        text = "\n".join(drawn)
        assert "Mon" in text and "Sat" in text
        assert "68.9k" in text and "61.2k" in text  # the y range
        if len(chart["series"]) == 1:
            assert "█" in text and "┤" in text and "└" in text and "■ BTC" in text
            assert len(drawn) == 1 + 8 + 1 + 1 + 1  # title, bars, axis, x labels, legend
        else:
            assert drawn[1].startswith("BTC") and drawn[2].startswith("ETH")
            assert "3.25k–3.51k" in drawn[2]


@pytest.mark.parametrize("series", [1, 2])
async def test_a_chart_is_redrawn_on_resize(tmp_path: Path, series: int) -> None:
    chart = long_chart(series)
    backend = FakeMinaraBackend()
    backend.scripts["chart"] = answer_with(chart)
    app = minara_app(backend, tmp_path)
    async with app.run_test(size=(60, 40)) as pilot:
        screen = await chat(app, pilot)
        await say(pilot, screen, "chart")
        view = screen.transcript.query_one(ChartView)
        narrow = lines(view)
        assert all(cell_len(line) <= view.content_region.width for line in narrow)
        assert "00h" in narrow[-2 if series == 1 else -1]
        await pilot.resize_terminal(140, 40)
        await pilot.pause(0.2)
        wide = lines(view)
        assert len(wide) == len(narrow)  # the same height, drawn wider
        assert max(map(cell_len, wide)) > max(map(cell_len, narrow))
        assert all(cell_len(line) <= view.content_region.width for line in wide)


# --- todos, interjections, attachments ------------------------------------------------------


async def test_todos_update_in_place(tmp_path: Path) -> None:
    backend = FakeMinaraBackend()
    items = [{"text": "Look up prices", "done": False}, {"text": "Compare fees", "done": False}]
    backend.scripts["todos"] = [event("start", session_id="s1"), event("todos", items=items)]
    app = minara_app(backend, tmp_path)
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await chat(app, pilot)
        await say(pilot, screen, "todos", wait=False)
        await until(pilot, lambda: bool(screen.transcript.query(TodoView)))
        view = screen.transcript.query_one(TodoView)
        assert "☐ Look up prices" in screen_text(app)
        backend.push(event("text_delta", text="Working."))
        backend.push(event("todos", items=[{**items[0], "done": True}, items[1]]))
        await until(pilot, lambda: "☑ Look up prices" in screen_text(app))
        backend.push(event("todos", items=[{**item, "done": True} for item in items]))
        backend.push(event("done"))
        await until(pilot, lambda: not screen.answering)
        await pilot.pause()
        assert screen.transcript.query_one(TodoView) is view  # the same widget, redrawn
        assert "☑ Compare fees" in screen_text(app) and "2 of 2 done" in screen_text(app)
        assert view.has_class("-all-done")


async def test_an_interjection_and_attachments_are_shown_as_the_persons(tmp_path: Path) -> None:
    backend = FakeMinaraBackend()
    backend.attachments["look"] = [
        AttachmentPart("k1", "chart.png", "image/png", 48_213, "image", "/v1/files/k1"),
        AttachmentPart("k2", "[b]report[/b].pdf", "application/pdf", 1_200_000, "pdf"),
    ]
    backend.scripts["look"] = [
        event("start", session_id="s1"),
        event("text_delta", text="I received chart.png, 48 kB"),
        event("user_interjection", message="also the [i]PDF[/i] please", ts_ms=1),
        event("text_delta", text="Both read."),
        event("done"),
    ]
    app = minara_app(backend, tmp_path)
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await chat(app, pilot)
        await say(pilot, screen, "look")
        files = list(screen.transcript.query(AttachmentView))
        assert [f.render().plain for f in files] == [
            "▣ chart.png · image · 48.2 kB",
            "▤ [b]report[/b].pdf · PDF · 1.2 MB",
        ]
        (interjection,) = screen.transcript.query(InterjectionView)
        assert interjection.parent is not None
        assert "-assistant" in interjection.parent.classes  # inside the agent's turn
        text = screen_text(app)
        assert "You, while the agent worked" in text and "also the [i]PDF[/i] please" in text


# --- questions -------------------------------------------------------------------------------


async def test_select_one_answers_with_its_label(tmp_path: Path) -> None:
    backend = FakeMinaraBackend()
    backend.scripts["ask"] = asking("select")
    app = minara_app(backend, tmp_path)
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await chat(app, pilot)
        await say(pilot, screen, "ask", wait=False)
        view = await question_view(pilot, screen)
        assert screen.header.pending_actions == 1  # the open question is counted
        assert app.focused is screen.composer  # nothing takes the focus by itself
        assert "The agent asks" in screen_text(app)  # not its inner ids (planner · swap)
        assert "planner" not in screen_text(app)
        savings = next(b for b in view.query(Button) if b.label.plain == "Savings")
        await pilot.click(savings)
        await until(pilot, lambda: not screen.answering)
        await pilot.pause()
        assert backend.answers == [("q_1", [["Savings"]])]
        assert not view.is_open and "Answered “Savings” · Which account?" in screen_text(app)
        assert "Answer: Savings" in screen_text(app)
        assert screen.header.pending_actions == 0
        assert app.focused is screen.composer  # the closed question gave the focus back


async def test_select_several_sends_the_checked_labels(tmp_path: Path) -> None:
    backend = FakeMinaraBackend()
    backend.scripts["ask"] = asking("multi")
    app = minara_app(backend, tmp_path)
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await chat(app, pilot)
        await say(pilot, screen, "ask", wait=False)
        view = await question_view(pilot, screen)
        send = view.query_one(".question--send", Button)
        await pilot.click(send)  # nothing checked yet
        await pilot.pause()
        assert backend.answers == []
        assert "Choose at least one answer" in screen_text(app)
        for box in view.query(Checkbox):
            if box.label.plain in ("Salary", "Travel"):
                box.value = True
        # A button ignores a click during its press effect (0.2 s): a fast machine gets here sooner.
        await until(pilot, lambda: not send.has_class("-active"))
        await pilot.click(send)
        await until(pilot, lambda: not screen.answering)
        assert backend.answers == [("q_1", [["Salary", "Travel"]])]
        assert "Answer: Salary, Travel" in screen_text(app)


async def test_confirm_asks_twice_and_a_refusal_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A guard long enough that the click meant to land inside it does, on a busy machine too.
    monkeypatch.setattr(QuestionView, "guard_seconds", 3.0)
    backend = FakeMinaraBackend(resolve_on_answer=False)
    backend.scripts["ask"] = asking("confirm")
    app = minara_app(backend, tmp_path)
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await chat(app, pilot)
        await say(pilot, screen, "ask", wait=False)
        view = await question_view(pilot, screen)
        confirm, cancel = view.query(Button).results()
        assert (confirm.label.plain, cancel.label.plain) == ("Confirm", "Cancel")
        await pilot.click(confirm)
        await pilot.pause()
        assert backend.answers == [] and view.asking_again
        assert "Press “Confirm” again to go ahead." in screen_text(app)
        assert view.guard_left > 1.0
        await pilot.click(confirm)  # inside the re-armed guard: ignored
        await pilot.pause()
        assert backend.answers == [] and view.is_guarded
        await until(pilot, lambda: not view.is_guarded)
        await pilot.click(confirm)
        await until(pilot, lambda: bool(backend.answers))
        assert backend.answers == [("q_1", [["Confirm"]])]

        backend.push(event("done"))
        await until(pilot, lambda: not screen.answering)
        backend.scripts["again"] = asking("confirm", question_id="q_2")
        await say(pilot, screen, "again", wait=False)
        await until(pilot, lambda: len(screen.transcript.query(QuestionView)) == 2)
        second = list(screen.transcript.query(QuestionView))[-1]
        await until(pilot, lambda: not second.is_guarded)
        await pilot.click(list(second.query(Button))[1])  # Cancel: no second step
        await until(pilot, lambda: len(backend.answers) == 2)
        assert backend.answers[1] == ("q_2", [["Cancel"]])


async def test_an_enter_in_flight_does_not_answer_a_confirm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A guard long enough that the focus, put in it right after the question is shown, arrives
    # inside it on a busy machine too (CI once took longer than the default 0.7 s to get there).
    monkeypatch.setattr(QuestionView, "guard_seconds", 3.0)
    backend = FakeMinaraBackend()
    backend.scripts["ask"] = asking("confirm")
    app = minara_app(backend, tmp_path)
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await chat(app, pilot)
        await say(pilot, screen, "ask", wait=False)
        await until(pilot, lambda: bool(screen.transcript.query(QuestionView)))
        view = screen.transcript.query_one(QuestionView)
        await until(pilot, lambda: view.first_control() is not None)
        control = view.first_control()
        assert control is not None
        control.focus()  # even focused, keys already on their way must not answer
        presses = 0
        while view.guard_left > MARGIN:  # Enter on the focused Confirm, inside the guard
            await pilot.press("enter")
            presses += 1
        await pilot.pause()
        assert presses >= 1
        assert backend.answers == [] and not view.asking_again and view.is_open


async def test_a_question_never_takes_the_focus_from_a_person_typing(tmp_path: Path) -> None:
    backend = FakeMinaraBackend()
    backend.scripts["ask"] = [event("start", session_id="s1"), event("text_delta", text="Hm.")]
    app = minara_app(backend, tmp_path)
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await chat(app, pilot)
        await say(pilot, screen, "ask", wait=False)
        screen.composer.insert("half a thought")
        backend.push(asking("confirm")[-1])
        await until(pilot, lambda: bool(screen.transcript.query(QuestionView)))
        await pilot.pause(0.2)
        assert app.focused is screen.composer
        await pilot.press("y", "enter")
        assert backend.answers == []


async def test_input_sends_the_typed_text_on_enter(tmp_path: Path) -> None:
    backend = FakeMinaraBackend()
    backend.scripts["ask"] = asking("input")
    app = minara_app(backend, tmp_path)
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await chat(app, pilot)
        await say(pilot, screen, "ask", wait=False)
        view = await question_view(pilot, screen)
        box = view.query_one(".question--input", Input)
        await reach(pilot, screen, view)
        assert app.focused is box
        await pilot.press("enter")  # empty: not sent
        await pilot.press(*"Rent for July")
        await pilot.press("enter")
        await until(pilot, lambda: not screen.answering)
        assert backend.answers == [("q_1", [["Rent for July"]])]
        assert "Answer: Rent for July" in screen_text(app)


async def test_a_secret_reaches_provide_secret_and_nothing_else(tmp_path: Path) -> None:
    log = setup_logging(True)
    assert log is not None and log.is_relative_to(log_folder())
    seen: list[str] = []

    def hook(message: Message) -> None:
        seen.append(repr(message))

    backend = FakeMinaraBackend()
    backend.scripts["ask"] = asking("secret")
    app = minara_app(backend, tmp_path)
    try:
        async with app.run_test(size=(100, 40), message_hook=hook) as pilot:
            screen = await chat(app, pilot)
            await say(pilot, screen, "ask", wait=False)
            view = await question_view(pilot, screen)
            box = view.query_one(SecretInput)
            assert box.password
            await reach(pilot, screen, view)
            await pilot.press(*SECRET)
            assert SECRET not in screen_text(app)  # drawn as dots
            await pilot.press("enter")
            assert box.value == ""  # cleared at once
            await until(pilot, lambda: not screen.answering)
            await pilot.pause()
            assert backend.secrets == [("q_1", SECRET)]
            assert "Answer: provided" in screen_text(app)
            conversation = screen.session.conversation
            exported = conversation_markdown(conversation, "Minara")
            shown = screen_text(app)
    finally:
        close_logging()
    assert SECRET not in exported and SECRET not in shown
    assert not any(SECRET in text for text in seen)
    assert seen  # the hook saw the app's messages
    for part in conversation.questions.values():
        assert SECRET not in repr(part)
    for path in log_folder().glob("*.log"):
        assert SECRET not in path.read_text(encoding="utf-8")


async def test_a_secret_can_be_declined(tmp_path: Path) -> None:
    backend = FakeMinaraBackend()
    backend.scripts["ask"] = asking("secret")
    app = minara_app(backend, tmp_path)
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await chat(app, pilot)
        await say(pilot, screen, "ask", wait=False)
        view = await question_view(pilot, screen)
        await pilot.click(view.query_one(".question--decline", Button))
        await until(pilot, lambda: not screen.answering)
        assert backend.secrets == [("q_1", None)]
        assert "Answer: declined" in screen_text(app)


async def test_not_pending_is_answered_elsewhere(tmp_path: Path) -> None:
    backend = FakeMinaraBackend(outcome="not_pending")
    backend.scripts["ask"] = asking("select")
    app = minara_app(backend, tmp_path)
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await chat(app, pilot)
        await say(pilot, screen, "ask", wait=False)
        view = await question_view(pilot, screen)
        await pilot.click(next(b for b in view.query(Button) if b.label.plain == "Salary"))
        await until(pilot, lambda: not view.is_open)
        await pilot.pause()
        part = screen.session.conversation.questions["q_1"]
        assert part.outcome == "elsewhere"
        assert "Answered elsewhere · Which account?" in screen_text(app)
        assert screen.header.pending_actions == 0


async def test_not_pending_after_the_expiry_is_timed_out(tmp_path: Path) -> None:
    backend = FakeMinaraBackend(outcome="not_pending")
    soon = (datetime.now(UTC) + timedelta(seconds=30)).isoformat()
    backend.scripts["ask"] = asking("select", expires_at=soon)
    app = minara_app(backend, tmp_path)
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await chat(app, pilot)
        await say(pilot, screen, "ask", wait=False)
        view = await question_view(pilot, screen)
        assert "expires in" in screen_text(app)
        screen.questions._clock = lambda: datetime.now(UTC).timestamp() + 60  # the answer is late
        await pilot.click(next(b for b in view.query(Button) if b.label.plain == "Salary"))
        await until(pilot, lambda: not view.is_open)
        await pilot.pause()
        assert screen.session.conversation.questions["q_1"].outcome == "timeout"
        assert "Timed out · Which account?" in screen_text(app)


async def test_a_question_the_server_resolves_closes(tmp_path: Path) -> None:
    backend = FakeMinaraBackend()
    backend.scripts["ask"] = asking("input")
    app = minara_app(backend, tmp_path)
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await chat(app, pilot)
        await say(pilot, screen, "ask", wait=False)
        view = await question_view(pilot, screen)
        await reach(pilot, screen, view)
        assert app.focused is view.query_one(Input)
        backend.push(event("pending_question_resolved", id="q_1", outcome="cancelled"))
        await until(pilot, lambda: not view.is_open)
        await pilot.pause()
        assert "Cancelled · What should the transfer say?" in screen_text(app)
        assert not view.query_one(".question--body").display or view.has_class("-closed")
        assert app.focused is screen.composer
        assert backend.answers == []
        backend.push(event("done"))
        await until(pilot, lambda: not screen.answering)


async def test_a_failed_answer_says_why_and_can_be_sent_again(tmp_path: Path) -> None:
    backend = FakeMinaraBackend(failure=TalkieError("The gateway is down.", retryable=True))
    backend.scripts["ask"] = asking("select")
    app = minara_app(backend, tmp_path)
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await chat(app, pilot)
        await say(pilot, screen, "ask", wait=False)
        view = await question_view(pilot, screen)
        salary = next(b for b in view.query(Button) if b.label.plain == "Salary")
        await pilot.click(salary)
        await until(pilot, lambda: view.has_class("-has-error"))
        said = plain(view.query_one(".question--message", Static))
        assert "The gateway is down." in said and "Trying again may help." in said
        assert view.is_open and not view.is_busy
        backend.failure = None
        await until(pilot, lambda: not view.is_guarded)
        await pilot.click(salary)
        await until(pilot, lambda: not view.is_open)
        assert [answer for _id, answer in backend.answers] == [[["Salary"]], [["Salary"]]]


async def test_hostile_question_text_is_shown_literally(tmp_path: Path) -> None:
    backend = FakeMinaraBackend()
    hostile = asking("select")
    data = hostile[-1]["data"]
    data["asked_by"] = {"agent": "[bold red]root[/]"}
    data["questions"][0]["text"] = "Pick \x1b]0;pwned\x07one [link=x]now[/link]"
    data["questions"][0]["options"][0]["label"] = "[reverse]Salary[/reverse]"
    backend.scripts["ask"] = hostile
    app = minara_app(backend, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat(app, pilot)
        await say(pilot, screen, "ask", wait=False)
        view = await question_view(pilot, screen)
        text = screen_text(app)
        assert "The agent asks" in text and "root" not in text  # provenance is not shown
        assert "Pick one [link=x]now[/link]" in text and "pwned" not in text
        assert "[reverse]Salary[/reverse]" in text
        await pilot.click(next(b for b in view.query(Button) if "Salary" in b.label.plain))
        await until(pilot, lambda: bool(backend.answers))
        assert backend.answers == [("q_1", [["[reverse]Salary[/reverse]"]])]


def test_the_fake_backend_is_an_answers_backend() -> None:
    from talkie_tui.backends.base import Answers

    assert isinstance(FakeMinaraBackend(), Answers)
    assert asyncio.iscoroutinefunction(FakeMinaraBackend.answer)
    assert isinstance(QuestionPart("q", "input", []), QuestionPart)
