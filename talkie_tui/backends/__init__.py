"""One backend per protocol behind one interface (`base.Backend`): what the UI talks to.

`connect` reaches a server in its protocol and returns its Backend; `detect` is how the
protocol is found out, for `connect` and for the sign-ins of `signing.reach` (the connect
screen's); `PROTOCOLS` are the ones this version speaks (the command line offers only these for
`--protocol`).
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeGuard, TypeVar

from talkie_tui.core.errors import AddressRefused, DiscoveryError, TalkieError, TransportError
from talkie_tui.core.lazy import is_loaded_instance
from talkie_tui.i18n import _

if TYPE_CHECKING:
    from talkie_tui.backends.base import Backend, KeptSignIn, ProtocolName
    from talkie_tui.backends.cuckoo.backend import CuckooBackend
    from talkie_tui.backends.minara.backend import MinaraBackend
    from talkie_tui.backends.talkie.backend import TalkieBackend
    from talkie_tui.core.tokens import TokenSource

__all__ = [
    "PROTOCOLS",
    "NotAServer",
    "connect",
    "detect",
    "is_gateway",
    "is_hub",
    "is_talkie",
    "looked_like_a_gateway",
    "looked_like_a_hub",
    "not_a_server",
    "what_answered",
]

T = TypeVar("T")

PROTOCOLS: tuple[ProtocolName, ...] = ("talkie", "minara", "cuckoo")
"""The protocols a backend exists for (the command line offers these for `--protocol`)."""


_BACKEND_CLASSES: dict[ProtocolName, tuple[str, str]] = {
    "talkie": ("talkie_tui.backends.talkie.backend", "TalkieBackend"),
    "minara": ("talkie_tui.backends.minara.backend", "MinaraBackend"),
    "cuckoo": ("talkie_tui.backends.cuckoo.backend", "CuckooBackend"),
}


def _backend_of(backend: object, protocol: ProtocolName) -> bool:
    return is_loaded_instance(backend, *_BACKEND_CLASSES[protocol])


def is_talkie(backend: object) -> TypeGuard[TalkieBackend]:
    """Whether `backend` is a Talkie server's (without importing talkie/1 to find out)."""
    return _backend_of(backend, "talkie")


def is_gateway(backend: object) -> TypeGuard[MinaraBackend]:
    """Whether `backend` is a Minara gateway's (without importing the Minara wire)."""
    return _backend_of(backend, "minara")


def is_hub(backend: object) -> TypeGuard[CuckooBackend]:
    """Whether `backend` is a Cuckoo hub's (without importing the Cuckoo wire)."""
    return _backend_of(backend, "cuckoo")


class NotAServer(DiscoveryError):
    """The address answers as none of a Talkie server, a Minara gateway or a Cuckoo hub."""


async def connect(
    address: str,
    *,
    protocol: ProtocolName | None = None,
    tokens: TokenSource | None = None,
    gateway_tokens: TokenSource | None = None,
    hub_tokens: TokenSource | None = None,
    kept: KeptSignIn | None = None,
    allow_private_http: bool = False,
) -> Backend:
    """The backend of the server at `address`, signed in with `tokens`, else with `kept`
    (a Minara gateway with `gateway_tokens` and a Cuckoo hub with `hub_tokens` when they are
    given: their own token variables).

    `protocol` forces the protocol; None finds it out (`detect`). Raises a
    `talkie_tui.core.errors.TalkieError` when the server cannot be reached, UnauthorizedError
    when a gateway wants a token it was not given, and `cuckoo.backend.HubSignInNeeded` (an
    UnauthorizedError) when a hub wants a person.
    """
    given: dict[ProtocolName, TokenSource | None] = {
        "talkie": tokens,
        "minara": gateway_tokens or tokens,
        "cuckoo": hub_tokens,
    }

    async def attempt(name: ProtocolName) -> Backend:
        return await _connect_with(
            name, address, tokens=given[name], kept=kept, allow_private_http=allow_private_http
        )

    return await detect(address, attempt, protocol=protocol)


