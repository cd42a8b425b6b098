"""The bearer token (§2.1): where it comes from, and the one `httpx.Auth` that attaches it.

`BearerAuth` adds `Authorization: Bearer …` to a request only when the request goes to the
issuer origin, and answers a 401 from that origin by asking the token source for a new token
once and sending the request once more. A second 401 is the answer: the caller raises it as
UnauthorizedError, so nothing loops. Every request `TalkieClient` makes (runs, REST,
downloads, the logo) goes through it; the conformance wire uses it too.

Redirects: `TalkieClient` never follows one (`follow_redirects=False` on every send). An auth
flow runs once per request, not once per redirect hop, so with a client that does follow
redirects httpx itself decides what the next hop gets: it drops `Authorization` on a redirect
to another origin, except for an http → https upgrade of the same host on the default ports.
A 401 from a host the request was redirected to never triggers a refresh.

`TokenSource` (`talkie_tui.core.tokens`) is all it knows of sign-in, so the protocol layer
needs nothing from `auth/`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Generator
from typing import Self

import httpx

from talkie_tui.core.tokens import TokenSource
from talkie_tui.core.urls import origin_of
from talkie_tui.protocol.net.http import read_capped

__all__ = ["BearerAuth", "BearerClient"]


class BearerAuth(httpx.Auth):
    """The bearer of `tokens` for requests to `origin` only; one refresh and retry on 401.

    `tokens` may be replaced at any time (a new sign-in); each request reads it once.
    """

    def __init__(self, origin: str, tokens: TokenSource | None = None) -> None:
        self.origin = origin
        self.tokens = tokens

    def __repr__(self) -> str:
        return f"BearerAuth(origin={self.origin!r})"

    def goes_to_issuer(self, url: httpx.URL | str) -> bool:
        """True when `url` is on the issuer origin, the only place the bearer may go."""
        try:
            return origin_of(url) == self.origin
        except (httpx.InvalidURL, TypeError):
            return False

    @staticmethod
    def retried(response: httpx.Response) -> bool:
        """True when `response` answers a request already sent again after a refreshed token."""
        return any(earlier.status_code == 401 for earlier in response.history)

    def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response]:
        """Token sources are asynchronous: a synchronous client cannot carry the bearer."""
        raise TypeError("BearerAuth works with httpx.AsyncClient only")

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        """Attach the bearer for the issuer; on its 401, refresh once and send once more."""
        tokens = self.tokens
        token = None
        if tokens is not None and self.goes_to_issuer(request.url):
            token = await tokens.token()
        if tokens is None or not token:
            yield request
            return
        request.headers["Authorization"] = f"Bearer {token}"
        response = yield request
        if response.status_code != 401 or not self.goes_to_issuer(response.request.url):
            return
        fresh = await tokens.refresh(token)
        if not fresh or fresh == token:
            return  # the caller reports this 401: sign in again
        # The refused answer is dropped, never read whole (httpx would read it all otherwise).
        await read_capped(response)
        request.headers["Authorization"] = f"Bearer {fresh}"
        yield request


class BearerClient:
    """A client whose requests carry the bearer of its `_auth`; `async with` closes it."""

    _auth: BearerAuth

    @property
    def tokens(self) -> TokenSource | None:
        """Where the bearer comes from; assign a new source after a new sign-in."""
        return self._auth.tokens

    @tokens.setter
    def tokens(self, tokens: TokenSource | None) -> None:
        self._auth.tokens = tokens

    async def aclose(self) -> None:
        """Close the connections this client opened."""
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
