"""Signing in to a Talkie server: OAuth in the browser (§2.1), or a development token (§2.2).

After discovery the server's endpoints on other sites are accepted (or refused) by the person,
then a sign-in is attached: the development token given on the command line, else the kept
OAuth sign-in when it still works, else the person signs in (`Prompts.ask_browser`). A pasted
token is offered only behind the development switch. Signing out revokes the grant at the
authorization server (RFC 7009), then forgets it everywhere.

Only discovery is imported with this module: the OAuth flow, the token sources and talkie/1's
client come when a Talkie server answered (a gateway or a hub imports none of them).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Literal

from talkie_tui.backends.prompts import BrowserFlow, Prompts, Severity
from talkie_tui.backends.signing import (
    SignInFailed,
    SignInOptions,
    mark_signed_in,
    refused_reason,
    remember,
    say_signed_out,
    store_for,
)
from talkie_tui.backends.talkie.discovery import connect_client
from talkie_tui.config import Settings, settings_path
from talkie_tui.core.errors import TalkieError
from talkie_tui.core.sanitize import clean_text
from talkie_tui.core.tokens import StaticToken, TokenSource
from talkie_tui.i18n import _

if TYPE_CHECKING:
    from talkie_tui.auth.store import TokenStore
    from talkie_tui.auth.tokens import OAuthTokens
    from talkie_tui.backends.base import Backend
    from talkie_tui.protocol.talkie.client import TalkieClient
    from talkie_tui.protocol.talkie.manifest import DiscoveredServer

__all__ = ["Offer", "TalkieSignIn", "dev_tokens_refused", "offer_of"]

Offer = Literal["oauth", "dev_token", "dev_token_off", "open"]
"""How a person may sign in: OAuth in the browser, a pasted development token (the switch is
on), only a development token while the switch is off, or nothing needed at all."""


def offer_of(server: DiscoveredServer, settings: Settings) -> Offer:
    """What talkie may offer for `server`: OAuth first; a pasted token only behind the switch."""
    auth = server.manifest.auth
    if auth.oauth is not None:
        return "oauth"
    if auth.token is not None:
        return "dev_token" if settings.dev_tokens else "dev_token_off"
    return "open"


def dev_tokens_refused(server: DiscoveredServer) -> str:
    """Why talkie does not ask for a token here, and how to give one anyway (§2.2)."""
    name = clean_text(server.manifest.name)
    return _(
        "{name} only offers development tokens, and talkie asks for those only when you "
        "allow it: pass --token to talkie connect or talkie ask (or set TALKIE_TOKEN), or set "
        "dev_tokens = true in {path}."
    ).format(name=name, path=settings_path())


def _client_of(backend: Backend) -> TalkieClient | None:
    """The talkie/1 client of `backend`, when it is a Talkie server's."""
    from talkie_tui.backends import is_talkie

    return backend.client if is_talkie(backend) else None


