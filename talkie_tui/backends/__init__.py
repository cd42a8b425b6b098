"""One backend per protocol behind one interface (`base.Backend`): what the UI talks to.

`connect` reaches a server in its protocol and returns its Backend; `PROTOCOLS` are the ones
this version speaks (the command line offers only these for `--protocol`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from talkie_tui.core.tokens import TokenSource

    from .base import Backend, KeptSignIn, ProtocolName

__all__ = ["PROTOCOLS", "connect"]

PROTOCOLS: tuple[ProtocolName, ...] = ("talkie",)
"""The protocols a backend exists for; Minara gateways and Cuckoo hubs join with theirs."""


async def connect(
    address: str,
    *,
    protocol: ProtocolName | None = None,
    tokens: TokenSource | None = None,
    kept: KeptSignIn | None = None,
    allow_private_http: bool = False,
) -> Backend:
    """The backend of the server at `address`, signed in with `tokens`, else with `kept`.

    `protocol` forces the protocol; None finds it out from the server (this version speaks
    talkie/1 only, so every server is taken for a Talkie server and discovered as one).
    Raises a `talkie_tui.core.errors.TalkieError` when the server cannot be reached.
    """
    chosen = protocol or "talkie"
    if chosen not in PROTOCOLS:
        raise ValueError(f"no backend for the {chosen} protocol in this version")
    from .talkie.backend import connect as connect_talkie

    return await connect_talkie(
        address, tokens=tokens, kept=kept, allow_private_http=allow_private_http
    )
