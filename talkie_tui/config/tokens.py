"""The tokens given on the command line or in the environment."""

from __future__ import annotations

import os

TOKEN_ENV = "TALKIE_TOKEN"  # noqa: S105 (the variable's name, not a token)
GATEWAY_TOKEN_ENV = "MINARA_TOKEN"  # noqa: S105 (the variable's name, not a token)
HUB_TOKEN_ENV = "CUCKOO_TOKEN"  # noqa: S105 (the variable's name, not a token)


def development_token(given: str | None = None) -> str | None:
    """The development token (§2.2) to use: `given` (`--token`) wins over $TALKIE_TOKEN.

    Surrounding whitespace is dropped (a token read from a file keeps its newline otherwise),
    and an empty value is no token, so `--token ""` falls back to the variable; None when
    neither gives one.
    """
    return _first_token(given, os.environ.get(TOKEN_ENV))


def gateway_token(given: str | None = None) -> str | None:
    """A Minara gateway's token to use: `given` (`--token`) wins over $MINARA_TOKEN (the
    value the gateway was started with as GATEWAY_AUTH_TOKEN); None when neither gives one."""
    return _first_token(given, os.environ.get(GATEWAY_TOKEN_ENV))


def hub_token(given: str | None = None) -> str | None:
    """A Cuckoo hub's session token to use: `given` (`--token`) wins over $CUCKOO_TOKEN; None
    when neither gives one (the sign-in kept for the hub is used then)."""
    return _first_token(given, os.environ.get(HUB_TOKEN_ENV))


def _first_token(*values: str | None) -> str | None:
    """The first value that holds a token, without surrounding whitespace."""
    for value in values:
        token = (value or "").strip()
        if token:
            return token
    return None
