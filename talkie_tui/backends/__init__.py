"""One backend per protocol behind one interface (`base.Backend`): what the UI talks to.

`connect` reaches a server in its protocol and returns its Backend; `PROTOCOLS` are the ones
this version speaks (the command line offers only these for `--protocol`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from talkie_tui.core.errors import AddressRefused, DiscoveryError, TalkieError, TransportError
from talkie_tui.i18n import _

if TYPE_CHECKING:
    from talkie_tui.core.tokens import TokenSource

    from .base import Backend, KeptSignIn, ProtocolName

__all__ = [
    "PROTOCOLS",
    "NotAServer",
    "connect",
    "looked_like_a_gateway",
    "not_a_server",
    "what_answered",
]

PROTOCOLS: tuple[ProtocolName, ...] = ("talkie", "minara")
"""The protocols a backend exists for; Cuckoo hubs join with theirs."""


class NotAServer(DiscoveryError):
    """The address answers as neither a Talkie server nor a Minara gateway."""


async def connect(
    address: str,
    *,
    protocol: ProtocolName | None = None,
    tokens: TokenSource | None = None,
    gateway_tokens: TokenSource | None = None,
    kept: KeptSignIn | None = None,
    allow_private_http: bool = False,
) -> Backend:
    """The backend of the server at `address`, signed in with `tokens`, else with `kept`
    (a Minara gateway with `gateway_tokens` when they are given: its own token variable).

    `protocol` forces the protocol. None finds it out: a Talkie manifest first, else a Minara
    gateway (`GET /healthz` answering `{"ok": true}`), else `NotAServer` saying what was found
    (or, when nothing answered at all, the TransportError saying so).
    Raises a `talkie_tui.core.errors.TalkieError` when the server cannot be reached, and
    UnauthorizedError when a gateway wants a token it was not given.
    """
    if protocol is not None and protocol not in PROTOCOLS:
        raise ValueError(f"no backend for the {protocol} protocol in this version")
    from .minara.backend import connect as connect_minara
    from .talkie.backend import connect as connect_talkie

    if protocol == "talkie":
        return await connect_talkie(
            address, tokens=tokens, kept=kept, allow_private_http=allow_private_http
        )
    minara_tokens = gateway_tokens or tokens
    if protocol == "minara":
        return await connect_minara(
            address, tokens=minara_tokens, kept=kept, allow_private_http=allow_private_http
        )
    try:
        return await connect_talkie(
            address, tokens=tokens, kept=kept, allow_private_http=allow_private_http
        )
    except AddressRefused:
        raise  # refused before anything was sent: a gateway's address obeys the same rules
    except (DiscoveryError, TransportError) as talkie_error:
        try:
            return await connect_minara(
                address, tokens=minara_tokens, kept=kept, allow_private_http=allow_private_http
            )
        except TalkieError as minara_error:
            found = what_answered(address, talkie_error, minara_error)
            if found is minara_error:
                raise
            raise found from minara_error


def looked_like_a_gateway(error: TalkieError) -> bool:
    """True when the gateway answered as one and then refused (a token, a server error)."""
    from talkie_tui.core.errors import ServerError

    return isinstance(error, ServerError) and error.code != "not_found" and error.status != 404


def what_answered(address: str, talkie: TalkieError, minara: TalkieError) -> TalkieError:
    """The error to show when neither look found a server: the gateway's own refusal when one
    answered as a gateway, the connection failure when nothing answered at all, else
    `NotAServer` with what each look found."""
    if looked_like_a_gateway(minara):
        return minara
    if isinstance(talkie, TransportError) and isinstance(minara, TransportError):
        return talkie  # nothing answered: there is no protocol to tell apart
    return not_a_server(address, talkie, minara)


def not_a_server(address: str, talkie: TalkieError, minara: TalkieError) -> NotAServer:
    """The error saying what each protocol's look at the address found."""
    return NotAServer(
        _("{address} is not a Talkie or Minara server. Talkie: {talkie} Minara: {minara}").format(
            address=address, talkie=talkie.message, minara=minara.message
        ),
        retryable=talkie.retryable or minara.retryable,
    )
