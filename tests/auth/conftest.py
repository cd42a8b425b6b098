"""Fixtures of the sign-in tests: stub servers (shared with the protocol tests), keyrings."""

from tests.auth.memory_keyring import install_keyring, memory_keyring
from tests.protocol.conftest import serve

__all__ = ["install_keyring", "memory_keyring", "serve"]
