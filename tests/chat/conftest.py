"""Fixtures of the chat tests: the protocol tests' stub servers and clients."""

from __future__ import annotations

from tests.protocol.conftest import connect, replay, replay_server, serve

__all__ = ["connect", "replay", "replay_server", "serve"]
