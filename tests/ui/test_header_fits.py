"""Issue 20: the header fits at 120 and at 60 columns. It shortens by priority and never cuts a
number: the connection state and the pending count show whole, the usage meters lose their
bars and then whole meters."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import Static

from talkie_tui.chat.vocabulary import UsageMeter
from talkie_tui.ui.chat import status
from talkie_tui.ui.widgets.header import fit_meters, format_meter
from tests.helpers import TEST_TOKEN
from tests.ui.flows import chat_screen, make_app, put_and_send, until
from tests.ui.killable_proxy import KillableProxy

METERS = (
    UsageMeter(label="Tokens today", used=43, limit=400_000),
    UsageMeter(label="Runs today", used=1, limit=500),
    UsageMeter(label="Voice", used=0, limit=30, unit="min"),
)


def test_meters_lose_their_bars_then_whole_meters_never_a_number() -> None:
    whole = [format_meter(m).plain for m in METERS]
    bare = [format_meter(m, 0).plain for m in METERS]
    assert fit_meters(METERS, 200).plain == "  ".join(whole)
    assert fit_meters(METERS, len("  ".join(bare))).plain == "  ".join(bare)
    for width in range(0, 120):
        shown = fit_meters(METERS, width).plain
        assert len(shown) <= width
        assert shown in ("", "  ".join(whole)) or any(
            shown == "  ".join(bare[:count]) for count in range(1, len(bare) + 1)
        ), shown


@pytest.mark.slow
@pytest.mark.parametrize("size", [(120, 40), (60, 20)])
async def test_the_header_shows_state_and_pending_whole_at_each_width(
    size: tuple[int, int], devserver: Callable[..., str], tmp_path: Path
) -> None:
    url = devserver(test_mode=True, dev_token=TEST_TOKEN, demo_agent=True, demo_delay=0.0)
    async with KillableProxy(url) as proxy:
        app = make_app(proxy.origin, tmp_path)
        async with app.run_test(size=size) as pilot:
            screen = await chat_screen(app, pilot)
            await put_and_send(pilot, screen, "talkie-test:action")
            await until(pilot, lambda: screen.header.pending_actions == 1, 30)
            await proxy.down()
            await until(pilot, lambda: screen.header.state == "offline", 30)
            await pilot.pause(1.2)  # the next try's seconds counted down once
            header = screen.header
            for name in ("#header-state", "#header-pending"):
                widget = header.query_one(name, Static)
                text = str(widget.content)
                assert widget.region.right <= header.region.right, (name, widget.region)
                assert widget.content_size.width >= len(text), (name, text, widget.region)
            assert str(header.query_one("#header-pending", Static).content).startswith("⚑ 1")
            state = str(header.query_one("#header-state", Static).content)
            assert state.startswith("○ offline ") and "retry in" in state


@pytest.fixture(autouse=True)
def quick_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Checks every second: the server's going away shows at a test's pace."""
    monkeypatch.setattr(status, "CHECK_SECONDS", 1.0)
    monkeypatch.setattr(status, "RETRY_SECONDS", (5.0,))
