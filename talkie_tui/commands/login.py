"""`talkie login`, `talkie logout` and `talkie servers`: signing in from a plain terminal."""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import sys
import threading
from typing import TYPE_CHECKING, TextIO

from talkie_tui.auth.errors import SignInError
from talkie_tui.auth.signin import SignIn, oauth_issuer, sign_out
from talkie_tui.auth.store import NoKeyringError, TokenStore, TokenStoreError, open_store
from talkie_tui.browser import graphical_browser_available, open_url
from talkie_tui.commands.common import report_error
from talkie_tui.commands.servers import list_servers
from talkie_tui.config import KnownServers, Settings, gateway_token, settings_path
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


def _choose_store(
    settings: Settings, store_kind: str | None, stdin: TextIO, err: TextIO
) -> TokenStore | None:
    """The store to keep the sign-in in; asks (never silently) when there is no keyring."""
    try:
        return open_store(store_kind or settings.token_storage)
    except NoKeyringError as error:
        err.write(f"talkie: there is no usable system keyring here: {error.reason}\n")
    except TokenStoreError as error:
        err.write(f"talkie: {error.message}\n")
        return None
    advice = (
        "  Talkie can keep the sign-in in a file readable only by you instead; to choose it for "
        f'good, set token_storage = "file" in {settings_path()},\n'
        "  or run `talkie login SERVER --store file`.\n"
    )
    if not stdin.isatty():
        err.write(advice)
        return None
    err.write(advice)
    err.write("  Keep the sign-in in a private file this time? [y/N] ")
    err.flush()
    if stdin.readline().strip().lower() in ("y", "yes"):
        return open_store("file")
    return None


def _read_lines(stdin: TextIO, loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[str]) -> None:
    """Feed pasted lines to the event loop (a daemon thread: stdin reads cannot be cancelled)."""
    for line in stdin:
        loop.call_soon_threadsafe(queue.put_nowait, line)
    loop.call_soon_threadsafe(queue.put_nowait, "")


async def _take_pastes(sign_in: SignIn, stdin: TextIO, err: TextIO) -> None:
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[str] = asyncio.Queue()
    threading.Thread(target=_read_lines, args=(stdin, loop, queue), daemon=True).start()
    while True:
        line = await queue.get()
        if not line:
            return  # end of input: the loopback receiver may still finish the sign-in
        if not line.strip():
            continue
        outcome = sign_in.submit(line)
        if outcome.finished:
            return
        err.write(f"talkie: {outcome.message}\n  Paste the whole address again: ")
        err.flush()


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
    """Sign in to `server` (OAuth 2.1 + PKCE; a Minara gateway with its token) and keep the
    sign-in; returns the exit code. The streams default to the process's, as they are now."""
    stdin, out, err = stdin or sys.stdin, out or sys.stdout, err or sys.stderr
    settings = Settings.load()
    known = KnownServers.load()
    if protocol == "minara" or (protocol is None and known_gateway(known, server)):
        return await _login_gateway(
            server, settings, known, store_kind, allow_private_http, stdin, err
        )
    if protocol == "cuckoo" or (protocol is None and known_hub(known, server)):
        return await _login_hub(server, settings, known, store_kind, allow_private_http, stdin, err)
    try:
        client = await TalkieClient.connect(server, allow_private_http=allow_private_http)
    except AddressRefused as error:
        return report_error(error, server, err)
    except (DiscoveryError, TransportError) as error:
        if protocol == "talkie":
            return report_error(error, server, err)
        from talkie_tui.backends.cuckoo.backend import probe_hub

        if await probe_hub(server, allow_private_http=allow_private_http) is not None:
            return await _login_hub(
                server, settings, known, store_kind, allow_private_http, stdin, err
            )
        return await _login_gateway(
            server, settings, known, store_kind, allow_private_http, stdin, err
        )
    except TalkieError as error:
        return report_error(error, server, err)
    async with client:
        try:
            oauth_issuer(client.server)
        except SignInError as error:
            err.write(f"talkie: {error.message}\n")
            return ExitCode.USAGE
        store = _choose_store(settings, store_kind, stdin, err)
        if store is None:
            err.write("talkie: not signed in: there is nowhere to keep the sign-in.\n")
            return ExitCode.SIGN_IN_NEEDED
        with contextlib.suppress(OSError):
            known.remember(client.server, server)
        async with SignIn(
            client.server,
            client_id=settings.oauth_client_id,
            store=store,
            known=known,
            allow_private_http=allow_private_http,
            warn=lambda message: err.write(f"talkie: {message}\n"),
        ) as sign_in:
            try:
                url = await sign_in.start()
            except TalkieError as error:
                return _failed(error, err)
            name = clean_text(client.server.manifest.name)
            issuer = sign_in.auth_server.issuer if sign_in.auth_server else "its sign-in server"
            err.write(f"Signing in to {name} through {issuer}.\n")
            opened = False
            if not no_browser and graphical_browser_available():
                opened = await asyncio.to_thread(open_url, url)
            err.write(
                "Your browser should show the sign-in page now; if not, open this address:\n"
                if opened
                else "Open this address in a browser (on any computer) and sign in:\n"
            )
            out.write(url + "\n")
            out.flush()
            err.write(
                "Then come back here. If the browser ends on a page that cannot be reached "
                "(common over SSH), copy the whole address from its address bar and paste it "
                "here, then press Enter.\nWaiting for the sign-in (Ctrl+C cancels)…\n"
            )
            err.flush()
            pastes = asyncio.create_task(_take_pastes(sign_in, stdin, err))
            try:
                tokens = await sign_in.wait()
            except TalkieError as error:
                return _failed(error, err)
            finally:
                pastes.cancel()
            client.tokens = tokens
            who = ""
            with contextlib.suppress(TalkieError):
                status = await client.status()
                if status.user is not None:
                    who = f" as {clean_text(status.user.name or status.user.id)}"
            err.write(f"Signed in to {name}{who}. The sign-in is kept in {store.describe()}.\n")
    return ExitCode.OK


