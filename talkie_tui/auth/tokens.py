"""OAuthTokens: the bearer for one Talkie server, refreshed once on 401 and never replayed.

The access token lives in memory only. The refresh token lives in the token store and rotates
on every refresh, so refreshes are serialized: an asyncio lock within this process and a file
lock across processes. Whoever holds the lock reads the store first, so a second talkie never
replays a refresh token the first one already spent (which would revoke the whole grant).
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Callable
from pathlib import Path

import httpx
from filelock import AsyncFileLock
from filelock import Timeout as LockTimeout

from talkie_tui.auth.errors import GrantInvalid, SignInError
from talkie_tui.auth.grants import StoredGrant, TokenStore, TokenStoreError
from talkie_tui.auth.metadata import AuthServer, discover_auth_server
from talkie_tui.auth.token_requests import TokenSet, refresh_grant
from talkie_tui.config import ensure_private_dir, state_dir
from talkie_tui.i18n import _
from talkie_tui.protocol.net.http import make_http_client

__all__ = ["OAuthTokens", "refresh_lock_path"]

_LOCK_TIMEOUT = 60.0

Warn = Callable[[str], None]


def refresh_lock_path(server_id: str) -> Path:
    """The lock file that serializes refreshes for `server_id` across talkie processes."""
    digest = hashlib.sha256(server_id.encode("utf-8")).hexdigest()[:24]
    return ensure_private_dir(state_dir() / "locks") / f"refresh-{digest}.lock"


class OAuthTokens:
    """A `TokenSource` for one server signed in with OAuth (§2.1)."""

    def __init__(
        self,
        *,
        server_id: str,
        issuer: str,
        client_id: str,
        store: TokenStore,
        http: httpx.AsyncClient | None = None,
        tokens: TokenSet | None = None,
        auth_server: AuthServer | None = None,
        allow_private_http: bool = False,
        warn: Warn | None = None,
    ) -> None:
        self.server_id = server_id
        self.issuer = issuer
        self.client_id = client_id
        self.store = store
        self._http = http
        self._tokens = tokens
        self._auth_server = auth_server
        self._allow_private_http = allow_private_http
        self._warn = warn or (lambda message: None)
        self._lock = asyncio.Lock()
        # A refresh token we rotated but could not store: used while the store lags behind.
        self._unsaved: StoredGrant | None = None
        self._spent: set[str] = set()

    def __repr__(self) -> str:
        return f"OAuthTokens(server_id={self.server_id!r}, issuer={self.issuer!r})"

    @property
    def signed_in(self) -> bool:
        """True while there is an access token or a stored grant to get one from."""
        return self._tokens is not None or self._grant() is not None

    async def token(self) -> str | None:
        """The access token, refreshed first when it is about to expire; None when signed out."""
        tokens = self._tokens
        if tokens is not None and not tokens.expires_soon():
            return tokens.access_token
        return await self.refresh(tokens.access_token if tokens else "")

    async def refresh(self, rejected: str) -> str | None:
        """A new access token after `rejected` failed; None when the person must sign in again."""
        async with self._lock:
            current = self._tokens
            if (
                current is not None
                and current.access_token != rejected
                and not current.expires_soon()
            ):
                return current.access_token  # another task refreshed while we waited
            try:
                async with AsyncFileLock(
                    str(refresh_lock_path(self.server_id)), timeout=_LOCK_TIMEOUT
                ):
                    return await self._refresh_locked()
            except LockTimeout:
                raise SignInError(
                    _("Another talkie has been refreshing the sign-in for a minute; try again."),
                    retryable=True,
                ) from None

    async def _refresh_locked(self) -> str | None:
        # Keyring calls may block on D-Bus (or an unlock prompt): keep them off the event loop.
        grant = await asyncio.to_thread(self._grant)
        if grant is None:
            self._tokens = None
            return None
        if grant.issuer != self.issuer or grant.client_id != self.client_id:
            # The server now names another authorization server (or this build another
            # client): the old refresh token must not be sent there.
            self._tokens = None
            return None
        try:
            auth_server = await self._discover()
            fresh = await refresh_grant(
                self._client(),
                auth_server.token_endpoint,
                client_id=self.client_id,
                refresh_token=grant.refresh_token,
            )
        except GrantInvalid:
            self._tokens = None
            await asyncio.to_thread(self._forget, grant)
            return None
        self._spent.add(grant.refresh_token)
        self._tokens = fresh
        if fresh.refresh_token and fresh.refresh_token != grant.refresh_token:
            rotated = StoredGrant(fresh.refresh_token, grant.issuer, grant.client_id, grant.scope)
            await asyncio.to_thread(self._save, rotated)
        return fresh.access_token

    def _grant(self) -> StoredGrant | None:
        try:
            stored = self.store.load(self.server_id)
        except TokenStoreError as error:
            self._warn(
                _("Could not read the sign-in from {store}: {error}").format(
                    store=self.store.describe(), error=error.message
                )
            )
            stored = None
        if stored is not None and stored.kind != "refresh":
            stored = None  # a bearer token kept under this id is not a grant to refresh
        if self._unsaved is not None and (stored is None or stored.refresh_token in self._spent):
            return self._unsaved
        return stored

    def _save(self, grant: StoredGrant) -> None:
        try:
            self.store.save(self.server_id, grant)
            self._unsaved = None
        except (TokenStoreError, ValueError) as error:
            self._unsaved = grant
            message = getattr(error, "message", str(error))
            self._warn(
                _(
                    "Could not save the renewed sign-in in {store} ({error}); this session stays "
                    "signed in, the next one will ask you to sign in again."
                ).format(store=self.store.describe(), error=message)
            )

    def _forget(self, grant: StoredGrant) -> None:
        self._unsaved = None
        try:
            stored = self.store.load(self.server_id)
            if stored is not None and stored.refresh_token == grant.refresh_token:
                self.store.delete(self.server_id)
        except TokenStoreError:
            pass

    async def _discover(self) -> AuthServer:
        if self._auth_server is None or self._auth_server.issuer != self.issuer:
            self._auth_server = await discover_auth_server(
                self._client(), self.issuer, allow_private_http=self._allow_private_http
            )
        return self._auth_server

    def _client(self) -> httpx.AsyncClient:
        if self._http is None:
            # No redirects followed, proxies and CAs as everywhere; it never attaches a bearer.
            self._http = make_http_client()
        return self._http

    async def aclose(self) -> None:
        """Close the connections to the authorization server."""
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    def forget_access_token(self) -> str | None:
        """Drop the in-memory access token (sign-out); returns it so it can be revoked."""
        tokens, self._tokens = self._tokens, None
        return tokens.access_token if tokens else None

    def expires_in(self) -> float | None:
        """Seconds left of the access token, if known (for diagnostics; never the token)."""
        tokens = self._tokens
        if tokens is None or tokens.expires_at is None:
            return None
        return max(0.0, tokens.expires_at - time.monotonic())
