"""The servers of the hostile suite: one of each per test module, fresh databases."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.devserver.hostile import targets
from tests.devserver.hostile.targets import Target


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    """A dev-mode hub with an agent, a DM, a message and a file."""
    with targets.hub(tmp_path_factory.mktemp("hostile-hub")) as target:
        yield target


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    """A test-mode gateway with a session and a file."""
    with targets.gateway(tmp_path_factory.mktemp("hostile-gateway")) as target:
        yield target


@pytest.fixture(scope="module")
def talkie(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    """A Talkie server in test mode."""
    with targets.talkie(tmp_path_factory.mktemp("hostile-talkie")) as target:
        yield target
