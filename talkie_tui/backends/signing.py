"""Signing in behind the backend: the `SignIn` each protocol has, and what they share.

A protocol's sign-in lives with its backend (`backends/<protocol>/sign_in.py`): it reaches the
server with the token given on the command line, else the sign-in kept for it, else one the
person gives; it signs in again when the server refuses the one in use; it signs out. It shows
nothing itself: it asks the person through `backends.prompts.Prompts`. `reach` is what the
connect screen calls: the one discovery (`backends.detect`) with each protocol's sign-in on the
way.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

from talkie_tui.backends import detect
from talkie_tui.core.errors import UnauthorizedError
from talkie_tui.i18n import _

if TYPE_CHECKING:
    from talkie_tui.auth.store import TokenStore
    from talkie_tui.backends.base import Backend, ProtocolName, ServerInfo
    from talkie_tui.backends.prompts import Prompts, Severity
    from talkie_tui.config import KnownServers, Settings
    from talkie_tui.core.tokens import TokenSource

__all__ = [
    "BearerSignIn",
    "SignIn",
    "SignInFailed",
    "SignInOptions",
    "mark_signed_in",
    "opened_or_cancelled",
    "refused_reason",
    "remember",
    "remember_info",
    "say_signed_out",
    "sign_in_for",
    "store_for",
]

_Reached = TypeVar("_Reached")


class SignInFailed(Exception):
    """The address speaks the protocol, but signing in failed: `error` says why (not a
    reason to try another protocol)."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error
        self.protocol: ProtocolName | None = None  # whose sign-in failed (set by `reach`)


@dataclass
class SignInOptions:
    """What every protocol's sign-in is given: the settings, the known servers, the tokens of
    the command line (by protocol), and the development switch for plain http."""

    settings: Settings
    known: KnownServers
    allow_private_http: bool = False
    given: dict[str, str | None] = field(default_factory=dict)
    discover: Callable[..., Awaitable[Any]] | None = None  # talkie/1's discovery (tests fix it)
    anew: bool = False
    """Sign in anew, never with the sign-in kept (`talkie login`: the person asked to)."""


@dataclass
class BearerSignIn:
    """What the sign-ins with a bearer token share (a gateway's, a hub's): their options, and
    that the person may sign in again, or out, whenever their backend is up."""

    options: SignInOptions
    backend_type: ClassVar[type]
    protocol: ClassVar[ProtocolName]
    refusal: ClassVar[type[UnauthorizedError]]  # the answer of a server that wants a sign-in

    @property
    def _private_http(self) -> bool:
        return self.options.allow_private_http

    async def reach(self, address: str, prompts: Prompts) -> Backend | None:
        """The server at `address` with the token given, else kept, else one the person gives."""
        prompts.say(self._looking(address), kind="busy", busy=True)
        given = self.options.given.get(self.protocol)
        try:
            backend = await self._connect(address, given)
        except self.refusal as refused:
            if given:  # the token given on the command line: say so, ask nothing
                raise SignInFailed(refused) from None
            identity, asking = self._wants(address, refused)
            prompts.say(asking, kind="busy")
            remember_info(self.options.known, identity, address, prompts)
            signed_in = await opened_or_cancelled(self._open(address, refused, prompts), prompts)
            if signed_in is None:
                prompts.changed()
                return None
            backend = signed_in
        remember_info(self.options.known, backend.info, address, prompts)
        return backend

    def _looking(self, address: str) -> str:
        """What is said while the server at `address` is looked for."""
        raise NotImplementedError

    async def _connect(self, address: str, token: str | None) -> Backend:
        """The server at `address`, signed in with `token` (None: none); `refusal` when it
        wants one."""
        raise NotImplementedError

    def _wants(self, address: str, refused: UnauthorizedError) -> tuple[ServerInfo, str]:
        """Who the server that `refused` is, before it let us in; what is said while asking."""
        raise NotImplementedError

    async def _open(
        self, address: str, refused: UnauthorizedError, prompts: Prompts
    ) -> Backend | None:
        """The server signed in with the token kept, else one the person gives (None when
        they cancel)."""
        raise NotImplementedError

    def handles(self, backend: Backend) -> bool:
        """Whether `backend` is of this sign-in's protocol."""
        return isinstance(backend, self.backend_type)

    def offers_sign_in(self, backend: Backend) -> bool:
        """A token can always be given again, or forgotten."""
        return self.handles(backend)

    def _tokens(self, backend: Backend) -> TokenSource | None:
        """The token source `backend` signs in with."""
        raise NotImplementedError

    async def kept_in(self, backend: Backend) -> str | None:
        """Where the token `backend` uses is kept ("" nowhere; None: it uses none)."""
        tokens = self._tokens(backend)
        token = await tokens.token() if tokens is not None else None
        if token is None:
            return None
        info = backend.info
        found = await asyncio.to_thread(self._kept, info.server_id, info.origin)
        return found[1].describe() if found is not None and found[0] == token else ""

    def _kept(self, server_id: str, origin: str) -> tuple[str, TokenStore] | None:
        """The token kept for the server, and its store (blocking: a keyring may be asked)."""
        from talkie_tui.auth.bearer_grants import find_bearer
        from talkie_tui.auth.store import TokenStoreError, open_store

        preferred: TokenStore | None = None
        with contextlib.suppress(TokenStoreError):
            preferred = open_store(self.options.settings.token_storage)
        return find_bearer(server_id, origin, preferred)

    async def _keep_token(
        self, store: TokenStore, info: ServerInfo, token: str, prompts: Prompts, failed: str
    ) -> None:
        """Keep `token` for the server `info` names; `failed` (with {error}) says it was not."""
        from talkie_tui.auth.bearer_grants import keep_bearer
        from talkie_tui.auth.store import TokenStoreError

        try:
            await asyncio.to_thread(keep_bearer, store, info.server_id, info.origin, token)
        except (TokenStoreError, ValueError) as error:
            message = getattr(error, "message", str(error))
            prompts.tell(failed.format(error=message), "warning")
            return
        mark_signed_in(self.options.known, info.server_id, store.kind != "session")


