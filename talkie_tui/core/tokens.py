"""Where a bearer token comes from: what every protocol's client asks of sign-in.

A client holds a `TokenSource` and knows nothing else of sign-in (OAuth with refresh in
`talkie_tui.auth`, a pasted token here), so the wire layers need nothing from `auth/`.
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["StaticToken", "TokenSource"]


class TokenSource(Protocol):
    """Where the bearer token comes from (a pasted token, or OAuth with refresh)."""

    async def token(self) -> str | None:
        """The current access token, or None when signed out."""
        ...

    async def refresh(self, rejected: str) -> str | None:
        """A new token after `rejected` got a 401, or None when the user must sign in again."""
        ...


class StaticToken:
    """A development token pasted by the user (§2.2); it cannot be refreshed."""

    def __init__(self, value: str) -> None:
        self._value = value

    async def token(self) -> str | None:
        """The pasted token."""
        return self._value

    async def refresh(self, rejected: str) -> str | None:
        """A pasted token has no refresh."""
        return None

    def __repr__(self) -> str:
        return "StaticToken(***)"
