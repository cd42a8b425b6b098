"""Bearer-token check for the protected endpoints: the §2.2 dev token and OAuth access tokens.

OAuth access tokens are checked with the authorization server on every request through RFC 7662
introspection, so a revoked token is refused at once. The AS metadata (RFC 8414) is discovered
on the first request that needs it and again after a failed attempt. Tokens are never logged.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import httpx
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from talkie_tui.devserver.common.http import bearer_token
from talkie_tui.devserver.talkie.config import ServerConfig
from talkie_tui.devserver.talkie.errors import ApiError, Unavailable

logger = logging.getLogger(__name__)

PROTECTED_PREFIXES = ("/api/talkie/", "/api/files/")
REQUIRED_SCOPE = "talkie"
AS_TIMEOUT = 5.0
# Where the handlers find the signed-in user: `scope["state"][USER_STATE_KEY]`.
USER_STATE_KEY = "talkie_user"

CHALLENGE = 'Bearer realm="talkie"'


class InvalidToken(Exception):
    """The AS says the token is not (or no longer) good for this server."""


class AuthServerUnavailable(Exception):
    """The AS could not be asked: unreachable, misconfigured, or answering with errors."""


@dataclass(frozen=True)
class SignedInUser:
    """Who an accepted token belongs to, as `GET status` reports it."""

    id: str
    name: str


def discovery_urls(issuer: str) -> list[str]:
    """RFC 8414 metadata URLs for `issuer`, then the OpenID Connect ones, in the order to try."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")

    def at(well_known: str) -> str:
        return urlunsplit((parts.scheme, parts.netloc, well_known, "", ""))

    urls = [at(f"/.well-known/oauth-authorization-server{path}")]
    urls.append(f"{issuer.rstrip('/')}/.well-known/openid-configuration")
    if path:  # RFC 8414 §5 also allows inserting the OIDC suffix before the issuer's path
        urls.append(at(f"/.well-known/openid-configuration{path}"))
    return urls


