"""The Minara suite: the gateway must answer `GET /healthz` before its checks run."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from talkie_tui.backends.minara.backend import minara_base
from talkie_tui.config import gateway_token
from talkie_tui.conformance.minara.checks import CHECKS
from talkie_tui.conformance.minara.session import Session
from talkie_tui.conformance.minara.wire import MinaraWire
from talkie_tui.conformance.opening import first_answer, opened
from talkie_tui.conformance.suite import Started, Suite, Target, Unreachable

__all__ = ["SUITE"]


@asynccontextmanager
async def start(target: Target) -> AsyncIterator[Started[Session]]:
    """The gateway's wire once `GET /healthz` answered `{"ok": true}`; Unreachable otherwise."""
    async with opened(target, minara_base) as (base, http):
        wire = MinaraWire(base, gateway_token(target.token), http)
        # With the token: a gateway that wrongly guards /healthz is still found, and the
        # `healthz` check (which sends none) names that rule.
        health = await first_answer(wire.request("GET", "/healthz"))
        data = health.json()
        if health.status != 200 or not isinstance(data, dict) or data.get("ok") is not True:
            raise Unreachable(
                f'GET /healthz answered {health.describe()}, not 200 {{"ok": true}}: '
                "not a Minara gateway"
            )
        yield Started(Session(wire), wire.base)


SUITE = Suite("minara", CHECKS, start)
