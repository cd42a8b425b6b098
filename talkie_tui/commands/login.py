"""`talkie login`, `talkie logout` and `talkie servers`: signing in from a plain terminal.

Both find the server as every command does (`backends.detect`, `backends.connect`) and leave
signing in and out to its protocol's sign-in (`backends.signing.sign_in_for`), which asks at
the terminal (`TerminalPrompts`); what stays here is the command's own: its arguments, what it
prints when done, and its exit code.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from typing import TYPE_CHECKING, TextIO

from talkie_tui import backends
from talkie_tui.auth.errors import SignInError
from talkie_tui.backends.base import KeptSignIn
from talkie_tui.backends.signing import (
    SignInFailed,
    SignInOptions,
    mark_signed_in,
    reach,
    sign_in_for,
)
from talkie_tui.commands.common import preferred_store, report_error
from talkie_tui.commands.servers import list_servers
from talkie_tui.commands.terminal_prompts import TerminalPrompts
from talkie_tui.config import KnownServers, Settings
from talkie_tui.core.errors import TalkieError, UnauthorizedError
from talkie_tui.core.exit_codes import ExitCode
from talkie_tui.core.sanitize import clean_text

if TYPE_CHECKING:
    from talkie_tui.backends.base import Backend, ProtocolName
    from talkie_tui.config import KnownServer

__all__ = ["list_servers", "login", "logout"]


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
    """Sign in to `server` anew (OAuth 2.1 + PKCE; a Minara gateway with its token, a Cuckoo
    hub with an e-mailed code) and keep the sign-in; returns the exit code. The streams default
    to the process's, as they are now."""
    stdin, out, err = stdin or sys.stdin, out or sys.stdout, err or sys.stderr
    settings = Settings.load()
    if store_kind:
        settings.token_storage = store_kind
    known = KnownServers.load()
    if protocol is None:
        protocol = _known_protocol(known, server)
    prompts = TerminalPrompts(stdin, out, err, no_browser=no_browser)
    options = SignInOptions(settings, known, allow_private_http, anew=True)
    try:
        reached = await reach(server, protocol=protocol, options=options, prompts=prompts)
    except SignInFailed as failed:
        return _failed(failed, server, err)
    except TalkieError as error:
        return report_error(error, server, err, protocol=protocol)
    if reached is None:
        return ExitCode.SIGN_IN_NEEDED  # the terminal was told why
    backend, sign_in = reached
    try:
        kept_in = await sign_in.kept_in(backend)
        who = await _who(backend) if kept_in else ""
    finally:
        await backend.aclose()
    name = clean_text(backend.info.name)
    if kept_in is None:
        err.write(f"{name} takes requests without a token: there is nothing to sign in to.\n")
        return ExitCode.OK
    if not kept_in:
        return ExitCode.FAILED  # signed in for now, kept nowhere: the sign-in said why
    what = "token" if backend.info.sign_in == "token" else "sign-in"
    err.write(f"Signed in to {name}{who}. The {what} is kept in {kept_in}.\n")
    return ExitCode.OK


def _known_protocol(known: KnownServers, server: str) -> ProtocolName | None:
    """The protocol of a gateway or hub talkie connected to before (they are not looked for
    again); None finds it out."""
    entry = known.find(server)
    if entry is not None and entry.protocol in ("minara", "cuckoo"):
        return "minara" if entry.protocol == "minara" else "cuckoo"
    return None


async def _who(backend: Backend) -> str:
    """ " as <the person>", when the server says who is signed in."""
    with contextlib.suppress(TalkieError):
        user = (await backend.account()).user
        if user is not None and (user.name or user.id):
            return f" as {clean_text(user.name or user.id)}"
    return ""


def _failed(failed: SignInFailed, server: str, err: TextIO) -> int:
    """Why signing in failed, in the words of the command that asked for it."""
    error = failed.error
    if not isinstance(error, TalkieError):
        message = getattr(error, "message", None) or str(error)
        err.write(f"talkie: sign-in failed: {message}\n")
        return ExitCode.FAILED
    if failed.protocol != "talkie":
        return report_error(error, server, err, protocol=failed.protocol)
    err.write(f"talkie: sign-in failed: {error.message}\n  {error.retry_hint}\n")
    return ExitCode.SIGN_IN_NEEDED if isinstance(error, SignInError) else ExitCode.FAILED


async def logout(server: str, *, allow_private_http: bool = False, err: TextIO = sys.stderr) -> int:
    """Revoke and forget the sign-in of `server`: reached with the sign-in kept for it, its
    protocol's sign-in signs out."""
    settings = Settings.load()
    known = KnownServers.load()
    prompts = TerminalPrompts(sys.stdin, sys.stdout, err)
    entry = known.find(server)
    kept = KeptSignIn(lambda: preferred_store(settings), settings.oauth_client_id, prompts.tell)
    try:
        backend = await backends.connect(
            entry.address if entry is not None else server,
            protocol=_known_protocol(known, server),
            kept=kept,
            allow_private_http=allow_private_http,
        )
    except TalkieError as error:
        if entry is not None and isinstance(error, UnauthorizedError):
            return await _forget(entry, known, err)
        if entry is not None:
            return await _sign_out_unreached(entry, known, error, allow_private_http, err)
        err.write(
            f"talkie: {server} is not a known server and could not be reached "
            f"({error.message}); nothing was changed.\n"
        )
        return ExitCode.FAILED
    await backend.aclose()
    options = SignInOptions(settings, known, allow_private_http)
    await sign_in_for(backend.info.protocol, options).sign_out(backend, prompts)
    return ExitCode.OK


async def _sign_out_unreached(
    entry: KnownServer,
    known: KnownServers,
    error: TalkieError,
    allow_private_http: bool,
    err: TextIO,
) -> int:
    """A known server that cannot be reached: a person signing out still wants nothing kept.
    A Talkie server's grant is revoked at its authorization server (which may well answer),
    then forgotten; a gateway's token or a hub's session is forgotten here (the hub ends it
    when it expires)."""
    if entry.protocol == "talkie":
        from talkie_tui.auth.signin import sign_out

        result = await sign_out(entry.server_id, known=known, allow_private_http=allow_private_http)
        err.write(f"Signed out of {clean_text(entry.label)}. {result.describe()}\n")
        return ExitCode.OK
    err.write(
        f"talkie: {clean_text(entry.label)} could not be reached ({error.message}): it was not "
        "told.\n"
    )
    return await _forget(
        entry,
        known,
        err,
        gone="Signed out of {label} here: the sign-in kept in {where} is forgotten.",
    )


async def _forget(
    entry: KnownServer,
    known: KnownServers,
    err: TextIO,
    *,
    gone: str = "Signed out of {label}: it no longer took the sign-in kept in {where}.",
) -> int:
    """Forget what is kept for a server that took none of it, or could not be told (`gone`
    says which): there is no sign-in in use to end there."""
    from talkie_tui.auth.store import ForgetIncomplete, forget_everywhere

    label = clean_text(entry.label)
    try:
        forgotten = await asyncio.to_thread(forget_everywhere, entry.server_id)
    except ForgetIncomplete as error:
        err.write(f"talkie: {label}: {error.message}\n")
        return ExitCode.FAILED
    mark_signed_in(known, entry.server_id, False)
    if forgotten:
        where = ", ".join(forgotten)
        err.write(gone.format(label=label, where=where) + "\n")
    else:
        err.write(f"Signed out of {label}: no sign-in was kept for it.\n")
    return ExitCode.OK
