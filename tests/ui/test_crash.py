"""Issue 6, "Nothing lost": an unexpected exception shows a screen with the crash report's path,
keeps the drafts, and leaves the terminal as it found it; never a traceback on the screen.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from talkie_tui.logs import log_folder
from talkie_tui.ui.app import TalkieApp
from talkie_tui.ui.chat.drafts import NEW, DraftStore
from talkie_tui.ui.chat.screen import ChatScreen
from talkie_tui.ui.screens.crash import CrashScreen
from talkie_tui.ui.support.crash import describe_error
from tests.helpers import TEST_TOKEN
from tests.ui.flows import FAST, chat_screen, make_app, screen_up, send, until
from tests.ui.pty import PtyTalkie
from tests.ui.test_drafts import drafts_on_disk

SECRET = "sk-crash-secret-0123456789"


class Boom(RuntimeError):
    """The unexpected error the tests provoke."""


def explode(self: object) -> None:
    """An action with a bug in it: its message quotes a bearer token and a control sequence."""
    raise Boom(f"help broke \x1b[31mred\x1b[0m with Authorization: Bearer {SECRET}")


def crash_reports() -> list[Path]:
    """The crash reports in the log folder, oldest first."""
    return sorted(log_folder().glob("crash-*.log"))


def test_the_summary_is_one_clean_line() -> None:
    assert describe_error(Boom("a\nb\x1b[2J c")) == "Boom: a b c"
    assert describe_error(KeyError()) == "KeyError"
    assert len(describe_error(ValueError("x" * 1000))) == 300


async def test_an_unexpected_error_shows_the_report_and_keeps_the_draft(
    devserver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = devserver(**FAST)
    monkeypatch.setattr(TalkieApp, "action_help", explode)
    app = make_app(url, tmp_path)
    with pytest.raises(Boom):  # Pilot re-raises it at the end, so tests never hide a bug
        async with app.run_test(size=(120, 40)) as pilot:
            screen = await chat_screen(app, pilot)
            screen.composer.focus()
            await pilot.press(*"half a thought")
            await pilot.press("f1")
            await until(pilot, lambda: screen_up(app, CrashScreen))
            crash = app.screen
            assert isinstance(crash, CrashScreen)
            # The draft is on disk at once, not after the debounce.
            assert DraftStore().get(screen.client.server.server_id, NEW) == "half a thought"
            assert app.crash_report is not None and [app.crash_report] == crash_reports()
            shown = str(crash.query_one("#crash-report").render())
            assert str(app.crash_report) in shown
            assert "\x1b" not in crash.summary and crash.summary.startswith("Boom: help broke")
            assert app.focused is not None and app.focused.id == "quit"
            await pilot.press("enter")
            await until(pilot, lambda: not app.is_running)
    assert app.return_code == 1
    report = app.crash_report.read_text(encoding="utf-8")
    assert "Traceback" in report and "explode" in report and "Boom" in report
    assert SECRET not in report
    assert app.crash_report.stat().st_mode & 0o777 == 0o600


async def test_continue_anyway_keeps_the_chat_working(
    devserver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = devserver(**FAST)
    monkeypatch.setattr(TalkieApp, "action_help", explode)
    app = make_app(url, tmp_path)
    with pytest.raises(Boom):
        async with app.run_test(size=(120, 40)) as pilot:
            screen = await chat_screen(app, pilot)
            await pilot.press("f1")
            await until(pilot, lambda: screen_up(app, CrashScreen))
            await pilot.press("escape")
            await until(pilot, lambda: app.screen is screen)
            await send(pilot, screen, "talkie-test:echo still here")
            await until(pilot, lambda: "still here" in screen.session.conversation.turns[-1].text)
            await pilot.press("f1")  # a second failure shows the screen again
            await until(pilot, lambda: screen_up(app, CrashScreen))
            await pilot.press("escape")
            await until(pilot, lambda: app.screen is screen)
    assert len(crash_reports()) == 2


async def test_a_widget_that_failed_lets_the_person_quit_only(
    devserver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Outside an action Textual stops the failing widget's message loop: no going on."""
    url = devserver(**FAST)

    def broken_resize(self: ChatScreen, event: object) -> None:
        raise Boom("the resize handler broke")

    app = make_app(url, tmp_path)
    left = False
    with pytest.raises(Boom):
        async with app.run_test(size=(120, 40)) as pilot:
            screen = await chat_screen(app, pilot)
            screen.composer.focus()
            await pilot.press("x")
            monkeypatch.setattr(ChatScreen, "on_resize", broken_resize)
            await pilot.resize_terminal(100, 40)
            await until(pilot, lambda: screen_up(app, CrashScreen))
            crash = app.screen
            assert isinstance(crash, CrashScreen) and not crash.can_continue
            assert not crash.query("#continue")
            assert DraftStore().get(screen.client.server.server_id, NEW) == "x"
            await pilot.press("escape")  # closing the box quits
            # The exit the app asked for (`is_running` stays true under run_test until this
            # block ends, and a failed wait would be hidden by the Boom run_test raises).
            await until(pilot, lambda: app._exit)
            left = True
    assert left
    assert app.return_code == 1


