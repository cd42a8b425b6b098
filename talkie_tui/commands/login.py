"""`talkie login`, `talkie logout` and `talkie servers`: signing in from a plain terminal."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, TextIO

from talkie_tui.auth.errors import SignInError
from talkie_tui.auth.signin import SignIn, oauth_issuer, sign_out
from talkie_tui.auth.store import TokenStore, TokenStoreError
from talkie_tui.backends.base import Backend, ServerInfo
from talkie_tui.backends.signing import store_for
from talkie_tui.commands.common import report_error
from talkie_tui.commands.servers import list_servers
from talkie_tui.commands.terminal_prompts import TerminalPrompts, isatty
from talkie_tui.config import KnownServers, Settings
from talkie_tui.core.errors import (
    AddressRefused,
    DiscoveryError,
    TalkieError,
    TransportError,
    UnauthorizedError,
)
from talkie_tui.core.exit_codes import ExitCode
from talkie_tui.core.sanitize import clean_text
from talkie_tui.protocol.talkie.client import TalkieClient

if TYPE_CHECKING:
    from talkie_tui.backends.base import ProtocolName

__all__ = ["list_servers", "login", "logout"]


@dataclass(frozen=True)
class _Login:
    """One `talkie login`: the server as typed, where sign-ins go, and the terminal to ask at."""

    server: str
    settings: Settings
    known: KnownServers
    store_kind: str | None
    allow_private_http: bool
    prompts: TerminalPrompts

    async def store(self, what: str = "sign-in") -> TokenStore | None:
        """The store to keep the sign-in in (`--store`, else the settings'); asks (never
        silently) when there is no keyring; None, said why, when there is nowhere to keep it."""
        err = self.prompts.err
        if self.store_kind:
            self.settings.token_storage = self.store_kind
        try:
            store = await store_for(self.settings, "", self.prompts)
        except TokenStoreError as error:
            err.write(f"talkie: {error.message}\n")
            store = None
        if store is None:
            err.write(f"talkie: not signed in: there is nowhere to keep the {what}.\n")
        return store


async def login(
    server: str,
    *,
    no_browser: bool = False,
    store_kind: str | None = None,
    allow_private_http: bool = False,
    protocol: ProtocolName | None = None,
    stdin: TextIO | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Sign in to `server` (OAuth 2.1 + PKCE; a Minara gateway with its token, a Cuckoo hub
    with an e-mailed code) and keep the sign-in; returns the exit code. The streams default
    to the process's, as they are now."""
    stdin, out, err = stdin or sys.stdin, out or sys.stdout, err or sys.stderr
    settings = Settings.load()
    known = KnownServers.load()
    prompts = TerminalPrompts(stdin, out, err, no_browser=no_browser)
    request = _Login(server, settings, known, store_kind, allow_private_http, prompts)

    async def login_in(protocol: ProtocolName) -> int:
        login_to = _login_gateway if protocol == "minara" else _login_hub
        return await login_to(request)

    if protocol == "minara" or (protocol is None and known_gateway(known, server)):
        return await login_in("minara")
    if protocol == "cuckoo" or (protocol is None and known_hub(known, server)):
        return await login_in("cuckoo")
    try:
        client = await TalkieClient.connect(server, allow_private_http=allow_private_http)
    except AddressRefused as error:
        return report_error(error, server, err)
    except (DiscoveryError, TransportError) as error:
        if protocol == "talkie":
            return report_error(error, server, err)
        from talkie_tui.backends.cuckoo.backend import probe_hub

        found_hub = await probe_hub(server, allow_private_http=allow_private_http) is not None
        return await login_in("cuckoo" if found_hub else "minara")
    except TalkieError as error:
        return report_error(error, server, err)
    async with client:
        try:
            oauth_issuer(client.server)
        except SignInError as error:
            err.write(f"talkie: {error.message}\n")
            return ExitCode.USAGE
        store = await request.store()
        if store is None:
            return ExitCode.SIGN_IN_NEEDED
        with contextlib.suppress(OSError):
            known.remember(client.server, server)

        def flow() -> SignIn:
            return SignIn(
                client.server,
                client_id=settings.oauth_client_id,
                store=store,
                known=known,
                allow_private_http=allow_private_http,
                warn=prompts.tell,
            )

        try:
            tokens = await prompts.ask_browser(
                client.server, flow, offer_dev_token=False, reason=""
            )
        except TalkieError as error:
            return _failed(error, err)
        client.tokens = tokens
        who = ""
        with contextlib.suppress(TalkieError):
            status = await client.status()
            if status.user is not None:
                who = f" as {clean_text(status.user.name or status.user.id)}"
        name = clean_text(client.server.manifest.name)
        err.write(f"Signed in to {name}{who}. The sign-in is kept in {store.describe()}.\n")
    return ExitCode.OK