def known_gateway(known: KnownServers, server: str) -> bool:
    """True when `server` is a Minara gateway talkie connected to before."""
    entry = known.find(server)
    return entry is not None and entry.protocol == "minara"


def known_hub(known: KnownServers, server: str) -> bool:
    """True when `server` is a Cuckoo hub talkie connected to before."""
    entry = known.find(server)
    return entry is not None and entry.protocol == "cuckoo"


CODE_TRIES = 5
"""How many codes `talkie login` takes before it gives up (the hub allows five per code)."""


async def _ask(prompt: str, stdin: TextIO, err: TextIO) -> str:
    """One line typed at the terminal after `prompt` (on stderr); "" at the end of input."""
    err.write(prompt)
    err.flush()
    return (await asyncio.to_thread(stdin.readline)).strip()


async def _login_hub(
    server: str,
    settings: Settings,
    known: KnownServers,
    store_kind: str | None,
    allow_private_http: bool,
    stdin: TextIO,
    err: TextIO,
) -> int:
    """Sign in to a Cuckoo hub: the e-mail address, then the code the hub mails, both typed
    at the terminal; the session token is kept like every sign-in."""
    from talkie_tui import backends
    from talkie_tui.backends.cuckoo import sign_in
    from talkie_tui.backends.cuckoo.backend import HubSignInNeeded, hub_name

    try:
        backend = await backends.connect(
            server, protocol="cuckoo", allow_private_http=allow_private_http
        )
    except HubSignInNeeded as wanted:
        base, name = wanted.base, wanted.name
    except TalkieError as error:
        return report_error(error, server, err, protocol="cuckoo")
    else:
        base, name = backend.info.server_id, backend.info.name
        await backend.aclose()
    if not _isatty(stdin):
        err.write(
            f"talkie: signing in to {clean_text(name)} asks for your e-mail address and the "
            "code the hub sends, typed at a terminal; there is none here.\n"
            "  Run `talkie login` in a terminal, or pass a session token with --token or "
            "$CUCKOO_TOKEN.\n"
        )
        return ExitCode.SIGN_IN_NEEDED
    store = _choose_store(settings, store_kind, stdin, err)
    if store is None:
        err.write("talkie: not signed in: there is nowhere to keep the sign-in.\n")
        return ExitCode.SIGN_IN_NEEDED
    err.write(f"Signing in to {clean_text(name)} with your e-mail address.\n")
    email = await _ask("E-mail address: ", stdin, err)
    if not email:
        err.write("talkie: not signed in: no e-mail address was given.\n")
        return ExitCode.SIGN_IN_NEEDED
    try:
        await sign_in.start(base, email, allow_private_http=allow_private_http)
    except TalkieError as error:
        return report_error(error, server, err, protocol="cuckoo")
    err.write(
        f"The hub sends a {sign_in.CODE_DIGITS}-digit code to {clean_text(email)} (valid for "
        "ten minutes).\n"
    )
    signed: sign_in.SignedIn | None = None
    for _try in range(CODE_TRIES):
        code = await _ask("Code: ", stdin, err)
        if not code:
            err.write("talkie: not signed in: no code was given.\n")
            return ExitCode.SIGN_IN_NEEDED
        try:
            signed = await sign_in.verify(base, email, code, allow_private_http=allow_private_http)
            break
        except UnauthorizedError as refused:
            err.write(f"talkie: {clean_text(refused.message)} Type the code again.\n")
        except TalkieError as error:
            return report_error(error, server, err, protocol="cuckoo")
    if signed is None:
        err.write("talkie: not signed in: the code was not taken.\n")
        return ExitCode.SIGN_IN_NEEDED
    try:
        await asyncio.to_thread(sign_in.keep, store, signed)
    except TokenStoreError as error:
        err.write(f"talkie: the sign-in could not be kept: {error.message}\n")
        return ExitCode.FAILED
    name = hub_name(signed.base)
    with contextlib.suppress(OSError):
        known.remember_server(
            signed.hub_id, server, name=name, origin=signed.base, protocol="cuckoo"
        )
        known.set_signed_in(signed.hub_id, store.kind != "session")
    who = clean_text(signed.display_name or signed.user_id)
    err.write(
        f"Signed in to {clean_text(name)} as {who}. The sign-in is kept in {store.describe()}.\n"
    )
    return ExitCode.OK


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


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


