"""Signing in to a server that takes a bearer token (a Minara gateway's `GATEWAY_AUTH_TOKEN`).

Used by the connect screen (the gateway answered 401) and by the app (a 401 mid-session). The
token kept for the gateway's origin is tried first; otherwise the token screen asks, tries the
token before it closes, and the token is kept like any sign-in: in the store the settings name
(the keyring; when there is none, the person chooses the private file or this session only).
Store calls may block (a keyring on D-Bus), so they run in threads; `push_screen_wait` needs
a Textual worker, so these methods must run inside one.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from textual.app import App

from talkie_tui.auth.bearer_grants import find_bearer, keep_bearer
from talkie_tui.auth.store import NoKeyringError, TokenStore, TokenStoreError, open_store
from talkie_tui.backends.base import Backend, ServerInfo
from talkie_tui.backends.minara.backend import MinaraBackend, gateway_name, minara_base
from talkie_tui.config import KnownServers, Settings
from talkie_tui.core.errors import UnauthorizedError
from talkie_tui.core.tokens import StaticToken
from talkie_tui.core.urls import origin_of
from talkie_tui.i18n import _
from talkie_tui.ui.screens.store_choice import StoreChoiceScreen
from talkie_tui.ui.screens.token_prompt import TokenScreen
from talkie_tui.ui.support.notify import notify_plain

__all__ = ["GatewayConnect", "GatewaySignIn", "gateway_identity", "gateway_origin"]

GatewayConnect = Callable[..., Awaitable[Backend]]
"""`(address, *, tokens, allow_private_http) -> Backend`: a gateway reached and signed in."""


def gateway_origin(address: str, *, allow_private_http: bool = False) -> str:
    """The origin a gateway address means (a bare `localhost` is port 8080)."""
    return origin_of(minara_base(address, allow_private_http=allow_private_http))


def gateway_identity(address: str, allow_private_http: bool = False) -> ServerInfo:
    """Who the gateway at `address` is before it let us in (its id, name and origin)."""
    origin = gateway_origin(address, allow_private_http=allow_private_http)
    return ServerInfo(origin, origin, "minara", gateway_name(origin), sign_in="token")


@dataclass
class GatewaySignIn:
    """The token sign-in of one app: the kept token, the token screen, where it is kept."""

    app: App[Any]
    settings: Settings
    known: KnownServers
    allow_private_http: bool = False

    async def open(
        self, address: str, refused: UnauthorizedError, connect: GatewayConnect
    ) -> Backend | None:
        """The gateway at `address` reached with `connect` and signed in: with its kept token,
        else with one the person gives (None when they cancel). `refused` is the gateway's
        answer without a token."""
        origin = gateway_origin(address, allow_private_http=self.allow_private_http)
        found = await asyncio.to_thread(self._kept, origin)
        reason = refused.message
        if found is not None:
            try:
                return await connect(
                    address, tokens=StaticToken(found), allow_private_http=self.allow_private_http
                )
            except UnauthorizedError as error:  # changed on the gateway: ask for the new one
                reason = _("The token kept for this gateway was refused: {error}").format(
                    error=error.message
                )
        reached: list[Backend] = []

        async def check(token: str) -> None:
            reached.append(
                await connect(
                    address, tokens=StaticToken(token), allow_private_http=self.allow_private_http
                )
            )

        asked = await self._ask(gateway_name(origin), origin, check, reason)
        if asked is None or not reached:
            return None
        backend = reached[-1]
        await self._keep(backend, *asked)
        return backend

    async def again(self, backend: MinaraBackend, reason: str) -> bool:
        """Ask for a new token for a gateway that refused the one in use; True once taken."""
        info = backend.info
        old = backend.client.tokens

        async def check(token: str) -> None:
            backend.use_tokens(StaticToken(token))
            try:
                await backend.account()
            except BaseException:
                backend.use_tokens(old)
                raise

        asked = await self._ask(info.name, info.origin, check, reason)
        if asked is None:
            return False
        await self._keep(backend, *asked)
        return True

    def _kept(self, origin: str) -> str | None:
        preferred: TokenStore | None = None
        with contextlib.suppress(TokenStoreError):
            preferred = open_store(self.settings.token_storage)
        found = find_bearer(origin, origin, preferred)
        return found[0] if found is not None else None

    async def _ask(
        self, name: str, origin: str, check: Callable[[str], Awaitable[None]], reason: str
    ) -> tuple[str, TokenStore] | None:
        """The token the person gave (and the gateway took), and where to keep it."""
        store = await self._store(name)
        if store is None:
            return None
        token: str | None = await self.app.push_screen_wait(
            TokenScreen(name, origin, check, reason=reason, kept_in=store.describe())
        )
        return (token, store) if token is not None else None

    async def _store(self, name: str) -> TokenStore | None:
        """The store the settings name; when the keyring is out, the one the person picks."""
        try:
            return await asyncio.to_thread(open_store, self.settings.token_storage)
        except NoKeyringError as problem:
            choice = await self.app.push_screen_wait(StoreChoiceScreen(name, problem.reason))
            if choice is None:
                return None
            self.settings.token_storage = choice
            return await asyncio.to_thread(open_store, choice)

    async def _keep(self, backend: Backend, token: str, store: TokenStore) -> None:
        info = backend.info
        try:
            await asyncio.to_thread(keep_bearer, store, info.server_id, info.origin, token)
        except (TokenStoreError, ValueError) as error:
            message = getattr(error, "message", str(error))
            notify_plain(
                self.app,
                _("Signed in for this session only: the token could not be kept ({error}).").format(
                    error=message
                ),
                severity="warning",
            )
            return
        with contextlib.suppress(OSError):
            self.known.set_signed_in(info.server_id, store.kind != "session")
