"""What every network command shares: connecting (with the stored sign-in), exit codes, errors."""

from __future__ import annotations

import asyncio
import sys
from typing import TextIO

from talkie_tui.auth.signin import tokens_for
from talkie_tui.auth.store import TokenStore, TokenStoreError, open_store
from talkie_tui.auth.tokens import OAuthTokens
from talkie_tui.config import Settings, development_token
from talkie_tui.core.errors import ServerError, TalkieError, UnauthorizedError
from talkie_tui.core.exit_codes import ExitCode
from talkie_tui.core.tokens import StaticToken
from talkie_tui.protocol.client import TalkieClient

__all__ = ["connect", "exit_code_for", "preferred_store", "report_error"]


def _warn(message: str) -> None:
    print(f"talkie: {message}", file=sys.stderr)


def preferred_store(settings: Settings) -> TokenStore | None:
    """The token store the settings name, or None when it cannot be used here (no keyring)."""
    try:
        return open_store(settings.token_storage)
    except TokenStoreError:
        return None


async def connect(
    server: str,
    token: str | None,
    *,
    allow_private_http: bool = False,
    settings: Settings | None = None,
) -> TalkieClient:
    """Discover `server`; attach the development token if there is one, else the stored sign-in.

    The development token is `token` (`--token`), else $TALKIE_TOKEN (`config.development_token`).
    """
    token = development_token(token)
    client = await TalkieClient.connect(
        server,
        tokens=StaticToken(token) if token else None,
        allow_private_http=allow_private_http,
    )
    if token is None:
        settings = settings or Settings.load()
        chosen = settings

        def stored_sign_in() -> OAuthTokens | None:
            return tokens_for(
                client.server,
                client_id=chosen.oauth_client_id,
                store=preferred_store(chosen),
                allow_private_http=allow_private_http,
                warn=_warn,
            )

        # Keyring look-ups may block on D-Bus: off the event loop.
        client.tokens = await asyncio.to_thread(stored_sign_in)
    return client


def exit_code_for(error: TalkieError) -> ExitCode:
    """SIGN_IN_NEEDED (3) when the user must sign in, FAILED (1) for every other failure."""
    return ExitCode.SIGN_IN_NEEDED if isinstance(error, UnauthorizedError) else ExitCode.FAILED


def report_error(error: TalkieError, server: str, stream: TextIO = sys.stderr) -> ExitCode:
    """Print the server's own words, the code, and whether retrying helps; return the exit code."""
    if isinstance(error, UnauthorizedError):
        print(f"talkie: sign-in needed: {error.message}", file=stream)
        print(
            f"  Sign in with `talkie login {server}`, or pass a development token with --token.",
            file=stream,
        )
        return ExitCode.SIGN_IN_NEEDED
    where = f" ({error.code}, HTTP {error.status})" if isinstance(error, ServerError) else ""
    print(f"talkie: {error.message}{where}", file=stream)
    print(f"  {error.retry_hint}", file=stream)
    return ExitCode.FAILED
