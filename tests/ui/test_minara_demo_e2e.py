"""The demo agent of `talkie demo --protocol minara` in the real app: what its market summary and
its price alerts send is drawn as such (Markdown, a newer block kind's fallback text, a link row,
a select of several answered from the keyboard)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import Button, Checkbox

from talkie_tui.ui.widgets.link import LinkRow
from talkie_tui.ui.widgets.markdown_view import MarkdownView
from talkie_tui.ui.widgets.ui_block import UiBlockView
from tests.helpers import TEST_TOKEN
from tests.ui.minara_e2e import (
    SIZE,
    WAIT,
    answer_text,
    chat,
    gateway_app,
    open_question,
    say,
    screen_text,
    until,
)

pytestmark = pytest.mark.slow


@pytest.fixture
def demo_url(minara_gateway: Callable[..., str]) -> str:
    """A gateway whose every message goes to the demo agent, without its pauses."""
    return minara_gateway(auth_token=TEST_TOKEN, demo_delay=0.0)


async def test_the_market_summary_shows_markdown_a_fallback_and_a_link(
    demo_url: str, tmp_path: Path
) -> None:
    app = await gateway_app(demo_url, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await chat(app, pilot)
        await say(pilot, screen, "market summary")
        views = list(screen.transcript.query(UiBlockView))
        assert [view.part.kind for view in views] == ["markdown", "heatmap", "link"]
        assert views[0].query_one(MarkdownView)
        assert views[1].has_class("-other")  # not a kind talkie draws: its fallback text
        link = views[2].query_one(LinkRow)
        assert (link.title, link.url) == ("Solana, the week's top mover", "https://solana.com")
        text = screen_text(app)
        assert "The week in short" in text and "###" not in text  # a heading, not its marks
        assert "• Solana +9.6 %: led the week" in text and "**" not in text
        assert "Heat map of the 7-day change: SOL +9.6 % · BTC +4.1 %" in text
        assert "https://solana.com" in text


async def test_price_alerts_are_a_choice_of_several_made_from_the_keyboard(
    demo_url: str, tmp_path: Path
) -> None:
    app = await gateway_app(demo_url, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await chat(app, pilot)
        await say(pilot, screen, "set price alerts", wait=False)
        view = await open_question(pilot, screen)
        boxes = list(view.query(Checkbox))
        assert [box.label.plain for box in boxes] == [
            "Bitcoin (BTC)",
            "Ether (ETH)",
            "Solana (SOL)",
        ]
        await pilot.press("ctrl+o")  # to the pending question
        await until(pilot, lambda: app.focused is boxes[0], WAIT)
        await pilot.press("space", "tab", "tab", "space")
        await until(pilot, lambda: [box.value for box in boxes] == [True, False, True], WAIT)
        await pilot.press("tab")
        assert app.focused is view.query_one(".question--send", Button)
        await pilot.press("enter")
        await until(pilot, lambda: not screen.answering, WAIT)
        assert answer_text(screen) == "Alerts set for Bitcoin and Solana."
        text = screen_text(app)
        assert "Answered “Bitcoin (BTC), Solana (SOL)”" in text
        assert "below 61,037.50 USD or above 67,462.50 USD" in text  # the alerts' kv block
