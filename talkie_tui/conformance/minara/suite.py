"""The Minara suite: the gateway must answer `GET /healthz` before its checks run."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from talkie_tui.backends.minara.backend import minara_base
from talkie_tui.config import gateway_token
from talkie_tui.core.errors import TalkieError
from talkie_tui.protocol.client import make_http_client

from ..suite import Started, Suite, Target, Unreachable, describe_error
from .checks import CHECKS
from .session import Session
from .wire import MinaraWire

__all__ = ["SUITE"]


@asynccontextmanager
async def start(target: Target) -> AsyncIterator[Started[Session]]:
    """The gateway's wire once `GET /healthz` answered `{"ok": true}`; Unreachable otherwise."""
    try:
        base = minara_base(target.server, allow_private_http=target.allow_private_http)
    except TalkieError as error:
        raise Unreachable(describe_error(error)) from None
    async with make_http_client() as http:
        wire = MinaraWire(base, gateway_token(target.token), http)
        try:
            # With the token: a gateway that wrongly guards /healthz is still found, and the
            # `healthz` check (which sends none) names that rule.
            health = await wire.request("GET", "/healthz")
        except Exception as error:  # a CheckFailed naming the transport error
            raise Unreachable(str(error)) from None
        data = health.json()
        if health.status != 200 or not isinstance(data, dict) or data.get("ok") is not True:
            raise Unreachable(
                f'GET /healthz answered {health.describe()}, not 200 {{"ok": true}}: '
                "not a Minara gateway"
            )
        yield Started(Session(wire), wire.base)


SUITE = Suite("minara", CHECKS, start)