@dataclass
class TalkieSignIn:
    """The sign-in of Talkie servers: the kept OAuth grant, the browser, a development token."""

    options: SignInOptions
    _declined: TalkieClient | None = None  # "not now" to a new sign-in: not pushed again

    @property
    def _settings(self) -> Settings:
        return self.options.settings

    async def reach(self, address: str, prompts: Prompts) -> Backend | None:
        """The Talkie server at `address`, its foreign endpoints accepted, signed in."""
        token = self.options.given.get("talkie")
        discover = self.options.discover or connect_client
        # No accepted origins yet: they belong to a serverId, known only after discovery
        # (the same address may now serve another server).
        client: TalkieClient = await discover(
            address,
            tokens=StaticToken(token) if token else None,
            allow_private_http=self.options.allow_private_http,
            accepted_origins=set(),
        )
        try:
            signed_in = await self._accept_foreign_endpoints(client.server, prompts)
            if signed_in:
                known = self.options.known
                remember(prompts, partial(known.remember, client.server, address))
                signed_in = await self._authenticate(client, bool(token), prompts)
        except Exception as error:  # words on the status line, never a crash
            await client.aclose()
            raise SignInFailed(error) from error
        except BaseException:
            # Cancelled (Esc, or a newer attempt): never leak the connection.
            await client.aclose()
            raise
        if not signed_in:
            await client.aclose()
            return None
        from talkie_tui.backends.talkie.backend import TalkieBackend

        return TalkieBackend(client)

    async def _authenticate(self, client: TalkieClient, given: bool, prompts: Prompts) -> bool:
        """Attach a sign-in to `client`; False (the reason said) when there is none.

        A token given on the command line wins. Otherwise OAuth: the kept sign-in when it
        still works, else the person signs in. A pasted token is offered only behind the
        development switch (§2.2).
        """
        if given:
            return True
        server = client.server
        name = clean_text(server.manifest.name)
        offer = offer_of(server, self._settings)
        if offer == "open":
            return True
        if offer == "dev_token_off":
            prompts.say("✗ " + dev_tokens_refused(server), kind="error")
            return False
        if offer == "oauth" and not self.options.anew:
            prompts.say(
                _("Checking your sign-in to {name}…").format(name=name), kind="busy", busy=True
            )
            try:
                stored = await self._stored(server, prompts)
            except TalkieError as error:
                prompts.say(
                    "✗ "
                    + _("Your sign-in to {name} could not be checked: {error}").format(
                        name=name, error=error.message
                    )
                    + f"\n{error.retry_hint}",
                    kind="error",
                )
                return False
            if stored is not None:
                client.tokens = stored
                return True
        prompts.say(_("Signing in to {name}…").format(name=name), kind="busy", busy=True)
        tokens = await self._ask(server, prompts)
        if tokens is None:
            prompts.say(_("Sign-in cancelled."), kind="info")
            prompts.changed()
            return False
        client.tokens = tokens
        prompts.changed()
        return True

    async def _accept_foreign_endpoints(self, server: DiscoveredServer, prompts: Prompts) -> bool:
        """Ask about endpoints on other origins not accepted before; True when all are allowed."""
        known = self.options.known
        server.accepted_origins |= known.accepted_origins(server.server_id)
        pending = {
            name: origin
            for name, origin in sorted(server.foreign_endpoints.items())
            if origin not in server.accepted_origins
        }
        if not pending:
            return True
        name = server.manifest.name
        prompts.say(
            _("{name} uses other sites; waiting for your answer…").format(name=name), kind="busy"
        )
        listing = "\n".join(f"  {endpoint}  →  {origin}" for endpoint, origin in pending.items())
        body = _(
            "{name} ({origin}) wants talkie to use these endpoints on other sites:\n\n"
            "{listing}\n\n"
            "Your sign-in token is never sent to them, but what you say to the agent may be. "
            "Accept only if you trust these sites."
        ).format(name=name, origin=server.origin, listing=listing)
        title = _("This server uses other sites")
        if not await prompts.confirm(title, body, accept=_("Accept"), refuse=_("Refuse")):
            origins = ", ".join(sorted(set(pending.values())))
            prompts.say(
                _(
                    "Not connected: you refused the endpoints of {name} on {origins}. "
                    "Talkie uses a server's endpoints on other sites only after you accept them; "
                    "connect again to be asked once more."
                ).format(name=name, origins=origins),
                kind="error",
            )
            return False
        origins_now = set(pending.values())
        server.accepted_origins |= origins_now
        try:
            known.accept_origins(server.server_id, origins_now)
        except OSError as error:
            prompts.tell(_("Could not save your choice: {error}").format(error=error), "warning")
        return True

    # --- the kept sign-in and a new one ---------------------------------------------------

    def _warn(self, prompts: Prompts) -> Callable[[str], None]:
        """A `warn` callback for the auth layer (called from a thread too)."""
        return lambda message: prompts.tell(clean_text(message), "warning")

    async def _preferred_store(self) -> TokenStore | None:
        """The store the settings name, or None when the keyring is unusable here."""
        from talkie_tui.auth.store import NoKeyringError, open_store

        try:
            return await asyncio.to_thread(open_store, self._settings.token_storage)
        except NoKeyringError:
            return None

    async def _stored(self, server: DiscoveredServer, prompts: Prompts) -> OAuthTokens | None:
        """The kept sign-in of `server` with a working access token, or None.

        Raises TalkieError when the authorization server cannot be reached: the sign-in may
        well be fine, so nobody is sent to the browser for a network problem.
        """
        from talkie_tui.auth.signin import tokens_for

        tokens = await asyncio.to_thread(
            tokens_for,
            server,
            client_id=self._settings.oauth_client_id,
            store=await self._preferred_store(),
            allow_private_http=self.options.allow_private_http,
            warn=self._warn(prompts),
        )
        if tokens is None:
            mark_signed_in(self.options.known, server.server_id, False)
            return None
        try:
            access = await tokens.token()  # refreshes: proves the grant is still accepted
        except BaseException:
            await tokens.aclose()
            raise
        if access is None:
            await tokens.aclose()
            mark_signed_in(self.options.known, server.server_id, False)
            return None
        mark_signed_in(self.options.known, server.server_id, tokens.store.kind != "session")
        return tokens

    async def _ask(
        self, server: DiscoveredServer, prompts: Prompts, *, reason: str = ""
    ) -> TokenSource | None:
        """The person signs in (after the store choice if needed); None when cancelled.

        For a server that offers only a development token, only that token is asked for, and
        only when the development switch is on.
        """
        from talkie_tui.auth.tokens import OAuthTokens

        offer = offer_of(server, self._settings)
        if offer not in ("oauth", "dev_token"):
            return None
        flow: Callable[[], BrowserFlow] | None = None
        if offer == "oauth":
            name = clean_text(server.manifest.name)
            store = await store_for(self._settings, name, prompts)
            if store is None:
                return None
            flow = self._flow_factory(server, store, prompts)
        result = await prompts.ask_browser(
            server,
            flow,
            offer_dev_token=self._settings.dev_tokens and server.manifest.auth.token is not None,
            reason=reason,
        )
        if isinstance(result, OAuthTokens) and result.store.kind == "session":
            # Kept in memory only: the server list on disk must not claim a sign-in that
            # ends with this process (the connect screen asks the session store itself).
            mark_signed_in(self.options.known, server.server_id, False)
        return result

    def _flow_factory(
        self, server: DiscoveredServer, store: TokenStore, prompts: Prompts
    ) -> Callable[[], BrowserFlow]:
        from talkie_tui.auth.signin import SignIn

        def new_flow() -> BrowserFlow:
            return SignIn(
                server,
                client_id=self._settings.oauth_client_id,
                store=store,
                known=self.options.known,
                allow_private_http=self.options.allow_private_http,
                warn=self._warn(prompts),
            )

        return new_flow

    # --- again, and signing out -----------------------------------------------------------

    def offers_sign_in(self, backend: Backend) -> bool:
        """Sign in again where the server offers OAuth or (behind the switch) a token."""
        client = _client_of(backend)
        return client is not None and offer_of(client.server, self._settings) in (
            "oauth",
            "dev_token",
        )

    def handles(self, backend: Backend) -> bool:
        """Whether `backend` is a Talkie server's (signed in and out here)."""
        return _client_of(backend) is not None

    async def again(
        self, backend: Backend, message: str, prompts: Prompts, *, asked: bool
    ) -> bool | None:
        """Sign in again in the browser: the server refused the sign-in (`message`), or the
        person asked; the new tokens replace the old ones on the client."""
        client = _client_of(backend)
        assert client is not None
        server = client.server
        name = clean_text(server.manifest.name)
        offer = offer_of(server, self._settings)
        if offer not in ("oauth", "dev_token"):
            advice = dev_tokens_refused(server) if offer == "dev_token_off" else ""
            text = _("{name} did not accept the sign-in: {message}").format(
                name=name, message=message
            )
            prompts.tell(f"{text} {advice}".strip(), "error")
            return None
        if not asked and self._declined is client:
            # The person said "not now": say what is wrong, but do not ask again.
            prompts.tell(
                _("Not signed in to {name}: {message} Sign in with Ctrl+P → Sign in.").format(
                    name=name, message=message
                ),
                "warning",
            )
            return None
        reason = "" if asked else refused_reason(name, message)
        tokens = await self._ask(server, prompts, reason=reason)
        if tokens is None:
            self._declined = client
            return False
        self._declined = None
        old, client.tokens = client.tokens, tokens
        close = getattr(old, "aclose", None)
        if old is not tokens and close is not None:
            with contextlib.suppress(Exception):  # the old source's connections: best effort
                await close()
        return True

    async def kept_in(self, backend: Backend) -> str | None:
        """Where the OAuth sign-in in use is kept ("" for a development token)."""
        from talkie_tui.auth.tokens import OAuthTokens

        client = _client_of(backend)
        tokens = client.tokens if client is not None else None
        if tokens is None:
            return None
        return tokens.store.describe() if isinstance(tokens, OAuthTokens) else ""

    async def sign_out(self, backend: Backend, prompts: Prompts) -> None:
        """Revoke the OAuth grant, then forget it (whatever revocation did); a development
        token is only forgotten."""
        from talkie_tui.auth.tokens import OAuthTokens

        client = _client_of(backend)
        assert client is not None
        tokens = client.tokens
        name = clean_text(client.server.manifest.name)
        if isinstance(tokens, OAuthTokens):
            prompts.say(_("Signing out of {name}…").format(name=name), kind="busy", busy=True)
            await self._revoke(client.server.server_id, name, tokens, prompts)
        elif isinstance(tokens, StaticToken):
            prompts.tell(_("Signed out: the development token is forgotten."))
        else:
            prompts.tell(_("Signed out."))

    async def _revoke(
        self, server_id: str, name: str, tokens: OAuthTokens, prompts: Prompts
    ) -> None:
        from talkie_tui.auth.signin import sign_out
        from talkie_tui.auth.store import TokenStoreError

        try:
            result = await sign_out(
                server_id,
                tokens=tokens,
                store=tokens.store,
                allow_private_http=self.options.allow_private_http,
            )
        except TokenStoreError as error:
            text = _("Signed out of {name}, but {error}.").format(name=name, error=error.message)
            severity: Severity = "error"
        else:
            text = _("Signed out of {name}. {details}").format(name=name, details=result.describe())
            severity = "warning" if result.problem else "information"
        mark_signed_in(self.options.known, server_id, False)
        say_signed_out(prompts, text, severity)