def _remember(known: KnownServers, info: ServerInfo, address: str, store: TokenStore) -> None:
    """Record the server, and whether its sign-in lasts, in the known servers (a hint: not
    writing it does not undo the sign-in)."""
    with contextlib.suppress(OSError):
        known.remember_server(
            info.server_id, address, name=info.name, origin=info.origin, protocol=info.protocol
        )
        known.set_signed_in(info.server_id, store.kind != "session")


def known_gateway(known: KnownServers, server: str) -> bool:
    """True when `server` is a Minara gateway talkie connected to before."""
    entry = known.find(server)
    return entry is not None and entry.protocol == "minara"


def known_hub(known: KnownServers, server: str) -> bool:
    """True when `server` is a Cuckoo hub talkie connected to before."""
    entry = known.find(server)
    return entry is not None and entry.protocol == "cuckoo"


async def _login_hub(request: _Login) -> int:
    """Sign in to a Cuckoo hub: the e-mail address, then the code the hub mails, both typed
    at the terminal; the session token is kept like every sign-in."""
    from talkie_tui import backends
    from talkie_tui.backends.cuckoo import sign_in
    from talkie_tui.backends.cuckoo.backend import HubSignInNeeded, hub_name

    err = request.prompts.err
    try:
        backend = await backends.connect(
            request.server, protocol="cuckoo", allow_private_http=request.allow_private_http
        )
    except HubSignInNeeded as wanted:
        base, name = wanted.base, wanted.name
    except TalkieError as error:
        return report_error(error, request.server, err, protocol="cuckoo")
    else:
        base, name = backend.info.server_id, backend.info.name
        await backend.aclose()
    if not isatty(request.prompts.stdin):
        err.write(
            f"talkie: signing in to {clean_text(name)} asks for your e-mail address and the "
            "code the hub sends, typed at a terminal; there is none here.\n"
            "  Run `talkie login` in a terminal, or pass a session token with --token or "
            "$CUCKOO_TOKEN.\n"
        )
        return ExitCode.SIGN_IN_NEEDED
    store = await request.store()
    if store is None:
        return ExitCode.SIGN_IN_NEEDED
    codes = sign_in.EmailCodes(base, allow_private_http=request.allow_private_http)
    try:
        signed: sign_in.SignedIn | None = await request.prompts.ask_email_code(
            name, base, codes, reason="", kept_in=store.describe()
        )
    except TalkieError as error:
        return report_error(error, request.server, err, protocol="cuckoo")
    if signed is None:
        return ExitCode.SIGN_IN_NEEDED
    try:
        await asyncio.to_thread(sign_in.keep, store, signed)
    except TokenStoreError as error:
        err.write(f"talkie: the sign-in could not be kept: {error.message}\n")
        return ExitCode.FAILED
    name = hub_name(signed.base)
    _remember(
        request.known, ServerInfo(signed.hub_id, signed.base, "cuckoo", name), request.server, store
    )
    who = clean_text(signed.display_name or signed.user_id)
    err.write(
        f"Signed in to {clean_text(name)} as {who}. The sign-in is kept in {store.describe()}.\n"
    )
    return ExitCode.OK