async def detect(
    address: str,
    attempt: Callable[[ProtocolName], Awaitable[T]],
    *,
    protocol: ProtocolName | None = None,
) -> T:
    """`attempt` in `protocol`, else in the protocol the address speaks: the only discovery.

    None finds it out: a Talkie manifest first, else a Minara gateway (`GET /healthz`
    answering `{"ok": true}` and its sessions route), else a Cuckoo hub (`GET /healthz`, and
    `GET /v1/client/me` answering the person or the hub's 401), else `NotAServer` saying what
    was found (or, when nothing answered at all, the TransportError saying so). A gateway or a
    hub that answered as one and then refused ends the search with its refusal.
    """
    if protocol is not None:
        if protocol not in PROTOCOLS:
            raise ValueError(f"no backend for the {protocol} protocol in this version")
        return await attempt(protocol)
    try:
        return await attempt("talkie")
    except AddressRefused:
        raise  # refused before anything was sent: a gateway's address obeys the same rules
    except (DiscoveryError, TransportError) as talkie_error:
        try:
            return await attempt("minara")
        except TalkieError as minara_error:
            if looked_like_a_gateway(minara_error):
                raise
            try:
                return await attempt("cuckoo")
            except TalkieError as cuckoo_error:
                found = what_answered(address, talkie_error, minara_error, cuckoo_error)
                if found is cuckoo_error or found is minara_error:
                    raise
                raise found from cuckoo_error


async def _connect_with(protocol: ProtocolName, address: str, **options: Any) -> Backend:
    # The protocol's backend is imported only when it is tried: a gateway's session imports no
    # talkie/1 or Cuckoo wire when it is asked for by name.
    module = importlib.import_module(_BACKEND_CLASSES[protocol][0])
    backend: Backend = await module.connect(address, **options)
    return backend


def looked_like_a_gateway(error: TalkieError) -> bool:
    """True when the gateway answered as one and then refused (a token, a server error)."""
    from talkie_tui.core.errors import ServerError

    if isinstance(error, ServerError) and error.code == "route_not_found":
        return False  # a Cuckoo hub's answer to a gateway's route
    return isinstance(error, ServerError) and error.code != "not_found" and error.status != 404


def looked_like_a_hub(error: TalkieError) -> bool:
    """True when a hub answered as one and then refused (it wants a person signed in)."""
    from talkie_tui.backends.cuckoo.backend import HubSignInNeeded

    return isinstance(error, HubSignInNeeded)


def what_answered(
    address: str, talkie: TalkieError, minara: TalkieError, cuckoo: TalkieError | None = None
) -> TalkieError:
    """The error to show when no look found a server: the gateway's or the hub's own refusal
    when one answered as such, the connection failure when nothing answered at all, else
    `NotAServer` with what each look found."""
    if looked_like_a_gateway(minara):
        return minara
    if cuckoo is not None and looked_like_a_hub(cuckoo):
        return cuckoo
    looks = [talkie, minara] + ([cuckoo] if cuckoo is not None else [])
    if all(isinstance(error, TransportError) for error in looks):
        return talkie  # nothing answered: there is no protocol to tell apart
    return not_a_server(address, talkie, minara, cuckoo)


def not_a_server(
    address: str, talkie: TalkieError, minara: TalkieError, cuckoo: TalkieError | None = None
) -> NotAServer:
    """The error saying what each protocol's look at the address found."""
    retryable = talkie.retryable or minara.retryable
    if cuckoo is None:
        text = _(
            "{address} is not a Talkie, Minara or Cuckoo server. Talkie: {talkie} Minara: {minara}"
        ).format(address=address, talkie=talkie.message, minara=minara.message)
        return NotAServer(text, retryable=retryable)
    text = _(
        "{address} is not a Talkie, Minara or Cuckoo server. Talkie: {talkie} Minara: "
        "{minara} Cuckoo: {cuckoo}"
    ).format(address=address, talkie=talkie.message, minara=minara.message, cuckoo=cuckoo.message)
    return NotAServer(text, retryable=retryable or cuckoo.retryable)
