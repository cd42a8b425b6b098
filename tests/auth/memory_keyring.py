"""Keyring backends for tests: a dict-backed one, and fixtures that install a backend."""

from __future__ import annotations

from collections.abc import Callable

import keyring
import keyring.core
import pytest
from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError


class MemoryKeyring(KeyringBackend):
    """A keyring in a dict (`entries`, keyed by (service, username)); recommended (priority 1)."""

    priority = 1.0
    # Never offered by keyring's own detection: only a test that installs it uses it.
    viable = False

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]  # keyring's base is unannotated
        self.entries: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.entries.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.entries[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        try:
            del self.entries[(service, username)]
        except KeyError:
            raise PasswordDeleteError("No such password!") from None


InstallKeyring = Callable[[KeyringBackend], KeyringBackend]


@pytest.fixture
def install_keyring(monkeypatch: pytest.MonkeyPatch) -> InstallKeyring:
    """`install_keyring(backend)` makes `backend` keyring's choice for this test only."""
    # Registered first, so the backend (or None: "not detected yet") before the test comes back.
    monkeypatch.setattr(keyring.core, "_keyring_backend", keyring.core._keyring_backend)

    def install(backend: KeyringBackend) -> KeyringBackend:
        keyring.set_keyring(backend)
        return backend

    return install


@pytest.fixture
def memory_keyring(install_keyring: InstallKeyring) -> MemoryKeyring:
    """A fresh in-memory keyring, installed as keyring's backend for this test."""
    backend = MemoryKeyring()
    install_keyring(backend)
    return backend
