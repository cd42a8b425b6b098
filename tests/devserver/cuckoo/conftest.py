"""Fixtures of the Cuckoo hub tests: one dev-mode hub per module with short timings."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx
import pytest

from talkie_tui.devserver.cuckoo.config import HubConfig
from talkie_tui.devserver.cuckoo.runner import serve_in_thread

FAST = {"stream_sweep_interval": 0.05}


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    """A plain httpx client, one per module."""
    with httpx.Client(timeout=10.0) as client:
        yield client


@pytest.fixture(scope="module")
def hub_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A dev-mode hub shared by a module's tests (each test makes its own people and agents)."""
    folder = tmp_path_factory.mktemp("cuckoo")
    with serve_in_thread(HubConfig(dev=True, db_path=folder / "hub.sqlite3", **FAST)) as url:
        yield url


@pytest.fixture
def signed_in(cuckoo_hub: Callable[..., str]) -> tuple[str, dict[str, str]]:
    """A hub whose sign-in codes land in a dict (address → latest code), codes not limited."""
    codes: dict[str, str] = {}
    url = cuckoo_hub(
        code_sink=lambda email, code: codes.__setitem__(email, code), code_rate=(1000.0, 1000)
    )
    return url, codes
