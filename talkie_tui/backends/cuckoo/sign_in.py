"""Signing in to a Cuckoo hub with an e-mailed code: what a sign-in screen (or `talkie login`)
calls, in three steps.

    await sign_in.start(address, email)            # the hub mails a six-digit code
    signed = await sign_in.verify(address, email, code)   # the session token, for this device
    await asyncio.to_thread(sign_in.keep, store, signed)  # kept like every sign-in
    backend = await backends.connect(address, protocol="cuckoo", tokens=signed.tokens())

`address` is what the person typed (or `HubSignInNeeded.base`, which `connect` raises when the
hub wants a person). The hub answers `start` the same whether or not it knows the address. What
can go wrong comes as the hub's errors (`talkie_tui.core.errors`): `invalid_email` (422, a
ServerError with `field`), `too_many_codes` (429 RateLimitedError with `retry_after`: wait
before asking for another code), `invalid_code` (401 UnauthorizedError: wrong, used, expired or
guessed too often: ask again, or start over), and a TransportError when the hub cannot be
reached. A code is six digits, valid ten minutes, five tries.

The device is listed among the person's devices as `default_device_name()` ("talkie on
<host>") unless named. Signing out (`sign_out`) ends the session on the hub, then forgets the
token kept for it in every store.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from talkie_tui.backends.cuckoo.backend import hub_id, hub_name
from talkie_tui.core.errors import TalkieError, UnauthorizedError
from talkie_tui.core.tokens import StaticToken
from talkie_tui.protocol.cuckoo.client import CuckooClient, hub_base
from talkie_tui.protocol.cuckoo.client import default_device_name as _default_device_name

if TYPE_CHECKING:
    from talkie_tui.auth.store import TokenStore

__all__ = [
    "CODE_DIGITS",
    "SignedIn",
    "SignedOut",
    "default_device_name",
    "forget",
    "keep",
    "kept",
    "sign_out",
    "start",
    "verify",
]

CODE_DIGITS = 6


def default_device_name() -> str:
    """How this device is listed among the person's devices: "talkie on <host>"."""
    return _default_device_name()


@dataclass(frozen=True, slots=True)
class SignedIn:
    """A session the hub opened for this device: its token (shown nowhere) and the person."""

    base: str  # the hub's base URL
    token: str = field(repr=False)
    user_id: str
    display_name: str
    session_id: str
    expires_at: datetime | None = None
    is_new: bool = False  # the address had no account: the hub made one

    @property
    def hub_id(self) -> str:
        """The key the sign-in is kept under."""
        return hub_id(self.base)

    @property
    def hub_name(self) -> str:
        """How the hub is shown: "Cuckoo hub · host:port"."""
        return hub_name(self.base)

    def tokens(self) -> StaticToken:
        """The token as a backend takes it (`backends.connect(..., tokens=…)`)."""
        return StaticToken(self.token)


@dataclass(frozen=True, slots=True)
class SignedOut:
    """What `sign_out` did: whether the hub ended the session, and where the token was
    forgotten (`problem`: why the hub did not, when it did not)."""

    hub_id: str
    ended: bool
    forgotten: tuple[str, ...]
    problem: str = ""


def _client(address: str, allow_private_http: bool, token: str | None = None) -> CuckooClient:
    base = hub_base(address, allow_private_http=allow_private_http)
    tokens = StaticToken(token) if token else None
    return CuckooClient(base, tokens=tokens, allow_private_http=allow_private_http)


async def start(address: str, email: str, *, allow_private_http: bool = False) -> None:
    """Ask the hub at `address` to mail a sign-in code to `email`."""
    async with _client(address, allow_private_http) as client:
        await client.start_email_sign_in(email)


async def verify(
    address: str,
    email: str,
    code: str,
    *,
    device_name: str | None = None,
    allow_private_http: bool = False,
) -> SignedIn:
    """Trade the code for a session token for this device (named `device_name`, else
    "talkie on <host>"). Spaces and dashes in a pasted code are dropped."""
    digits = "".join(ch for ch in code if not ch.isspace() and ch != "-")
    async with _client(address, allow_private_http) as client:
        result = await client.verify_email_code(email, digits, device_name)
        base = client.base_url
    return SignedIn(
        base=base,
        token=result.token,
        user_id=result.user.id,
        display_name=result.user.display_name,
        session_id=result.session.id,
        expires_at=result.session.expires_at,
        is_new=result.is_new,
    )


def keep(store: TokenStore, signed_in: SignedIn) -> None:
    """Keep the session token in `store` (blocking: run it in a thread), for the hub's origin
    only, replacing an earlier one."""
    from talkie_tui.auth.bearer_grants import keep_bearer

    keep_bearer(store, signed_in.hub_id, signed_in.base, signed_in.token)


def kept(
    address: str, store: TokenStore | None = None, *, allow_private_http: bool = False
) -> str | None:
    """The session token kept for the hub at `address` (in `store` first), or None (blocking)."""
    from talkie_tui.auth.bearer_grants import find_bearer

    base = hub_base(address, allow_private_http=allow_private_http)
    found = find_bearer(hub_id(base), base, store)
    return found[0] if found is not None else None


def forget(hub: str) -> tuple[str, ...]:
    """Forget the token kept for the hub with id `hub` in every store (blocking); where."""
    from talkie_tui.auth.store import ForgetIncomplete, forget_everywhere

    try:
        return tuple(forget_everywhere(hub))
    except ForgetIncomplete as error:
        return tuple(error.removed)


async def sign_out(
    address: str,
    token: str | None = None,
    *,
    store: TokenStore | None = None,
    allow_private_http: bool = False,
) -> SignedOut:
    """End the session on the hub (`POST /v1/auth/logout` with `token`, else the kept one),
    then forget the kept token whatever the hub said (a session it no longer knows is over)."""
    base = hub_base(address, allow_private_http=allow_private_http)
    if token is None:
        token = await asyncio.to_thread(kept, base, store, allow_private_http=allow_private_http)
    ended, problem = False, ""
    if token:
        async with _client(base, allow_private_http, token) as client:
            try:
                await client.logout()
                ended = True
            except UnauthorizedError:
                ended = True  # the hub no longer knows it: it is over
            except TalkieError as error:
                problem = error.message
    forgotten = await asyncio.to_thread(forget, hub_id(base))
    return SignedOut(hub_id(base), ended, forgotten, problem)