def _read_token(stdin: TextIO, err: TextIO) -> str:
    """The gateway's token: asked without echo on a terminal, else the first line of stdin."""
    if stdin.isatty():
        return getpass.getpass("Gateway token (GATEWAY_AUTH_TOKEN): ", stream=err).strip()
    return stdin.readline().strip()


async def _login_gateway(
    server: str,
    settings: Settings,
    known: KnownServers,
    store_kind: str | None,
    allow_private_http: bool,
    stdin: TextIO,
    err: TextIO,
) -> int:
    """Sign in to a Minara gateway: its token ($MINARA_TOKEN, else asked), tried, then kept."""
    from talkie_tui import backends
    from talkie_tui.auth.bearer_grants import keep_bearer
    from talkie_tui.core.tokens import StaticToken

    try:
        backend = await backends.connect(
            server, protocol="minara", allow_private_http=allow_private_http
        )
    except UnauthorizedError as refused:
        err.write(f"talkie: {clean_text(refused.message)}\n")
    except TalkieError as error:
        return report_error(error, server, err, protocol="minara")
    else:
        name = clean_text(backend.info.name)
        await backend.aclose()
        err.write(f"{name} takes requests without a token: there is nothing to sign in to.\n")
        return ExitCode.OK
    token = gateway_token() or _read_token(stdin, err)
    if not token:
        err.write("talkie: not signed in: no token was given.\n")
        return ExitCode.SIGN_IN_NEEDED
    try:
        backend = await backends.connect(
            server,
            protocol="minara",
            tokens=StaticToken(token),
            allow_private_http=allow_private_http,
        )
    except TalkieError as error:
        return report_error(error, server, err, protocol="minara")
    info = backend.info
    await backend.aclose()
    store = _choose_store(settings, store_kind, stdin, err)
    if store is None:
        err.write("talkie: not signed in: there is nowhere to keep the token.\n")
        return ExitCode.SIGN_IN_NEEDED
    try:
        await asyncio.to_thread(keep_bearer, store, info.server_id, info.origin, token)
    except TokenStoreError as error:
        err.write(f"talkie: the token could not be kept: {error.message}\n")
        return ExitCode.FAILED
    with contextlib.suppress(OSError):
        known.remember_server(
            info.server_id, server, name=info.name, origin=info.origin, protocol="minara"
        )
        known.set_signed_in(info.server_id, store.kind != "session")
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