async def _logout_hub(
    address: str, label: str, known: KnownServers, allow_private_http: bool, err: TextIO
) -> int:
    """End the session on the hub, then forget it (whatever the hub said)."""
    from talkie_tui.backends.cuckoo import sign_in

    try:
        result = await sign_in.sign_out(address, allow_private_http=allow_private_http)
    except TalkieError as error:
        return report_error(error, address, err, protocol="cuckoo")
    with contextlib.suppress(OSError):
        known.set_signed_in(result.hub_id, False)
    if result.ended:
        said = "The hub ended the session."
    elif result.problem:
        said = f"The hub could not be told ({clean_text(result.problem)})."
    else:
        said = "No session was kept for it."
    where = f" Forgotten in {', '.join(result.forgotten)}." if result.forgotten else ""
    err.write(f"Signed out of {clean_text(label)}. {said}{where}\n")
    return ExitCode.OK


async def _login_gateway(request: _Login) -> int:
    """Sign in to a Minara gateway: its token ($MINARA_TOKEN, else asked), tried, then kept."""
    from talkie_tui import backends
    from talkie_tui.auth.bearer_grants import keep_bearer
    from talkie_tui.backends.minara.sign_in import gateway_identity
    from talkie_tui.core.tokens import StaticToken

    err = request.prompts.err
    connect = partial(backends.connect, request.server, protocol="minara")
    try:
        backend = await connect(allow_private_http=request.allow_private_http)
    except UnauthorizedError as refused:
        reason = refused.message
    except TalkieError as error:
        return report_error(error, request.server, err, protocol="minara")
    else:
        name = clean_text(backend.info.name)
        await backend.aclose()
        err.write(f"{name} takes requests without a token: there is nothing to sign in to.\n")
        return ExitCode.OK
    reached: list[Backend] = []

    async def check(token: str) -> None:
        tokens = StaticToken(token)
        reached.append(await connect(tokens=tokens, allow_private_http=request.allow_private_http))

    gateway = gateway_identity(request.server, request.allow_private_http)
    try:
        token = await request.prompts.ask_token(
            gateway.name, gateway.origin, check, reason=reason, kept_in=""
        )
    except TalkieError as error:
        return report_error(error, request.server, err, protocol="minara")
    if token is None:
        return ExitCode.SIGN_IN_NEEDED
    info = reached[-1].info
    await reached[-1].aclose()
    store = await request.store("token")
    if store is None:
        return ExitCode.SIGN_IN_NEEDED
    try:
        await asyncio.to_thread(keep_bearer, store, info.server_id, info.origin, token)
    except TokenStoreError as error:
        err.write(f"talkie: the token could not be kept: {error.message}\n")
        return ExitCode.FAILED
    _remember(request.known, info, request.server, store)
    err.write(f"Signed in to {clean_text(info.name)}. The token is kept in {store.describe()}.\n")
    return ExitCode.OK


def _failed(error: TalkieError, err: TextIO) -> int:
    err.write(f"talkie: sign-in failed: {error.message}\n  {error.retry_hint}\n")
    return ExitCode.SIGN_IN_NEEDED if isinstance(error, SignInError) else ExitCode.FAILED


async def logout(server: str, *, allow_private_http: bool = False, err: TextIO = sys.stderr) -> int:
    """Revoke and forget the sign-in of `server` (known by address, or discovered)."""
    known = KnownServers.load()
    entry = known.find(server)
    if entry is not None and entry.protocol == "cuckoo":
        return await _logout_hub(
            entry.origin or entry.server_id, entry.label, known, allow_private_http, err
        )
    server_id = entry.server_id if entry else None
    if server_id is None:
        try:
            async with await TalkieClient.connect(
                server, allow_private_http=allow_private_http
            ) as client:
                server_id = client.server.server_id
        except TalkieError as error:
            from talkie_tui.backends.cuckoo.backend import hub_name, probe_hub

            base = await probe_hub(server, allow_private_http=allow_private_http)
            if base is not None:
                return await _logout_hub(base, hub_name(base), known, allow_private_http, err)
            err.write(
                f"talkie: {server} is not a known server and could not be reached "
                f"({error.message}); nothing was changed.\n"
            )
            return ExitCode.FAILED
    result = await sign_out(server_id, known=known, allow_private_http=allow_private_http)
    err.write(
        f"Signed out of {clean_text(entry.label if entry else server_id)}. {result.describe()}\n"
    )
    return ExitCode.OK
