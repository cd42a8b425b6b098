"""Signing in to a Cuckoo hub from the app: the kept session, else the e-mail sign-in screen.

Used by the connect screen (the hub raised `HubSignInNeeded`), by the app (a 401 mid-session,
or Sign in from the palette) and by Sign out. The session kept for the hub's base URL is tried
first; otherwise the e-mail sign-in screen (`screens.email_sign_in` over `HubEmailCodes`) asks
for the address and the mailed code, and the session token is kept like any sign-in: in the
store the settings name (the keyring; when there is none, the person chooses the private file
or this session only). Signing out ends the session on the hub, then forgets the token in every
store. Store calls may block (a keyring on D-Bus), so they run in threads; `push_screen_wait`
needs a Textual worker, so these methods must run inside one.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual.app import App

from talkie_tui.auth.store import NoKeyringError, TokenStore, TokenStoreError, open_store
from talkie_tui.backends.cuckoo import sign_in
from talkie_tui.backends.cuckoo.backend import CuckooBackend, HubSignInNeeded
from talkie_tui.config import KnownServers, Settings
from talkie_tui.core.errors import UnauthorizedError
from talkie_tui.core.sanitize import clean_text
from talkie_tui.core.tokens import StaticToken, TokenSource
from talkie_tui.i18n import _
from talkie_tui.ui.screens.email_sign_in import EmailSignInScreen
from talkie_tui.ui.screens.store_choice import StoreChoiceScreen
from talkie_tui.ui.signin.hub_sign_in import HubEmailCodes
from talkie_tui.ui.support.notify import notify_plain

if TYPE_CHECKING:
    from talkie_tui.backends.base import Backend

__all__ = ["HubConnect", "HubSignIn", "connect_hub"]

HubConnect = Callable[..., Awaitable["Backend"]]
"""`(address, *, tokens, allow_private_http) -> Backend`: a hub reached and signed in."""


async def connect_hub(
    address: str, *, tokens: TokenSource | None = None, allow_private_http: bool = False
) -> Backend:
    """The hub at `address` signed in with `tokens` (`HubSignInNeeded` without a session)."""
    from talkie_tui import backends

    return await backends.connect(
        address, protocol="cuckoo", hub_tokens=tokens, allow_private_http=allow_private_http
    )


@dataclass
class HubSignIn:
    """The e-mail sign-in of one app: the kept session, the sign-in screen, where it is kept."""

    app: App[Any]
    settings: Settings
    known: KnownServers
    allow_private_http: bool = False

    async def open(
        self, address: str, wanted: HubSignInNeeded, connect: HubConnect
    ) -> Backend | None:
        """The hub at `address` reached with `connect` and signed in: with the session kept
        for it, else with one the person signs in for (None when they cancel). `wanted` is the
        hub's answer without a session."""
        base = wanted.base
        found = await asyncio.to_thread(self._kept, base)
        reason = wanted.message
        if found is not None:
            try:
                return await connect(
                    base, tokens=StaticToken(found), allow_private_http=self.allow_private_http
                )
            except UnauthorizedError as refused:  # ended elsewhere, or expired: sign in again
                reason = refused.message
        asked = await self._ask(base, wanted.name, reason)
        if asked is None:
            return None
        signed, store = asked
        backend = await connect(
            base, tokens=signed.tokens(), allow_private_http=self.allow_private_http
        )
        await self._keep(signed, store)
        return backend

    async def again(self, backend: CuckooBackend, reason: str) -> bool:
        """Sign in again to a hub that refused the session in use (or when the person asks);
        True once the new session is in use."""
        info = backend.info
        asked = await self._ask(backend.base, info.name, reason)
        if asked is None:
            return False
        signed, store = asked
        await backend.use_tokens(signed.tokens())
        await self._keep(signed, store)
        return True

    def _kept(self, base: str) -> str | None:
        preferred: TokenStore | None = None
        with contextlib.suppress(TokenStoreError):
            preferred = open_store(self.settings.token_storage)
        return sign_in.kept(base, preferred, allow_private_http=self.allow_private_http)

    async def _ask(
        self, base: str, name: str, reason: str
    ) -> tuple[sign_in.SignedIn, TokenStore] | None:
        """The session the person signed in for, and where to keep it."""
        store = await self._store(name)
        if store is None:
            return None
        codes = HubEmailCodes(base, allow_private_http=self.allow_private_http)
        signed: sign_in.SignedIn | None = await self.app.push_screen_wait(
            EmailSignInScreen(
                name, base.rstrip("/"), codes, reason=reason, kept_in=store.describe()
            )
        )
        return (signed, store) if signed is not None else None

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

    async def _keep(self, signed: sign_in.SignedIn, store: TokenStore) -> None:
        try:
            await asyncio.to_thread(sign_in.keep, store, signed)
        except (TokenStoreError, ValueError) as error:
            message = getattr(error, "message", str(error))
            text = _("Signed in for this session only: the sign-in could not be kept ({error}).")
            notify_plain(self.app, text.format(error=message), severity="warning")
            return
        with contextlib.suppress(OSError):
            self.known.set_signed_in(signed.hub_id, store.kind != "session")

    async def sign_out(self, backend: CuckooBackend) -> tuple[str, bool]:
        """End the session on the hub and forget it everywhere (the backend is closed by the
        caller first or after); what to say, and whether it all went well."""
        info = backend.info
        name = clean_text(info.name)
        tokens = backend.client.tokens
        token = await tokens.token() if tokens is not None else None
        result = await sign_in.sign_out(
            backend.base, token, allow_private_http=self.allow_private_http
        )
        with contextlib.suppress(OSError):
            self.known.set_signed_in(info.server_id, False)
        if result.ended:
            return _("Signed out of {name}: the session is ended and forgotten.").format(
                name=name
            ), True
        return _("Signed out of {name} here, but the hub did not end the session: {error}").format(
            name=name, error=clean_text(result.problem) or _("it could not be reached")
        ), False