async def test_a_failure_in_the_app_itself_leaves_at_once(
    devserver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The application's own message loop is ending: no screen, the report and exit code 1."""
    url = devserver(**FAST)

    def broken_mount(self: TalkieApp) -> None:
        raise Boom("the app broke while starting")

    monkeypatch.setattr(TalkieApp, "on_mount", broken_mount)
    app = make_app(url, tmp_path)
    left = False
    with pytest.raises(Boom):
        async with app.run_test(size=(120, 40)) as pilot:
            # Under run_test `is_running` stays true until the test's block ends (its shutdown
            # runs then), and an AssertionError of a wait here would be hidden by the Boom
            # run_test raises: wait for the exit the app asked for, and say that it came.
            await until(pilot, lambda: app._exit)
            left = True
    assert left
    assert app.return_code == 1
    (report,) = crash_reports()
    assert "the app broke while starting" in report.read_text(encoding="utf-8")


async def test_a_failure_of_the_crash_screen_itself_quits(
    devserver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = devserver(**FAST)
    monkeypatch.setattr(TalkieApp, "action_help", explode)
    monkeypatch.setattr(CrashScreen, "compose", explode)
    app = make_app(url, tmp_path)
    with pytest.raises(Boom):
        async with app.run_test(size=(120, 40)) as pilot:
            await chat_screen(app, pilot)
            await pilot.press("f1")
            await until(pilot, lambda: not app.is_running)
    assert app.return_code == 1


# The real program, with one action broken before it starts.
CRASHING = (
    "-c",
    "import sys\n"
    "from talkie_tui.ui.app import TalkieApp\n"
    "def explode(self):\n"
    "    raise RuntimeError('help broke')\n"
    "TalkieApp.action_help = explode\n"
    "from talkie_tui.cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n",
)
LEAVE_ALTERNATE_SCREEN = b"\x1b[?1049l"


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_the_real_program_shows_the_screen_then_restores_the_terminal(devserver) -> None:
    url = devserver(**FAST)
    talkie = PtyTalkie(url, CRASHING)
    try:
        talkie.wait_for("Message")
        talkie.type("kept for later")
        talkie.wait_for("kept for later")
        os.write(talkie.master, b"\x1bOP")  # F1
        talkie.wait_for("unexpected error")
        talkie.wait_for("crash-")
        os.write(talkie.master, b"\r")  # Enter: Quit has the focus
        assert talkie.wait_exit() == 1
    finally:
        talkie.kill()
    raw = talkie.raw()
    # The alternate screen was left, and what follows is one plain message: no traceback.
    after = raw[raw.rindex(LEAVE_ALTERNATE_SCREEN) :].decode("utf-8", "replace")
    assert "Traceback" not in talkie.text()
    message = re.sub(r"\s+", " ", re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", after))
    assert "talkie stopped after an unexpected error (RuntimeError: help broke)" in message
    (report,) = crash_reports()
    assert str(report) in message
    assert "RuntimeError: help broke" in report.read_text(encoding="utf-8")
    assert [text for threads in drafts_on_disk().values() for text in threads.values()] == [
        "kept for later"
    ]
    assert TEST_TOKEN not in report.read_text(encoding="utf-8")
