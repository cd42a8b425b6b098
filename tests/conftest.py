"""Fixtures shared by the whole suite."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import TEST_TOKEN


@pytest.fixture
def devserver(tmp_path: Path) -> Iterator[Callable[..., str]]:
    """Factory: `devserver(**ServerConfig overrides) -> base URL`; each server has its own db."""
    # Imported here so test modules that never start a server don't load it.
    from talkie_tui.devserver.config import ServerConfig
    from talkie_tui.devserver.runner import serve_in_thread

    numbers = itertools.count()
    with ExitStack() as servers:

        def start(**overrides: Any) -> str:
            overrides.setdefault("db_path", tmp_path / f"devserver-{next(numbers)}.sqlite3")
            return servers.enter_context(serve_in_thread(ServerConfig(**overrides)))

        yield start


@pytest.fixture
def server_url(devserver: Callable[..., str]) -> str:
    """A reference server in test mode with the demo agent and dev token `TEST_TOKEN`."""
    return devserver(test_mode=True, dev_token=TEST_TOKEN, demo_agent=True)
