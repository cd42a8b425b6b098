"""Signing in from the TUI: what a server offers, the stored sign-in, where to keep a new one.

The connect screen (after discovery) and the app (when a request comes back 401 mid-session)
share these steps. Token-store calls may block (a keyring on D-Bus), so they run in threads;
the screens that ask the person something are pushed with `push_screen_wait`, so `Signer.ask`
must run inside a Textual worker.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from textual.app import App

from talkie_tui.auth.signin import SignIn, tokens_for
from talkie_tui.auth.store import NoKeyringError, TokenStore, open_store
from talkie_tui.auth.tokens import OAuthTokens
from talkie_tui.backends.talkie import DiscoveredServer
from talkie_tui.config import KnownServers, Settings
from talkie_tui.core.sanitize import clean_text
from talkie_tui.core.tokens import TokenSource
from talkie_tui.ui.screens.sign_in import SignInFlow, SignInScreen
from talkie_tui.ui.screens.store_choice import StoreChoiceScreen
from talkie_tui.ui.signin.sign_in_offer import Offer, dev_tokens_refused, offer_of
from talkie_tui.ui.support.notify import notify_plain

__all__ = [
    "Offer",
    "Signer",
    "dev_tokens_refused",
    "offer_of",
    "warn_in",
]


def warn_in(app: App[Any]) -> Callable[[str], None]:
    """A `warn` callback for the auth layer: a warning toast, from the loop or from a thread."""

    def warn(message: str) -> None:
        text = clean_text(message)
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # a worker thread: hand it to the app's loop
            app.call_from_thread(notify_plain, app, text, severity="warning")
        else:
            notify_plain(app, text, severity="warning")

    return warn


@dataclass
class Signer:
    """The sign-in steps for one app: stored sign-in, the store choice, the sign-in screen."""

    app: App[Any]
    settings: Settings
    known: KnownServers
    allow_private_http: bool = False

    async def preferred_store(self) -> tuple[TokenStore | None, NoKeyringError | None]:
        """The store the settings name, or None and the reason when the keyring is unusable."""
        try:
            return await asyncio.to_thread(open_store, self.settings.token_storage), None
        except NoKeyringError as error:
            return None, error

    async def stored(self, server: DiscoveredServer) -> OAuthTokens | None:
        """The stored sign-in of `server` with a working access token, or None.

        Raises TalkieError when the authorization server cannot be reached: the sign-in may
        well be fine, so nobody is sent to the browser for a network problem.
        """
        store, _problem = await self.preferred_store()
        tokens = await asyncio.to_thread(
            tokens_for,
            server,
            client_id=self.settings.oauth_client_id,
            store=store,
            allow_private_http=self.allow_private_http,
            warn=warn_in(self.app),
        )
        if tokens is None:
            self._mark(server.server_id, False)
            return None
        try:
            access = await tokens.token()  # refreshes: proves the grant is still accepted
        except BaseException:
            await tokens.aclose()
            raise
        if access is None:
            await tokens.aclose()
            self._mark(server.server_id, False)
            return None
        self._mark(server.server_id, tokens.store.kind != "session")
        return tokens

    async def choose_store(
        self, server: DiscoveredServer, problem: NoKeyringError
    ) -> TokenStore | None:
        """Ask where to keep the sign-in when there is no keyring; None when cancelled.

        The answer holds for the rest of this run (other servers are not asked again); it is
        written nowhere: the dialog says how to choose for good in config.toml.
        """
        choice = await self.app.push_screen_wait(
            StoreChoiceScreen(clean_text(server.manifest.name), problem.reason)
        )
        if choice is None:
            return None
        self.settings.token_storage = choice
        return await asyncio.to_thread(open_store, choice)

    async def ask(self, server: DiscoveredServer, *, reason: str = "") -> TokenSource | None:
        """Push the sign-in screen (after the store choice if needed); None when cancelled.

        Must run in a worker. For a server that offers only a development token, the screen
        asks for that token alone, and only when the development switch is on.
        """
        offer = offer_of(server, self.settings)
        if offer not in ("oauth", "dev_token"):
            return None
        factory: Callable[[], SignInFlow] | None = None
        if offer == "oauth":
            store, problem = await self.preferred_store()
            if store is None:
                assert problem is not None
                store = await self.choose_store(server, problem)
                if store is None:
                    return None
            factory = self._flow_factory(server, store)
        manifest = server.manifest
        result = await self.app.push_screen_wait(
            SignInScreen(
                server,
                factory,
                offer_dev_token=self.settings.dev_tokens and manifest.auth.token is not None,
                reason=reason,
            )
        )
        if isinstance(result, OAuthTokens) and result.store.kind == "session":
            # Kept in memory only: the server list on disk must not claim a sign-in that
            # ends with this process (the connect screen asks the session store itself).
            self._mark(server.server_id, False)
        return result

    def _flow_factory(self, server: DiscoveredServer, store: TokenStore) -> Callable[[], SignIn]:
        def new_flow() -> SignIn:
            return SignIn(
                server,
                client_id=self.settings.oauth_client_id,
                store=store,
                known=self.known,
                allow_private_http=self.allow_private_http,
                warn=warn_in(self.app),
            )

        return new_flow

    def _mark(self, server_id: str, signed_in: bool) -> None:
        with contextlib.suppress(OSError):
            self.known.set_signed_in(server_id, signed_in)
