"""The talkie/1 suite: discovery (§1) opens the client and raw wire its checks share."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from talkie_tui.config import development_token
from talkie_tui.conformance.checks import CHECKS, Session
from talkie_tui.conformance.suite import Check, Started, Suite, Target, Unreachable, describe_error
from talkie_tui.conformance.wire import Wire
from talkie_tui.core.errors import TalkieError
from talkie_tui.core.tokens import StaticToken
from talkie_tui.protocol.net.http import make_http_client
from talkie_tui.protocol.talkie.client import TalkieClient

__all__ = ["SUITE"]

DISCOVERY_TIMEOUT = 15.0


@asynccontextmanager
async def start(target: Target) -> AsyncIterator[Started[Session]]:
    """Discover the server; Unreachable (the `discovery` check's failure) when that fails."""
    token = development_token(target.token)
    try:
        async with asyncio.timeout(DISCOVERY_TIMEOUT):
            client = await TalkieClient.connect(
                target.server,
                tokens=StaticToken(token) if token else None,
                allow_private_http=target.allow_private_http,
            )
    except TimeoutError:
        raise Unreachable(f"no manifest within {DISCOVERY_TIMEOUT:g} s") from None
    except TalkieError as error:
        raise Unreachable(describe_error(error)) from None
    async with client, make_http_client() as http:
        session = Session(client, Wire(client, token, http))

        def skip(check: Check[Session]) -> str | None:
            if check.needs_test_mode and not session.manifest.test_mode:
                return "the server is not in test mode"
            return None

        yield Started(session, client.server.origin, skip)


SUITE = Suite("talkie/1", CHECKS, start)
