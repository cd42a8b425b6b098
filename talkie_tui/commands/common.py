"""What every network command shares: connecting (with the stored sign-in), exit codes, errors."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, TextIO

from talkie_tui import backends
from talkie_tui.config import development_token, gateway_token, hub_token
from talkie_tui.core.errors import (
    DiscoveryError,
    ServerError,
    TalkieError,
    TransportError,
    UnauthorizedError,
)
from talkie_tui.core.exit_codes import ExitCode
from talkie_tui.core.sanitize import clean_text
from talkie_tui.core.tokens import StaticToken
from talkie_tui.i18n import _

if TYPE_CHECKING:
    from talkie_tui.auth.store import TokenStore
    from talkie_tui.backends.base import Backend, ProtocolName
    from talkie_tui.config import Settings

__all__ = [
    "connect",
    "connect_or_report",
    "keep_serving",
    "preferred_store",
    "report_error",
]


def _warn(message: str) -> None:
    print(f"talkie: {message}", file=sys.stderr)


def preferred_store(settings: Settings) -> TokenStore | None:
    """The token store the settings name, or None when it cannot be used here (no keyring)."""
    from talkie_tui.auth.store import TokenStoreError, open_store

    try:
        return open_store(settings.token_storage)
    except TokenStoreError:
        return None


async def connect(
    server: str,
    token: str | None,
    *,
    protocol: ProtocolName | None = None,
    allow_private_http: bool = False,
    settings: Settings | None = None,
) -> Backend:
    """The backend of `server`, signed in with the development token if there is one, else with
    the sign-in kept for it (in the token store the settings name).

    The development token is `token` (`--token`), else $TALKIE_TOKEN (`config.development_token`);
    a Minara gateway's is `token`, else $MINARA_TOKEN; a Cuckoo hub's session token is `token`,
    else $CUCKOO_TOKEN. `protocol` is `--protocol` (None: the server's own, found out by the
    backends).
    """
    for_gateway = gateway_token(token)
    for_hub = hub_token(token)
    token = development_token(token)
    kept = None
    if token is None or for_gateway is None or for_hub is None:
        # The token stores and the settings file only when a kept sign-in may be needed: a
        # run with --token (for every protocol) does without them.
        from talkie_tui.backends.base import KeptSignIn
        from talkie_tui.config import Settings

        chosen = settings or Settings.load()
        kept = KeptSignIn(lambda: preferred_store(chosen), chosen.oauth_client_id, warn=_warn)
    return await backends.connect(
        server,
        protocol=protocol,
        tokens=StaticToken(token) if token else None,
        gateway_tokens=StaticToken(for_gateway) if for_gateway else None,
        hub_tokens=StaticToken(for_hub) if for_hub else None,
        kept=kept,
        allow_private_http=allow_private_http,
    )


async def connect_or_report(
    server: str,
    token: str | None,
    err: TextIO,
    *,
    protocol: ProtocolName | None = None,
    allow_private_http: bool = False,
) -> Backend | ExitCode:
    """The backend of `server` (see `connect`), or the exit code once why it could not be
    reached was printed to `err`."""
    try:
        return await connect(
            server, token, protocol=protocol, allow_private_http=allow_private_http
        )
    except TalkieError as error:
        return report_error(error, server, err, protocol=protocol)


def refused_by(error: UnauthorizedError, protocol: ProtocolName | None) -> ProtocolName | None:
    """Which kind of server refused the token: `protocol` when it is known (forced, or the
    backend's), else a Minara gateway when the refusal came while `backends.connect` handled
    the failed look for a Talkie manifest (it tries a gateway only then); None: unknown."""
    if protocol is not None:
        return protocol
    if backends.looked_like_a_hub(error):
        return "cuckoo"
    context = error.__context__
    return "minara" if isinstance(context, DiscoveryError | TransportError) else None


def report_error(
    error: TalkieError,
    server: str,
    stream: TextIO | None = None,
    *,
    protocol: ProtocolName | None = None,
) -> ExitCode:
    """Print the server's own words, the code, and whether retrying helps; return the exit code.

    `protocol` is the server's when it is known, so a refused token is told how that kind of
    server takes one (a Talkie sign-in, a gateway's token). `stream` is stderr by default (the
    one of the moment it is called, not of the import)."""
    stream = stream or sys.stderr
    if isinstance(error, UnauthorizedError):
        print(f"talkie: sign-in needed: {error.message}", file=stream)
        if refused_by(error, protocol) == "minara":
            hint = _(
                "  Pass the gateway's token with --token or $MINARA_TOKEN, or enter it once "
                "in `talkie connect {server}`, which keeps it."
            )
            print(hint.format(server=clean_text(server)), file=stream)
        elif refused_by(error, protocol) == "cuckoo":
            hint = _(
                "  Sign in with `talkie login {server}` (your e-mail address, then the code "
                "the hub sends), or pass a session token with --token or $CUCKOO_TOKEN."
            )
            print(hint.format(server=clean_text(server)), file=stream)
        else:
            login = f"  Sign in with `talkie login {server}`, or pass a development token"
            print(f"{login} with --token.", file=stream)
        return ExitCode.SIGN_IN_NEEDED
    where = f" ({error.code}, HTTP {error.status})" if isinstance(error, ServerError) else ""
    print(f"talkie: {error.message}{where}", file=stream)
    print(f"  {error.retry_hint}", file=stream)
    return ExitCode.FAILED


def keep_serving(try_this: str) -> None:
    """Say what to try in another terminal, then keep the servers running until Ctrl+C."""
    print(f"{try_this}\nPress Ctrl+C to stop.", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        print("\nStopped.", file=sys.stderr)