class OAuthIntrospection:
    """Checks OAuth access tokens with the AS's RFC 7662 introspection endpoint."""

    def __init__(
        self,
        issuer: str,
        client_id: str,
        client_secret: str,
        *,
        audience: str | None = None,
        timeout: float = AS_TIMEOUT,
    ) -> None:
        self.issuer = issuer
        self.audience = audience
        # RFC 6749 §2.3.1: form-encode the credentials before they go into HTTP Basic.
        self._auth = httpx.BasicAuth(quote(client_id, safe=""), quote(client_secret, safe=""))
        self._timeout = timeout
        self._client: httpx.AsyncClient | None = None
        self._introspection_endpoint: str | None = None
        self._discovery_lock: asyncio.Lock | None = None

    @classmethod
    def from_config(cls, config: ServerConfig) -> OAuthIntrospection | None:
        """The checker `config` asks for, or None when OAuth tokens cannot be checked."""
        if not (config.oauth_issuer and config.oauth_client_id and config.oauth_client_secret):
            if config.oauth_issuer:
                logger.warning(
                    "OAuth issuer %s is published, but without introspection credentials "
                    "(oauth_client_id, oauth_client_secret) its access tokens cannot be checked",
                    config.oauth_issuer,
                )
            return None
        return cls(
            config.oauth_issuer,
            config.oauth_client_id,
            config.oauth_client_secret,
            audience=config.oauth_audience,
        )

    def _http(self) -> httpx.AsyncClient:
        # Created lazily so it belongs to the event loop the server runs on.
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self._timeout, follow_redirects=False)
        return self._client

    async def aclose(self) -> None:
        """Close the connection pool to the AS."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def _endpoint(self) -> str:
        if self._introspection_endpoint is not None:
            return self._introspection_endpoint
        if self._discovery_lock is None:
            self._discovery_lock = asyncio.Lock()
        async with self._discovery_lock:  # one discovery at a time, not one per waiting request
            if self._introspection_endpoint is None:
                # Not cached on failure: the next request tries again.
                self._introspection_endpoint = await self._discover()
        return self._introspection_endpoint

    async def _discover(self) -> str:
        for url in discovery_urls(self.issuer):
            try:
                response = await self._http().get(url, headers={"Accept": "application/json"})
            except httpx.HTTPError as exc:
                raise AuthServerUnavailable(f"cannot reach {url}: {type(exc).__name__}") from exc
            if response.status_code != 200:
                continue
            try:
                metadata = response.json()
            except ValueError:
                continue
            if not isinstance(metadata, dict):
                continue
            # RFC 8414 §3.3: metadata for another issuer must not be used.
            if metadata.get("issuer") != self.issuer:
                raise AuthServerUnavailable(
                    f"{url} names issuer {metadata.get('issuer')!r}, not {self.issuer!r}"
                )
            endpoint = metadata.get("introspection_endpoint")
            if not isinstance(endpoint, str) or not endpoint:
                raise AuthServerUnavailable(f"{url} has no introspection_endpoint")
            return endpoint
        raise AuthServerUnavailable(f"no authorization server metadata for {self.issuer}")

    async def validate(self, token: str) -> SignedInUser:
        """The user `token` belongs to; raises InvalidToken or AuthServerUnavailable."""
        endpoint = await self._endpoint()
        try:
            response = await self._http().post(
                endpoint,
                data={"token": token, "token_type_hint": "access_token"},
                auth=self._auth,
                headers={"Accept": "application/json"},
            )
        except httpx.HTTPError as exc:
            raise AuthServerUnavailable(f"cannot reach {endpoint}: {type(exc).__name__}") from exc
        if response.status_code != 200:
            # 401 here means our own client credentials are wrong, not the user's token.
            raise AuthServerUnavailable(f"introspection answered HTTP {response.status_code}")
        try:
            info = response.json()
        except ValueError as exc:
            raise AuthServerUnavailable("introspection answered with no JSON") from exc
        if not isinstance(info, dict):
            raise AuthServerUnavailable("introspection answered with no JSON object")
        return self._user_of(info)

    def _user_of(self, info: Mapping[str, Any]) -> SignedInUser:
        if info.get("active") is not True:
            raise InvalidToken("inactive")
        exp = info.get("exp")
        if exp is not None and (not isinstance(exp, int | float) or exp <= time.time()):
            raise InvalidToken("expired")
        issuer = info.get("iss")
        if issuer is not None and issuer != self.issuer:
            raise InvalidToken("issued by another AS")
        token_type = info.get("token_type")
        # A refresh token is not a bearer credential for the API, whatever its scope says.
        if token_type is not None and str(token_type).lower() not in ("bearer", "access_token"):
            raise InvalidToken("not an access token")
        scope = info.get("scope")
        if scope is not None and REQUIRED_SCOPE not in str(scope).split():
            raise InvalidToken("missing scope")
        if self.audience is not None:
            aud = info.get("aud")
            audiences = aud if isinstance(aud, list) else [aud]
            if self.audience not in audiences:
                raise InvalidToken("for another audience")
        sub = info.get("sub")
        if not isinstance(sub, str) or not sub:
            raise InvalidToken("names no user")
        username = info.get("username")
        name = username if isinstance(username, str) and username else sub
        return SignedInUser(id=sub, name=name)


class BearerAuth:
    """ASGI middleware: the protected endpoints need the dev token or a valid OAuth token."""

    def __init__(
        self, app: ASGIApp, token: str | None, oauth: OAuthIntrospection | None = None
    ) -> None:
        self.app = app
        self.token = token
        self.oauth = oauth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer 401/503 when the request may not pass, otherwise pass it on with its user."""
        if scope["type"] == "lifespan" and self.oauth is not None:
            await self.app(scope, receive, self._closing_on_shutdown(send))
            return
        if (
            scope["type"] != "http"
            or (self.token is None and self.oauth is None)
            or not scope["path"].startswith(PROTECTED_PREFIXES)
        ):
            await self.app(scope, receive, send)
            return
        given = bearer_token(Headers(scope=scope).get("authorization"))
        if given is None:
            await self._refuse(
                scope, receive, send, "Sign-in required: send Authorization: Bearer <token>.", None
            )
            return
        if self.token is not None and secrets.compare_digest(given.encode(), self.token.encode()):
            await self.app(scope, receive, send)  # the dev user: handlers fall back to it
            return
        if self.oauth is None:
            await self._refuse(
                scope, receive, send, "The token is not valid for this server.", "invalid_token"
            )
            return
        try:
            user = await self.oauth.validate(given)
        except InvalidToken as exc:
            logger.info("refused an OAuth token: %s", exc)
            await self._refuse(
                scope,
                receive,
                send,
                "The sign-in is not valid for this server, has expired or was revoked; "
                "sign in again.",
                "invalid_token",
            )
            return
        except AuthServerUnavailable as exc:
            logger.warning("cannot check an OAuth token with %s: %s", self.oauth.issuer, exc)
            response = Unavailable(
                "The sign-in service cannot be reached to check your sign-in; try again shortly."
            ).response()
            await response(scope, receive, send)
            return
        scope.setdefault("state", {})[USER_STATE_KEY] = {"id": user.id, "name": user.name}
        await self.app(scope, receive, send)

    async def _refuse(
        self, scope: Scope, receive: Receive, send: Send, message: str, error: str | None
    ) -> None:
        challenge = CHALLENGE if error is None else f'{CHALLENGE}, error="{error}"'
        response = ApiError.error_response(
            401, "unauthorized", message, headers={"WWW-Authenticate": challenge}
        )
        await response(scope, receive, send)

    def _closing_on_shutdown(self, send: Send) -> Send:
        """`send` that closes the AS connections before the server reports it has shut down."""
        oauth = self.oauth
        assert oauth is not None

        async def wrapped(message: Message) -> None:
            if message["type"] in ("lifespan.shutdown.complete", "lifespan.shutdown.failed"):
                await oauth.aclose()
            await send(message)

        return wrapped
