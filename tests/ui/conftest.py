"""Fixtures of the UI tests that come from other suites: keyrings and stub servers."""

from tests.auth.memory_keyring import install_keyring, memory_keyring
from tests.protocol.conftest import serve

__all__ = ["install_keyring", "memory_keyring", "serve"]