class SignIn(Protocol):
    """A protocol's sign-in: the kept credential, asking the person, again, signing out."""

    async def reach(self, address: str, prompts: Prompts) -> Backend | None:
        """The server at `address`, signed in with the token given, the kept sign-in, else one
        the person gives (None when they did not: `prompts` was told). Raises the protocol's
        TalkieError when the address does not speak it, `SignInFailed` when signing in failed.
        """
        ...

    def handles(self, backend: Backend) -> bool:
        """Whether `backend` is this sign-in's: the person may sign out of it here."""
        ...

    def offers_sign_in(self, backend: Backend) -> bool:
        """Whether the person may sign in to `backend` again (Ctrl+P → Sign in)."""
        ...

    async def again(
        self, backend: Backend, message: str, prompts: Prompts, *, asked: bool
    ) -> bool | None:
        """Sign in again: the server refused the sign-in in use (`message`), or the person
        asked. True once the new one is in use, False when they did not sign in, None when
        nothing was asked (`prompts` was told why)."""
        ...

    async def sign_out(self, backend: Backend, prompts: Prompts) -> None:
        """End the sign-in at the server where it can be, and forget it (the backend is
        closed already); `prompts` is told how it went."""
        ...

    async def kept_in(self, backend: Backend) -> str | None:
        """Where the sign-in `backend` uses is kept (a store's description); "" when it is
        kept nowhere (given, or it could not be kept); None when it uses none at all."""
        ...


_SIGN_INS: dict[str, tuple[str, str]] = {
    "talkie": ("talkie_tui.backends.talkie.sign_in", "TalkieSignIn"),
    "minara": ("talkie_tui.backends.minara.sign_in", "GatewaySignIn"),
    "cuckoo": ("talkie_tui.backends.cuckoo.sign_in", "HubSignIn"),
}


def sign_in_for(protocol: ProtocolName, options: SignInOptions) -> SignIn:
    """The sign-in of `protocol` (its module imported now: a session imports its own only)."""
    module, name = _SIGN_INS[protocol]
    sign_in: SignIn = getattr(importlib.import_module(module), name)(options)
    return sign_in


async def reach(
    address: str,
    *,
    protocol: ProtocolName | None,
    options: SignInOptions,
    prompts: Prompts,
) -> tuple[Backend, SignIn] | None:
    """The server at `address` (in `protocol`, else found out) signed in, with its sign-in;
    None when the person did not sign in (`prompts` was told why)."""

    async def attempt(name: ProtocolName) -> tuple[Backend, SignIn] | None:
        sign_in = sign_in_for(name, options)
        try:
            backend = await sign_in.reach(address, prompts)
        except SignInFailed as failed:
            failed.protocol = name
            raise
        return (backend, sign_in) if backend is not None else None

    return await detect(address, attempt, protocol=protocol)


async def store_for(settings: Settings, name: str, prompts: Prompts) -> TokenStore | None:
    """The store the settings name; when the keyring is out, the one the person picks (it
    holds for the rest of this run, written nowhere); None when they cancel."""
    from talkie_tui.auth.store import NoKeyringError, open_store

    try:
        return await asyncio.to_thread(open_store, settings.token_storage)
    except NoKeyringError as problem:
        choice = await prompts.choose_store(name, problem.reason)
        if choice is None:
            return None
        settings.token_storage = choice
        return await asyncio.to_thread(open_store, choice)


def remember(prompts: Prompts, record: Callable[[], object]) -> None:
    """Record a server in the known servers with `record` (connecting matters more than the
    list: a failure is only said), then show them again."""
    try:
        record()
    except OSError as error:
        prompts.tell(_("Could not save the server list: {error}").format(error=error), "warning")
    prompts.changed()


def remember_info(known: KnownServers, info: ServerInfo, address: str, prompts: Prompts) -> None:
    """Record the server `info` describes, reached at `address`, in the known servers."""
    remember(
        prompts,
        partial(
            known.remember_server,
            info.server_id,
            address,
            name=info.name,
            origin=info.origin,
            protocol=info.protocol,
        ),
    )


async def opened_or_cancelled(
    opening: Awaitable[_Reached | None], prompts: Prompts
) -> _Reached | None:
    """What `opening` signed in to; None, said, when the person cancelled; a failure (a store,
    the server) as `SignInFailed`, in words, never a crash."""
    try:
        reached = await opening
    except Exception as error:
        raise SignInFailed(error) from error
    if reached is None:
        prompts.say(_("Sign-in cancelled."), kind="info")
    return reached


def mark_signed_in(known: KnownServers, server_id: str, signed_in: bool) -> None:
    """Record whether a lasting sign-in is kept for the server (the list is only a hint)."""
    with contextlib.suppress(OSError):
        known.set_signed_in(server_id, signed_in)


def refused_reason(name: str, message: str) -> str:
    """Why the sign-in is asked for again: the server refused the one in use ("" when the
    person asked)."""
    if not message:
        return ""
    return _(
        "{name} did not accept your sign-in: {message} Sign in again to go on; the "
        "conversation and what you typed are kept."
    ).format(name=name, message=message)


def say_signed_out(prompts: Prompts, text: str, severity: Severity) -> None:
    """How signing out went: a toast, and the connect screen's status line."""
    prompts.tell(text, severity)
    prompts.changed()
    prompts.say(text, kind="info" if severity == "information" else "warning")
