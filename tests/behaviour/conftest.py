"""The reference server of each protocol, as the behaviour suite reaches it.

`reference` runs each test once per protocol: the talkie/1 server in test mode, the Minara
gateway in test mode, and a Cuckoo hub whose agent is the Talkie server's, served by the bridge
(`talkie demo --protocol cuckoo`, so the hub's agent answers the `talkie-test:` commands). All of
it on 127.0.0.1.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from talkie_tui.backends import connect
from talkie_tui.backends.base import Backend, ProtocolName
from talkie_tui.commands.demo_cuckoo import cuckoo_demo
from talkie_tui.core.tokens import StaticToken
from talkie_tui.devserver.minara.testmode import SLOW_DELTAS
from talkie_tui.devserver.talkie.testmode import SLOW_TEXT
from tests.helpers import TEST_TOKEN

PROTOCOLS: list[ProtocolName] = ["talkie", "minara", "cuckoo"]
_TALKIE_COMMANDS = ("talkie-test:echo", "talkie-test:slow", SLOW_TEXT)


@dataclass(frozen=True)
class Reference:
    """A reference server: where it is, how a client signs in to it, and its test commands."""

    protocol: ProtocolName
    url: str
    token: str  # the bearer a client is given (a development token, a gateway's, a session's)
    echo: str  # `<echo> words` is answered with the words, streamed
    slow: str  # answered slowly with `slow_text`, a few words at a time
    slow_text: str

    async def backend(self, url: str | None = None) -> Backend:
        """A backend signed in to the server (or to `url`, a proxy in front of it)."""
        # A hub takes its session token as `hub_tokens`; the others take `tokens`.
        tokens = StaticToken(self.token)
        address = url or self.url
        return await connect(address, protocol=self.protocol, tokens=tokens, hub_tokens=tokens)


@pytest.fixture(params=PROTOCOLS)
def reference(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    devserver: Callable[..., str],
    minara_gateway: Callable[..., str],
) -> Iterator[Reference]:
    """Each protocol's reference server in turn."""
    protocol: ProtocolName = request.param
    if protocol == "cuckoo":
        with cuckoo_demo(tmp_path / "demo") as demo:
            yield Reference("cuckoo", demo.hub_url, demo.session_token, *_TALKIE_COMMANDS)
    elif protocol == "minara":
        url = minara_gateway(test_mode=True, auth_token=TEST_TOKEN)
        slow_text = "".join(f"part {number} " for number in range(1, SLOW_DELTAS + 1))
        yield Reference(
            "minara", url, TEST_TOKEN, "minara-test:echo", "minara-test:slow", slow_text
        )
    else:
        url = devserver(test_mode=True, dev_token=TEST_TOKEN, demo_delay=0.0)
        yield Reference("talkie", url, TEST_TOKEN, *_TALKIE_COMMANDS)
