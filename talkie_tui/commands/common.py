"""What every network command shares: connecting (with the stored sign-in), exit codes, errors."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import TextIO

from talkie_tui.auth.signin import tokens_for
from talkie_tui.auth.store import TokenStore, TokenStoreError, open_store
from talkie_tui.auth.tokens import OAuthTokens
from talkie_tui.config import Settings
from talkie_tui.core.errors import ServerError, TalkieError, UnauthorizedError
from talkie_tui.protocol.client import StaticToken, TalkieClient

__all__ = [
    "EXIT_ERROR",
    "EXIT_OK",
    "EXIT_SIGN_IN",
    "EXIT_USAGE",
    "connect",
    "exit_code_for",
    "preferred_store",
    "report_error",
]

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_SIGN_IN = 3


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
    """Discover `server`; attach the development token if given, else the stored sign-in."""
    token = token or os.environ.get("TALKIE_TOKEN") or None
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


def exit_code_for(error: TalkieError) -> int:
    """3 when the user must sign in, 1 for every other failure."""
    return EXIT_SIGN_IN if isinstance(error, UnauthorizedError) else EXIT_ERROR


def report_error(error: TalkieError, server: str, stream: TextIO = sys.stderr) -> int:
    """Print the server's own words, the code, and whether retrying helps; return the exit code."""
    if isinstance(error, UnauthorizedError):
        print(f"talkie: sign-in needed: {error.message}", file=stream)
        print(
            f"  Sign in with `talkie login {server}`, or pass a development token with --token.",
            file=stream,
        )
        return EXIT_SIGN_IN
    where = f" ({error.code}, HTTP {error.status})" if isinstance(error, ServerError) else ""
    print(f"talkie: {error.message}{where}", file=stream)
    print(f"  {error.retry_hint}", file=stream)
    return EXIT_ERROR
