"""Fixtures of the sign-in tests: stub servers (shared with the protocol tests)."""

from tests.protocol.conftest import serve

__all__ = ["serve"]
