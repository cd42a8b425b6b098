"""Fixtures of the hostile-server suite: the stub-server factory and the client factory."""

from tests.protocol.conftest import connect, serve

__all__ = ["connect", "serve"]
