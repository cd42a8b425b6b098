"""Tool status lines and turn notices (errors with Retry and a 429 countdown)."""

from __future__ import annotations

import asyncio

from textual.widgets import Button

from talkie_tui.chat.turns import NoticePart, ToolPart
from talkie_tui.ui.messages import RetryRequested
from talkie_tui.ui.widgets.notice import RETRY_HINT, NoticeView
from talkie_tui.ui.widgets.tool_status import SPINNER_FRAMES, SPINNER_INTERVAL, ToolStatus
from tests.ui.apps.action_app import FakeClock
from tests.ui.apps.cards_app import HarnessApp, screen_text

# --- tool status ---------------------------------------------------------------------------


async def test_running_spins_then_ok_stops_the_timer() -> None:
    part = ToolPart("call_1", "crm.search", "Searching the CRM")
    app = HarnessApp(lambda: [ToolStatus(part)])
    async with app.run_test() as pilot:
        status = app.query_one(ToolStatus)
        await pilot.pause()
        first = screen_text(app).splitlines()[0]
        assert "Searching the CRM" in first
        assert first.strip()[0] in SPINNER_FRAMES
        assert status.spinning
        await asyncio.sleep(SPINNER_INTERVAL * 3)
        await pilot.pause()
        assert screen_text(app).splitlines()[0] != first  # the spinner moved
        part.state = "ok"
        status.refresh_part()
        await pilot.pause()
        assert not status.spinning
        assert screen_text(app).splitlines()[0].strip() == "✓ Searching the CRM"
        assert status.has_class("-ok")


async def test_failed_shows_the_error_text_inert() -> None:
    part = ToolPart("call_1", "mail.send", "Sending [b]mail[/b]")
    app = HarnessApp(lambda: [ToolStatus(part)])
    async with app.run_test() as pilot:
        status = app.query_one(ToolStatus)
        part.state = "failed"
        part.error = "SMTP timeout [@click=app.quit]x[/]"
        status.refresh_part()
        await pilot.pause()
        lines = [line.strip() for line in screen_text(app).splitlines()]
        assert not status.spinning
        assert status.has_class("-failed")
    assert lines[0] == "✗ Sending [b]mail[/b]"
    assert lines[1] == "SMTP timeout [@click=app.quit]x[/]"


async def test_a_finished_tool_never_starts_a_timer() -> None:
    part = ToolPart("call_1", "crm.get", "", state="ok")
    app = HarnessApp(lambda: [ToolStatus(part)])
    async with app.run_test() as pilot:
        await pilot.pause()
        assert not app.query_one(ToolStatus).spinning
        assert screen_text(app).splitlines()[0].strip() == "✓ crm.get"  # name without a label


# --- notices -------------------------------------------------------------------------------


async def test_retryable_notice_shows_hint_and_retry_posts() -> None:
    part = NoticePart("The agent is busy [b]now[/b].", code="upstream_unavailable", retryable=True)
    app = HarnessApp(lambda: [NoticeView(part)])
    async with app.run_test() as pilot:
        await pilot.pause()
        text = screen_text(app)
        await pilot.click(".notice--retry-button")
        await pilot.pause()
    assert "The agent is busy [b]now[/b]." in text
    assert "upstream_unavailable" in text
    assert RETRY_HINT in text
    assert [type(m) for m in app.posted] == [RetryRequested]


async def test_final_notice_has_no_retry() -> None:
    part = NoticePart("Quota used up.", code="quota_exceeded", retryable=False)
    app = HarnessApp(lambda: [NoticeView(part)])
    async with app.run_test() as pilot:
        await pilot.pause()
        text = screen_text(app)
        assert not app.query(Button)
    assert "Quota used up." in text
    assert RETRY_HINT not in text


async def test_rate_limited_counts_down_before_retry() -> None:
    clock = FakeClock()
    part = NoticePart("Slow down.", code="rate_limited", retryable=True)
    app = HarnessApp(lambda: [NoticeView(part, retry_after=12, monotonic=clock)])
    async with app.run_test() as pilot:
        notice = app.query_one(NoticeView)
        retry = app.query_one(".notice--retry-button", Button)
        await pilot.pause()
        assert str(retry.label) == "Retry in 12s"
        assert retry.disabled
        await pilot.click(".notice--retry-button")
        clock.advance(5)
        notice.refresh_countdown()
        assert str(retry.label) == "Retry in 7s"
        clock.advance(7)
        notice.refresh_countdown()
        await pilot.pause()
        assert str(retry.label) == "Retry"
        assert not retry.disabled
        assert notice._ticker is None
        await pilot.click(".notice--retry-button")
        await pilot.pause()
    assert [type(m) for m in app.posted] == [RetryRequested]


async def test_retry_after_is_ignored_for_other_codes() -> None:
    part = NoticePart("Try later.", code="upstream_unavailable", retryable=True)
    app = HarnessApp(lambda: [NoticeView(part, retry_after=30)])
    async with app.run_test() as pilot:
        await pilot.pause()
        assert str(app.query_one(".notice--retry-button", Button).label) == "Retry"
