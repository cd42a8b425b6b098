"""What a kept sign-in is: `StoredGrant`, the `TokenStore` interface, and their errors.

A grant is the refresh token and what it belongs to (issuer, client id, scope), as compact JSON
under 1000 characters, because Windows' Credential Manager takes about 1280. The access token is
never stored. Every store (memory, file, keyring) keeps one grant per Talkie `serverId`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from talkie_tui.i18n import _

__all__ = [
    "MAX_GRANT_CHARS",
    "GrantKind",
    "GrantTooLarge",
    "NoKeyringError",
    "StoredGrant",
    "TokenStore",
    "TokenStoreError",
    "check_server_id",
]

MAX_GRANT_CHARS = 1000
"""The longest grant JSON kept in a keyring entry (Windows allows about 1280 characters)."""

_GRANT_VERSION = 1


class TokenStoreError(Exception):
    """A sign-in could not be read, kept or removed; `message` says why in plain words."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NoKeyringError(TokenStoreError):
    """No system keyring that protects secrets is usable here; `reason` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(_("there is no usable system keyring: {reason}").format(reason=reason))
        self.reason = reason


class GrantTooLarge(TokenStoreError, ValueError):
    """The grant's JSON is longer than a keyring entry may safely be (`MAX_GRANT_CHARS`)."""

    def __init__(self, size: int) -> None:
        super().__init__(
            _(
                "the sign-in is {size} characters long, more than the {limit} a "
                "keyring entry may hold on every system"
            ).format(size=size, limit=MAX_GRANT_CHARS)
        )
        self.size = size


GrantKind = Literal["refresh", "bearer"]
"""An OAuth refresh token (traded for access tokens), or a bearer token used as it is (a
Minara gateway's `GATEWAY_AUTH_TOKEN`: `issuer` is then the one origin it is sent to)."""


@dataclass(frozen=True, slots=True)
class StoredGrant:
    """A refresh token and what it belongs to: enough to get a new access token silently.

    A `bearer` grant holds the token itself in `refresh_token`, for the origin `issuer`.
    """

    # Kept out of repr so a grant in a log line or a traceback does not leak the token.
    refresh_token: str = field(repr=False)
    issuer: str
    client_id: str
    scope: str = ""
    kind: GrantKind = "refresh"

    def to_dict(self) -> dict[str, Any]:
        """The grant as a JSON object (what both the keyring entry and the file hold)."""
        data: dict[str, Any] = {
            "v": _GRANT_VERSION,
            "refresh_token": self.refresh_token,
            "issuer": self.issuer,
            "client_id": self.client_id,
            "scope": self.scope,
        }
        if self.kind != "refresh":  # grants kept before bearer tokens existed read the same
            data["kind"] = self.kind
        return data

    def to_json(self) -> str:
        """Compact JSON for one keyring entry; GrantTooLarge when over `MAX_GRANT_CHARS`."""
        # ASCII only, so characters, UTF-8 bytes and UTF-16 units (Windows) all count the same.
        text = json.dumps(self.to_dict(), separators=(",", ":"), ensure_ascii=True)
        if len(text) > MAX_GRANT_CHARS:
            raise GrantTooLarge(len(text))
        return text

    @classmethod
    def from_dict(cls, data: object) -> StoredGrant | None:
        """The grant in a decoded JSON object, or None when it is not a usable grant."""
        if not isinstance(data, dict) or data.get("v", _GRANT_VERSION) != _GRANT_VERSION:
            return None
        texts = [data.get(key) for key in ("refresh_token", "issuer", "client_id")]
        scope = data.get("scope", "")
        kind = data.get("kind", "refresh")
        if not all(isinstance(text, str) and text for text in texts) or not isinstance(scope, str):
            return None
        if kind not in ("refresh", "bearer"):
            return None
        refresh_token, issuer, client_id = texts
        return cls(str(refresh_token), str(issuer), str(client_id), scope, kind)

    @classmethod
    def from_json(cls, text: str) -> StoredGrant | None:
        """The grant in `text`, or None for unusable or corrupt content; never raises."""
        try:
            data = json.loads(text)
        except (TypeError, ValueError, RecursionError):
            return None
        return cls.from_dict(data)


class TokenStore(Protocol):
    """Somewhere a grant per server is kept: the keyring, a private file or memory."""

    kind: str
    """"keyring", "file" or "session", as in `Settings.token_storage`."""

    def describe(self) -> str:
        """Where the grants are, in words for the user."""
        ...

    def load(self, server_id: str) -> StoredGrant | None:
        """The grant kept for `server_id`, or None (also when what is kept is unusable)."""
        ...

    def save(self, server_id: str, grant: StoredGrant) -> None:
        """Keep `grant` for `server_id`, replacing any earlier one."""
        ...

    def delete(self, server_id: str) -> None:
        """Remove the grant of `server_id`; nothing happens when there is none."""
        ...


def check_server_id(server_id: str) -> None:
    """ValueError when `server_id` is empty: every grant belongs to a server."""
    if not server_id:
        raise ValueError("a server id is required to keep a sign-in")
