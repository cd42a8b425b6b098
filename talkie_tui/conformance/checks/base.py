"""What the talkie/1 checks share: the session, their registry, the spec's name."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from talkie_tui.conformance import suite
from talkie_tui.conformance.wire import RunResult, Wire
from talkie_tui.protocol.talkie.client import TalkieClient
from talkie_tui.protocol.talkie.models import Manifest

SPEC = "talkie/1"
TEST = "talkie-test:"
POLL_INTERVAL = 0.25


@dataclass
class Session:
    """What the checks share: the client, the raw wire, and results later checks build on."""

    client: TalkieClient
    wire: Wire
    slow: RunResult | None = None  # the complete `talkie-test:slow` run, once the slow check ran

    @property
    def manifest(self) -> Manifest:
        """The server's manifest."""
        return self.client.server.manifest


REGISTRY: suite.Registry[Session] = suite.Registry()


def check(
    name: str,
    *,
    section: str,
    timeout: float = 15.0,
    needs_test_mode: bool = True,
    slow: bool = False,
) -> Callable[[Callable[[Session], Awaitable[None]]], Callable[[Session], Awaitable[None]]]:
    """Register a talkie/1 check under `name`; the package orders them."""
    return REGISTRY.check(
        name,
        section=f"talkie-1.md {section}",
        timeout=timeout,
        slow=slow,
        needs_test_mode=needs_test_mode,
    )
