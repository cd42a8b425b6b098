"""The chat screen after a broken stream: "reconnecting" counts the seconds it waits for the
answer, and Esc stops the wait, leaving the message in the conversation with Retry."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Button, Static

from talkie_tui.ui.widgets.notice import NoticeView
from tests.hostile.kit import says
from tests.hostile.test_waiting import BreakingServer
from tests.protocol.conftest import Serve
from tests.ui.flows import chat_screen, make_app, screen_text, until


def footer_line(app: object) -> str:
    """The last line of the screen: the footer's keys."""
    lines = [line for line in screen_text(app).splitlines() if line.strip()]  # type: ignore[arg-type]
    return lines[-1]


async def test_reconnecting_counts_seconds_and_esc_stops_waiting(
    serve: Serve, tmp_path: Path
) -> None:
    stub = BreakingServer()  # the stream breaks after "partial"; the answer never comes
    server = stub.start(serve)
    app = make_app(server.origin, tmp_path)
    async with app.run_test(size=(140, 36)) as pilot:
        screen = await chat_screen(app, pilot)
        state = screen.header.query_one("#header-state", Static)
        screen.composer.insert("question")
        await pilot.press("enter")

        await until(pilot, lambda: screen.header.state == "reconnecting")
        await until(pilot, lambda: screen.header.waited >= 1, timeout=5)
        await pilot.pause()
        assert str(state.content) == f"◌ reconnecting… {screen.header.waited} s · Esc stops waiting"
        footer = footer_line(app)
        assert "Stop waiting" in footer and "Stop answer" not in footer, footer
        assert screen.session.waiting and screen.answering

        await pilot.press("escape")
        await until(pilot, lambda: not screen.answering, timeout=5)
        await pilot.pause()

        user, answer = screen.session.conversation.turns
        assert (user.role, user.text) == ("user", "question")
        assert answer.state == "truncated" and answer.text == says("partial")[1]["delta"]
        notice = screen.transcript.query_one(NoticeView)
        assert "You stopped waiting" in notice.part.text and notice.part.retryable
        assert [str(b.label) for b in notice.query(Button)] == ["Retry"]
        assert screen.header.state == "connected"
        footer = footer_line(app)
        assert "Stop answer" in footer and "Stop waiting" not in footer, footer
    # Only the wait ended: nothing asked the server to stop the run.
    assert not [path for path in server.paths("POST") if "cancel" in path]
