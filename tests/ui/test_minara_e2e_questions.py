"""The agent's questions end to end: the real app on the reference gateway, each kind answered
through its widget, a secret that reaches the gateway and nothing else, a question another
client answered, and Ctrl+O to the question that waits."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from textual.message import Message
from textual.widgets import Button, Checkbox, Input

from talkie_tui.logs import close_logging, log_folder, setup_logging
from talkie_tui.ui.widgets.question import QuestionView
from talkie_tui.ui.widgets.question_controls import SecretInput
from tests.ui.decision_keys import reach
from tests.ui.minara_e2e import (
    SIZE,
    WAIT,
    answer_text,
    ask,
    chat,
    gateway_app,
    gateway_http,
    notices,
    screen_text,
    until,
)

pytestmark = pytest.mark.slow

SECRET = "sk-e2e-NEVER-SHOWN-7fd3a9"
SECRET_NAME = "test_api_key"  # the credential the gateway's test mode asks for


def button(view: QuestionView, label: str) -> Button:
    """The button of `view` labelled `label`."""
    return next(b for b in view.query(Button) if b.label.plain == label)


async def test_select_answers_with_the_pressed_option(gateway_url: str, tmp_path: Path) -> None:
    app = await gateway_app(gateway_url, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await chat(app, pilot)
        view = await ask(pilot, screen, "select")
        assert app.focused is screen.composer  # nothing takes the focus by itself
        assert screen.header.pending_actions == 1
        assert "The agent asks" in screen_text(app)  # not the gateway's inner ids
        assert "tester · question" not in screen_text(app)
        await pilot.click(button(view, "Savings"))
        await until(pilot, lambda: not screen.answering, WAIT)
        assert answer_text(screen) == "Asking.Answer: Savings"
        assert view.part.outcome == "answered" and not view.is_open
        assert "Answered “Savings” · Which account?" in screen_text(app)  # what was chosen here
        assert screen.header.pending_actions == 0
        assert app.focused is screen.composer  # the closed question gave the focus back


async def test_multi_sends_every_checked_option(gateway_url: str, tmp_path: Path) -> None:
    app = await gateway_app(gateway_url, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await chat(app, pilot)
        view = await ask(pilot, screen, "multi")
        send = view.query_one(".question--send", Button)
        await pilot.click(send)  # nothing checked: not sent
        await until(pilot, lambda: "Choose at least one answer" in screen_text(app), WAIT)
        assert view.is_open and screen.answering
        for box in view.query(Checkbox):
            if box.label.plain in ("Salary", "Travel"):
                await pilot.click(box)
        await until(pilot, lambda: sum(box.value for box in view.query(Checkbox)) == 2, WAIT)
        await until(pilot, lambda: not send.has_class("-active"), WAIT)  # clicks then count
        await pilot.click(send)
        await until(pilot, lambda: not screen.answering, WAIT)
        assert answer_text(screen) == "Asking.Answer: Salary, Travel"


async def test_confirm_needs_a_second_press_outside_its_guard(
    gateway_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Long enough that the click meant to land inside the re-armed guard does, on a busy machine.
    monkeypatch.setattr(QuestionView, "guard_seconds", 3.0)
    app = await gateway_app(gateway_url, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await chat(app, pilot)
        view = await ask(pilot, screen, "confirm")
        confirm = button(view, "Confirm")
        await pilot.click(confirm)
        await until(pilot, lambda: view.asking_again, WAIT)
        assert "Press “Confirm” again to go ahead." in screen_text(app)
        assert view.is_guarded
        await pilot.click(confirm)  # inside the re-armed guard: ignored
        await pilot.pause()
        assert view.is_open and not view.is_busy
        await until(pilot, lambda: not view.is_guarded, WAIT)
        await pilot.click(confirm)
        await until(pilot, lambda: not screen.answering, WAIT)
        assert answer_text(screen) == "Asking.Answer: Confirm"


async def test_input_sends_the_typed_text(gateway_url: str, tmp_path: Path) -> None:
    app = await gateway_app(gateway_url, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await chat(app, pilot)
        view = await ask(pilot, screen, "input")
        box = view.query_one(".question--input", Input)
        await reach(pilot, screen, view)
        assert app.focused is box
        await pilot.press("enter")  # empty: not sent
        await until(pilot, lambda: "Type an answer first." in screen_text(app), WAIT)
        await pilot.press(*"Rent for July", "enter")
        await until(pilot, lambda: not screen.answering, WAIT)
        assert answer_text(screen) == "Asking.Answer: Rent for July"


async def test_a_secret_reaches_the_gateway_and_nowhere_else(
    gateway_url: str, tmp_path: Path, talkie_home: Path
) -> None:
    debug_log = setup_logging(True)
    assert debug_log is not None and debug_log.is_relative_to(talkie_home)
    seen: list[str] = []

    def hook(message: Message) -> None:
        seen.append(repr(message))

    app = await gateway_app(gateway_url, tmp_path)
    try:
        async with app.run_test(size=SIZE, message_hook=hook) as pilot:
            screen = await chat(app, pilot)
            view = await ask(pilot, screen, "secret")
            box = view.query_one(SecretInput)
            await reach(pilot, screen, view)
            assert app.focused is box and box.password
            await pilot.press(*SECRET)
            assert SECRET not in screen_text(app)  # dots
            await pilot.press("enter")
            assert box.value == ""  # gone from the widget at once
            await until(pilot, lambda: not screen.answering, WAIT)
            assert answer_text(screen) == "Asking.Answer: provided"
            shown = screen_text(app)
            await pilot.press("ctrl+s")  # the export
            downloads = tmp_path / "downloads"
            await until(pilot, lambda: any(downloads.glob("talkie-*.md")), WAIT)
    finally:
        close_logging()
    async with gateway_http(gateway_url) as http:
        kept = (await http.get(f"/v1/_test/credentials/{SECRET_NAME}")).json()
    assert kept == {"set": True, "sha256": hashlib.sha256(SECRET.encode()).hexdigest()}
    assert SECRET not in shown
    assert seen and not any(SECRET in text for text in seen)
    exported = next(downloads.glob("talkie-*.md")).read_text(encoding="utf-8")
    assert "Paste the test API key." in exported and SECRET not in exported
    assert debug_log.stat().st_size > 0  # the log did record the run
    written = [path for path in talkie_home.rglob("*") if path.is_file()]
    assert debug_log in written and log_folder().is_relative_to(talkie_home)
    for path in written:  # the debug log, drafts, anything in the state folder
        assert SECRET.encode() not in path.read_bytes(), path
    for path in tmp_path.glob("minara-*.sqlite3*"):  # nor did the gateway store it
        assert SECRET.encode() not in path.read_bytes(), path


async def test_a_secret_declined_writes_nothing(gateway_url: str, tmp_path: Path) -> None:
    app = await gateway_app(gateway_url, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await chat(app, pilot)
        view = await ask(pilot, screen, "secret")
        await pilot.click(view.query_one(".question--decline", Button))
        await until(pilot, lambda: not screen.answering, WAIT)
        assert answer_text(screen) == "Asking.Answer: declined"
    async with gateway_http(gateway_url) as http:
        kept = (await http.get(f"/v1/_test/credentials/{SECRET_NAME}")).json()
    assert kept == {"set": False, "sha256": None}


async def test_a_question_answered_in_another_client_closes(
    gateway_url: str, tmp_path: Path
) -> None:
    app = await gateway_app(gateway_url, tmp_path)
    async with app.run_test(size=SIZE) as pilot, gateway_http(gateway_url) as http:
        screen = await chat(app, pilot)
        view = await ask(pilot, screen, "select")
        answer = {"answers": [{"questionIndex": 0, "selected_labels": ["Travel"]}]}
        posted = await http.post(f"/v1/interactions/{view.part.question_id}/answer", json=answer)
        assert posted.status_code == 200, posted.text
        await until(pilot, lambda: not view.is_open, WAIT)
        assert view.part.outcome == "answered"
        await until(pilot, lambda: not screen.answering, WAIT)
        assert answer_text(screen) == "Asking.Answer: Travel"
        # The view shrinks and gives the focus back on the refresh after the stream closed it.
        await until(pilot, lambda: "Answered · Which account?" in screen_text(app), WAIT)
        await until(pilot, lambda: app.focused is screen.composer, WAIT)  # the focus came back
        assert all(control.disabled for control in view.query("Button, Input, Checkbox"))
        again = await http.post(f"/v1/interactions/{view.part.question_id}/answer", json=answer)
        assert again.status_code == 404  # not pending any more, for anyone


async def test_ctrl_o_goes_to_the_open_question(gateway_url: str, tmp_path: Path) -> None:
    app = await gateway_app(gateway_url, tmp_path)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = await chat(app, pilot)
        await pilot.press("ctrl+o")
        await until(pilot, lambda: "Nothing is waiting for your answer." in notices(app), WAIT)
        view = await ask(pilot, screen, "confirm")
        await pilot.press("ctrl+l")
        assert app.focused is screen.composer
        await pilot.press("ctrl+o")
        assert app.focused is button(view, "Confirm")  # its first control
        await pilot.press("ctrl+o")  # the only one: it stays
        assert app.focused is not None and app.focused in view.query("*")
        await pilot.click(button(view, "Cancel"))  # a refusal: one press
        await until(pilot, lambda: not screen.answering, WAIT)
        assert answer_text(screen) == "Asking.Answer: Cancel"
