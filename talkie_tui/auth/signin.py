"""Signing in to a Talkie server and signing out: the steps shared by `talkie login` and the TUI.

`SignIn` runs one authorization-code flow: it finds the authorization server, opens the
loopback receiver, and accepts the answer from whichever comes first: the browser reaching the
receiver, or the person pasting the URL their browser ended on (over SSH the redirect to
127.0.0.1 fails in the remote browser, but its address bar still holds the answer).
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field

import httpx

from talkie_tui.auth.errors import CallbackRejected, SignInCancelled, SignInError
from talkie_tui.auth.flow import PendingSignIn, begin_sign_in, read_callback
from talkie_tui.auth.grants import StoredGrant, TokenStore, TokenStoreError
from talkie_tui.auth.loopback import CallbackOutcome, LoopbackReceiver
from talkie_tui.auth.metadata import AuthServer, discover_auth_server
from talkie_tui.auth.store import ForgetIncomplete, find_grant, forget_everywhere
from talkie_tui.auth.token_requests import TokenSet, exchange_code, revoke_token
from talkie_tui.auth.tokens import OAuthTokens, Warn
from talkie_tui.config import KnownServers
from talkie_tui.core.errors import TalkieError
from talkie_tui.core.waiting import wait_within
from talkie_tui.i18n import _, ngettext
from talkie_tui.protocol.net.http import make_http_client
from talkie_tui.protocol.talkie.manifest import DiscoveredServer

__all__ = [
    "DEFAULT_SCOPES",
    "SIGN_IN_TIMEOUT",
    "SignIn",
    "SignOutResult",
    "find_grant",
    "sign_out",
    "tokens_for",
]

DEFAULT_SCOPES = ["talkie", "offline_access"]
SIGN_IN_TIMEOUT = 600.0  # ten minutes in the browser, then the port closes


def oauth_issuer(server: DiscoveredServer) -> str:
    """The authorization server the manifest names; SignInError when it offers no OAuth."""
    offer = server.manifest.auth.oauth
    if offer is None:
        raise SignInError(
            _(
                "{server} does not offer OAuth sign-in (its manifest has no auth.oauth); "
                "use the development token it describes, if any."
            ).format(server=server.manifest.name)
        )
    return offer.issuer


class SignIn:
    """One sign-in to one Talkie server, from the URL to open to the stored grant."""

    def __init__(
        self,
        server: DiscoveredServer,
        *,
        client_id: str,
        store: TokenStore,
        known: KnownServers | None = None,
        http: httpx.AsyncClient | None = None,
        allow_private_http: bool = False,
        warn: Warn | None = None,
    ) -> None:
        self.server = server
        self.client_id = client_id
        self.store = store
        self.known = known
        self._own_http = http is None
        self._http = http or make_http_client()
        self._allow_private_http = allow_private_http
        self._warn = warn or (lambda message: None)
        self._receiver = LoopbackReceiver(self.submit)
        self._pending: PendingSignIn | None = None
        self._answer: asyncio.Future[str] | None = None
        self.auth_server: AuthServer | None = None

    @property
    def authorization_url(self) -> str:
        """The page the person must open to sign in (after `start`)."""
        if self._pending is None:
            raise RuntimeError("SignIn.start() has not run")
        return self._pending.authorization_url

    @property
    def redirect_uri(self) -> str:
        """Where the browser comes back to: the loopback receiver."""
        return self._receiver.redirect_uri

    async def start(self) -> str:
        """Find the authorization server, open the receiver; returns the URL to open."""
        issuer = oauth_issuer(self.server)
        offer = self.server.manifest.auth.oauth
        scopes = list(offer.scopes) if offer and offer.scopes else list(DEFAULT_SCOPES)
        self.auth_server = await discover_auth_server(
            self._http, issuer, allow_private_http=self._allow_private_http
        )
        await self._receiver.start()
        self._answer = asyncio.get_running_loop().create_future()
        self._pending = begin_sign_in(
            self.auth_server,
            server_id=self.server.server_id,
            client_id=self.client_id,
            redirect_uri=self._receiver.redirect_uri,
            scopes=scopes,
        )
        return self._pending.authorization_url

    def submit(self, url: str) -> CallbackOutcome:
        """Take an answer (from the receiver or pasted): the outcome says what to show."""
        pending, answer = self._pending, self._answer
        if pending is None or answer is None or answer.done():
            return CallbackOutcome(
                False, _("This sign-in is over; return to talkie."), finished=False
            )
        try:
            code = read_callback(pending, url)
        except CallbackRejected as error:
            if error.code == "state_mismatch":
                # Maybe an old tab, maybe a forgery: either way this flow goes on waiting.
                return CallbackOutcome(False, error.message, finished=False)
            answer.set_exception(error)
            return CallbackOutcome(False, error.message, finished=True)
        except SignInError as error:
            answer.set_exception(error)
            return CallbackOutcome(False, error.message, finished=True)
        answer.set_result(code)
        return CallbackOutcome(
            True,
            _("You are signed in. You can close this tab and return to talkie."),
            finished=True,
        )

    async def wait(self, timeout: float = SIGN_IN_TIMEOUT) -> OAuthTokens:  # noqa: ASYNC109
        """Wait for the answer, trade it for tokens, keep the refresh token; the bearer source."""
        pending, answer = self._pending, self._answer
        if pending is None or answer is None:
            raise RuntimeError("SignIn.start() has not run")
        try:
            code = await wait_within(asyncio.shield(answer), timeout)
        except TimeoutError:
            minutes = int(timeout // 60)
            raise SignInCancelled(
                ngettext(
                    "Nobody finished signing in within {count} minute; the sign-in was stopped.",
                    "Nobody finished signing in within {count} minutes; the sign-in was stopped.",
                    minutes,
                ).format(count=minutes),
                retryable=True,
            ) from None
        finally:
            await self._receiver.close()
        tokens = await exchange_code(
            self._http,
            pending.auth_server.token_endpoint,
            client_id=self.client_id,
            code=code,
            verifier=pending.verifier,
            redirect_uri=pending.redirect_uri,
        )
        await asyncio.to_thread(self._keep, tokens, pending)
        return OAuthTokens(
            server_id=self.server.server_id,
            issuer=pending.auth_server.issuer,
            client_id=self.client_id,
            store=self.store,
            tokens=tokens,
            auth_server=pending.auth_server,
            allow_private_http=self._allow_private_http,
            warn=self._warn,
        )

    def _keep(self, tokens: TokenSet, pending: PendingSignIn) -> None:
        if tokens.refresh_token is None:
            self._warn(
                _(
                    "The sign-in server gave no refresh token, so this sign-in lasts only as long "
                    "as its access token; you will be asked to sign in again after that."
                )
            )
        else:
            grant = StoredGrant(
                tokens.refresh_token, pending.auth_server.issuer, self.client_id, pending.scope
            )
            try:
                self.store.save(self.server.server_id, grant)
            except (TokenStoreError, ValueError) as error:
                message = getattr(error, "message", str(error))
                self._warn(
                    _(
                        "Signed in, but the sign-in could not be kept in {store} ({error}); "
                        "you will need to sign in again next time."
                    ).format(store=self.store.describe(), error=message)
                )
        # A session-only sign-in ends with the process: the list on disk must not claim it.
        if self.known is not None and self.store.kind != "session":
            with contextlib.suppress(OSError):
                self.known.set_signed_in(self.server.server_id, tokens.refresh_token is not None)

    async def cancel(self) -> None:
        """Stop waiting and close the receiver."""
        answer = self._answer
        if answer is not None:
            if not answer.done():
                answer.set_exception(SignInCancelled(_("Sign-in cancelled.")))
            answer.exception()  # mark it retrieved: nobody may be waiting any more
        await self._receiver.close()

    async def aclose(self) -> None:
        """Cancel if still running and close the connections this sign-in opened."""
        await self.cancel()
        if self._own_http:
            await self._http.aclose()

    async def __aenter__(self) -> SignIn:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def tokens_for(
    server: DiscoveredServer,
    *,
    client_id: str,
    store: TokenStore | None,
    allow_private_http: bool = False,
    warn: Warn | None = None,
) -> OAuthTokens | None:
    """A bearer source from the stored sign-in of `server`, or None when there is none."""
    offer = server.manifest.auth.oauth
    if offer is None:
        return None
    found = find_grant(server.server_id, store)
    if found is None:
        return None
    grant, holder = found
    if grant.issuer != offer.issuer:
        return None  # the server moved to another authorization server: sign in again
    return OAuthTokens(
        server_id=server.server_id,
        issuer=offer.issuer,
        client_id=grant.client_id if grant.client_id else client_id,
        store=holder,
        allow_private_http=allow_private_http,
        warn=warn,
    )


@dataclass(frozen=True, slots=True)
class SignOutResult:
    """What sign-out did: whether the server revoked the grant, and where tokens were removed."""

    revoked: bool
    forgotten_from: list[str]
    problem: str = ""
    """Why the server did not revoke the sign-in, if it did not."""
    leftovers: list[str] = field(default_factory=list)
    """Stores that could not be cleared, with the reason."""

    def describe(self) -> str:
        """One or two sentences for the person."""
        if not (self.forgotten_from or self.revoked or self.problem or self.leftovers):
            return _("You were not signed in there.")
        parts = []
        if self.revoked:
            parts.append(_("The server revoked the sign-in."))
        elif self.problem:
            text = _("The server could not revoke the sign-in: {problem}")
            parts.append(text.format(problem=self.problem))
        if self.forgotten_from:
            stores = self.forgotten_from[0]
            for store in self.forgotten_from[1:]:
                stores = _("{first} and {second}").format(first=stores, second=store)
            parts.append(_("The tokens were removed from {stores}.").format(stores=stores))
        elif not self.leftovers:
            parts.append(_("No tokens were stored on this computer."))
        if self.leftovers:
            text = _("Could not remove them from {stores}.")
            parts.append(text.format(stores="; ".join(self.leftovers)))
        return " ".join(parts)


async def sign_out(
    server_id: str,
    *,
    tokens: OAuthTokens | None = None,
    store: TokenStore | None = None,
    known: KnownServers | None = None,
    http: httpx.AsyncClient | None = None,
    allow_private_http: bool = False,
) -> SignOutResult:
    """Revoke the grant where the server allows it (RFC 7009), then forget it whatever happened."""
    found = await asyncio.to_thread(
        find_grant, server_id, store or (tokens.store if tokens else None)
    )
    access = tokens.forget_access_token() if tokens else None
    revoked, problem = False, ""
    if found is not None or access:
        issuer = found[0].issuer if found else tokens.issuer if tokens else ""
        client_id = found[0].client_id if found else tokens.client_id if tokens else ""
        own_http = http is None
        client = http or make_http_client()
        try:
            auth_server = await discover_auth_server(
                client, issuer, allow_private_http=allow_private_http
            )
            if auth_server.revocation_endpoint is None:
                problem = _("it has no revocation endpoint.")
            else:
                # The refresh token first: revoking it ends the whole grant (RFC 7009 §2.1).
                if found is not None:
                    await revoke_token(
                        client,
                        auth_server.revocation_endpoint,
                        client_id=client_id,
                        token=found[0].refresh_token,
                    )
                if access:
                    await revoke_token(
                        client,
                        auth_server.revocation_endpoint,
                        client_id=client_id,
                        token=access,
                        hint="access_token",
                    )
                revoked = True
        except TalkieError as error:
            problem = error.message
        finally:
            if own_http:
                await client.aclose()
    leftovers: list[str] = []
    try:
        forgotten = await asyncio.to_thread(forget_everywhere, server_id)
    except ForgetIncomplete as error:
        forgotten, leftovers = error.removed, error.failures
    if known is not None:
        with contextlib.suppress(OSError):
            known.set_signed_in(server_id, False)
    return SignOutResult(revoked, forgotten, problem, leftovers)
