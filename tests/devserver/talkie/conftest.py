"""Fixtures of the reference-server tests."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from talkie_tui.devserver.talkie.config import ServerConfig
from talkie_tui.devserver.talkie.run_context import RunContext
from talkie_tui.devserver.talkie.runner import serve_in_thread
from tests.helpers import TEST_TOKEN

# Short timings keep the suite fast; production defaults are tested where they matter.
FAST = {
    "demo_delay": 0.0,
    "slow_seconds": 0.6,
    "ping_interval": 0.1,
    "undo_seconds": 0.4,
}


@pytest.fixture
def pauses(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The pauses runs asked for (`RunContext.sleep`), in order: a test sees pacing as what the
    server waited for, not as what a clock measured on a busy machine."""
    asked: list[float] = []
    sleep = RunContext.sleep

    async def recording(self: RunContext, seconds: float) -> None:
        asked.append(seconds)
        await sleep(self, seconds)

    monkeypatch.setattr(RunContext, "sleep", recording)
    return asked


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    """A plain httpx client."""
    with httpx.Client(timeout=10.0) as client:
        yield client


@pytest.fixture(scope="module")
def fast_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A test-mode server with the dev token and short timings, shared by a module's tests.

    Tests on it must not depend on global state (each uses its own thread ids); tests that do
    start their own server with the `devserver` factory.
    """
    db_path = tmp_path_factory.mktemp("devserver") / "shared.sqlite3"
    config = ServerConfig(test_mode=True, dev_token=TEST_TOKEN, db_path=db_path, **FAST)
    with serve_in_thread(config) as url:
        yield url
