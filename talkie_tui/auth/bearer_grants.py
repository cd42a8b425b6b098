"""A bearer token kept like any sign-in: a Minara gateway's `GATEWAY_AUTH_TOKEN`.

It is kept in the same store as OAuth grants (keyring, private file or this session), under the
server's id, as a `bearer` grant for one origin: the token is handed back only for that origin,
so a kept token never reaches another server that took the same id.
"""

from __future__ import annotations

from talkie_tui.auth.grants import StoredGrant, TokenStore
from talkie_tui.auth.signin import find_grant
from talkie_tui.core.urls import origin_of

__all__ = ["BEARER_CLIENT", "find_bearer", "keep_bearer"]

BEARER_CLIENT = "talkie"
"""The `client_id` of a bearer grant: nobody issued it to a client; talkie was given it."""


def keep_bearer(store: TokenStore, server_id: str, origin: str, token: str) -> None:
    """Keep `token` for `server_id`, to be sent to `origin` only (replacing any earlier one)."""
    store.save(server_id, StoredGrant(token, origin_of(origin), BEARER_CLIENT, kind="bearer"))


def find_bearer(
    server_id: str, origin: str, preferred: TokenStore | None = None
) -> tuple[str, TokenStore] | None:
    """The token kept for `server_id` on `origin` and the store holding it, or None (also
    when the token kept is for another origin)."""
    found = find_grant(server_id, preferred, kind="bearer")
    if found is None:
        return None
    grant, store = found
    if grant.issuer != origin_of(origin):
        return None
    return grant.refresh_token, store
