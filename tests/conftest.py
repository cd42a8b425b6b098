"""Fixtures shared by the whole suite."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import TEST_TOKEN

_skipped: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Remember skipped tests: on CI a skip means a system part is missing."""
    if report.skipped and not hasattr(report, "wasxfail"):
        _skipped.append(report.nodeid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """With CI=true, any skip fails the run (every system part must be installed there)."""
    if os.environ.get("CI", "").lower() == "true" and _skipped and exitstatus == 0:
        names = "\n  ".join(_skipped)
        print(f"\nCI=true: {len(_skipped)} skipped test(s) count as failures:\n  {names}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(autouse=True)
def talkie_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own TALKIE_HOME: nothing reads or writes the real config folders."""
    home = tmp_path_factory.mktemp("talkie-home")
    monkeypatch.setenv("TALKIE_HOME", str(home))
    # No test (nor a talkie it starts) may touch the real keyring of the machine: tests that
    # need one install an in-memory backend (tests/auth/memory_keyring.py) or run their own
    # Secret Service (tests/auth/test_secret_service.py).
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    return home


@pytest.fixture(autouse=True)
def _english(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Tests read the UI in English whatever this machine's locale; Czech tests ask for it."""
    from talkie_tui.i18n import use_language

    for name in ("LC_ALL", "LC_MESSAGES", "LANGUAGE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    use_language("en")
    yield
    use_language("en")


@pytest.fixture(autouse=True)
def _forget_session_sign_ins() -> Iterator[None]:
    """Sign-ins kept "for this session only" live in the process: not from one test to the next."""
    from talkie_tui.auth.store import MemoryStore

    yield
    for server_id in list(_session_grants()):
        MemoryStore().delete(server_id)


def _session_grants() -> dict[str, Any]:
    from talkie_tui.auth import store

    return store._SESSION_GRANTS


@pytest.fixture
def devserver(tmp_path: Path) -> Iterator[Callable[..., str]]:
    """Factory: `devserver(**ServerConfig overrides) -> base URL`; each server has its own db."""
    # Imported here so test modules that never start a server don't load it.
    from talkie_tui.devserver.talkie.config import ServerConfig
    from talkie_tui.devserver.talkie.runner import serve_in_thread

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


@pytest.fixture
def minara_gateway(tmp_path: Path) -> Iterator[Callable[..., str]]:
    """Factory: `minara_gateway(**GatewayConfig overrides) -> base URL`; each has its own db."""
    from talkie_tui.devserver.minara.config import GatewayConfig
    from talkie_tui.devserver.minara.runner import serve_in_thread

    numbers = itertools.count()
    with ExitStack() as gateways:

        def start(**overrides: Any) -> str:
            overrides.setdefault("db_path", tmp_path / f"minara-{next(numbers)}.sqlite3")
            return gateways.enter_context(serve_in_thread(GatewayConfig(**overrides)))

        yield start


@pytest.fixture
def cuckoo_hub(tmp_path: Path) -> Iterator[Callable[..., str]]:
    """Factory: `cuckoo_hub(**HubConfig overrides) -> base URL`; dev mode on, each its own db."""
    from talkie_tui.devserver.cuckoo.config import HubConfig
    from talkie_tui.devserver.cuckoo.runner import serve_in_thread

    numbers = itertools.count()
    with ExitStack() as hubs:

        def start(**overrides: Any) -> str:
            overrides.setdefault("db_path", tmp_path / f"cuckoo-{next(numbers)}.sqlite3")
            overrides.setdefault("dev", True)
            return hubs.enter_context(serve_in_thread(HubConfig(**overrides)))

        yield start


@pytest.fixture
def gateway_url(minara_gateway: Callable[..., str]) -> str:
    """A reference Minara gateway in test mode with auth token `TEST_TOKEN`."""
    return minara_gateway(test_mode=True, auth_token=TEST_TOKEN)


# --- the real authorization server (oidc-provider on node), shared by every sign-in test ------

# Short enough that a test can wait for an access token to expire.
OAUTH_ACCESS_TTL = 4


@pytest.fixture(scope="session")
def oidc_provider() -> Iterator[Any]:
    """oidc-provider with the talkie client pre-registered; access tokens live 4 s."""
    from tests.oauth_provider import start_oidc_provider

    provider = start_oidc_provider(access_ttl=OAUTH_ACCESS_TTL)
    yield provider
    provider.stop()


@pytest.fixture(scope="session")
def cimd_provider() -> Iterator[Any]:
    """oidc-provider that knows the talkie client only through the shipped `oauth/client.json`."""
    from tests.oauth_provider import SHIPPED_CIMD, start_oidc_provider

    provider = start_oidc_provider(access_ttl=OAUTH_ACCESS_TTL, cimd_file=SHIPPED_CIMD)
    yield provider
    provider.stop()
