"""Which protocol a server speaks, found out by `talkie_tui.backends.connect` (as `talkie
connect` does), and the suite of checks of each protocol."""

from __future__ import annotations

from typing import Any

from talkie_tui.backends import connect, looked_like_a_gateway, looked_like_a_hub
from talkie_tui.config import development_token, gateway_token, hub_token
from talkie_tui.conformance.suite import Suite, Target
from talkie_tui.core.errors import TalkieError
from talkie_tui.core.tokens import StaticToken

__all__ = ["PROTOCOLS", "detect", "suite_of"]

PROTOCOLS = ("talkie", "minara", "cuckoo")
"""The protocols `talkie conformance` has checks for (`--protocol` offers these)."""


def _static(token: str | None) -> StaticToken | None:
    return StaticToken(token) if token else None


async def detect(target: Target) -> str:
    """The protocol of `target.server`: "talkie", "minara" or "cuckoo".

    A gateway or hub that answers as one and then refuses (a token it wants, a person it wants
    signed in) is that protocol; when nothing is found the answer is "talkie", whose
    `discovery` check then says what the address answered.
    """
    try:
        backend = await connect(
            target.server,
            tokens=_static(development_token(target.token)),
            gateway_tokens=_static(gateway_token(target.token)),
            hub_tokens=_static(hub_token(target.token)),
            allow_private_http=target.allow_private_http,
        )
    except TalkieError as error:
        if looked_like_a_hub(error):
            return "cuckoo"
        if looked_like_a_gateway(error):
            return "minara"
        return "talkie"
    try:
        return backend.info.protocol
    finally:
        await backend.aclose()


def suite_of(protocol: str) -> Suite[Any]:
    """The suite of checks of `protocol` (imported only when it is asked for)."""
    if protocol == "minara":
        from talkie_tui.conformance.minara.suite import SUITE as minara

        return minara
    if protocol == "cuckoo":
        from talkie_tui.conformance.cuckoo.suite import SUITE as cuckoo

        return cuckoo
    if protocol == "talkie":
        from talkie_tui.conformance.talkie_suite import SUITE as talkie

        return talkie
    raise ValueError(f"no conformance checks for the {protocol} protocol")
