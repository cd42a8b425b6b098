"""Fixtures of the Minara gateway tests: short timings keep the whole directory to seconds."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from talkie_tui.devserver.common import clock
from talkie_tui.devserver.minara.config import GatewayConfig
from talkie_tui.devserver.minara.runner import serve_in_thread
from talkie_tui.devserver.minara.turn_context import TurnContext
from tests.helpers import TEST_TOKEN

FAST = {"slow_delay": 0.08, "endless_interval": 0.02, "demo_delay": 0.0}


@pytest.fixture
def pauses(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The pauses turns asked for (`TurnContext.sleep`), in order; and the gateway's clock
    (`clock.now`, its rows' `created_at`) made one that moves only by them. A test sees pacing
    as what the gateway waited for, not as what a clock measured on a busy machine."""
    asked: list[float] = []
    sleep = TurnContext.sleep
    start = clock.now()

    async def recording(self: TurnContext, seconds: float) -> None:
        asked.append(seconds)
        await sleep(self, seconds)

    monkeypatch.setattr(TurnContext, "sleep", recording)
    monkeypatch.setattr(clock, "now", lambda: clock.later(sum(asked), start))
    return asked


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    """A plain httpx client, one per module (making one costs more than most tests here)."""
    with httpx.Client(timeout=10.0) as client:
        yield client


@pytest.fixture(scope="module")
def fast_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A test-mode gateway with `TEST_TOKEN` and short timings, shared by a module's tests.

    Tests on it use their own sessions; tests that need other settings start their own gateway
    with the `minara_gateway` factory.
    """
    folder = tmp_path_factory.mktemp("minara")
    config = GatewayConfig(
        test_mode=True, auth_token=TEST_TOKEN, db_path=folder / "shared.sqlite3", **FAST
    )
    with serve_in_thread(config) as url:
        yield url
