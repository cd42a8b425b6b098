"""The plumbing of a JSON API on one origin, shared by the Minara and Cuckoo wire clients.

`RestClient._send` is the one way out: the bearer by `BearerAuth` for the service's origin
only, no redirect followed (whatever the httpx client would do), a timeout on every wait,
network failures as TransportError, a non-2xx answer as the error its subclass reads from it
(`_error_for`), a 2xx answer read whole up to a cap. A subclass words what went wrong in its
own terms (`_unreadable`, `_too_large`): a gateway, a hub.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel, ValidationError

from talkie_tui.core.errors import ServerError, TalkieError
from talkie_tui.core.tokens import TokenSource
from talkie_tui.core.urls import origin_of
from talkie_tui.i18n import _
from talkie_tui.protocol.net.bearer import BearerAuth, BearerClient
from talkie_tui.protocol.net.failures import network_errors
from talkie_tui.protocol.net.http import make_http_client, read_capped

__all__ = ["DEFAULT_TIMEOUT", "MAX_ANSWER_BYTES", "RestClient", "path_segment", "read_limited"]

_M = TypeVar("_M", bound=BaseModel)

DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=10.0)
MAX_ANSWER_BYTES = 64 * 1024 * 1024
"""The largest answer read whole (a long transcript, a downloaded file); more is refused."""


def path_segment(value: str) -> str:
    """One path segment from a server-given id ("." and ".." kept as data, not folded away)."""
    encoded = quote(value, safe="")
    return encoded.replace(".", "%2E") if set(value) <= {"."} else encoded


async def read_limited(
    response: httpx.Response, limit: int, too_large: Callable[[int], TalkieError]
) -> None:
    """Read a 2xx answer whole into `response.content`; `too_large(limit)` is raised past it."""
    body = bytearray()
    try:
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > limit:
                raise too_large(limit)
    finally:
        await response.aclose()
    response._content = bytes(body)


class RestClient(BearerClient):
    """A JSON API at `base_url`: its routes are relative to it, the bearer goes to its origin."""

    def __init__(
        self,
        base_url: str,
        *,
        tokens: TokenSource | None = None,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        self.base_url = base_url if base_url.endswith("/") else base_url + "/"
        self.origin = origin_of(self.base_url)
        self._auth = BearerAuth(self.origin, tokens)
        self._own_http = http is None
        self._http = http or make_http_client()

    async def aclose(self) -> None:
        """Close the connections this client opened."""
        if self._own_http:
            await self._http.aclose()

    # --- what a subclass words -----------------------------------------------------------

    def _error_for(self, response: httpx.Response) -> ServerError:
        """The typed error of a non-2xx answer whose body (capped) was read."""
        raise NotImplementedError

    def _unreadable(self, route: str, problem: str) -> TalkieError:
        """The error for a 2xx answer that is not what the route promises."""
        raise NotImplementedError

    def _too_large(self, limit: int) -> TalkieError:
        """The error for an answer over `limit` bytes."""
        raise NotImplementedError

    # --- addresses -----------------------------------------------------------------------

    def url(self, route: str) -> str:
        """The absolute URL of a route such as `v1/sessions` (relative to the base)."""
        return self.base_url + route.lstrip("/")

    def resolve_url(self, url: str) -> str:
        """A server-given URL (a path of the service, or absolute) made absolute."""
        if url.startswith("/") and not url.startswith("//"):
            return self.origin + url
        return str(httpx.URL(self.base_url).join(url))

    def is_same_origin(self, url: str) -> bool:
        """True when `url` (absolute or a path) is on the service's origin."""
        try:
            return origin_of(self.resolve_url(url)) == self.origin
        except (httpx.InvalidURL, TypeError, ValueError):
            return False

    # --- requests ------------------------------------------------------------------------

    async def _send(
        self,
        method: str,
        url: str,
        *,
        body: object = None,
        content: bytes | AsyncIterator[bytes] | None = None,
        headers: Mapping[str, str] | None = None,
        params: Mapping[str, str] | None = None,
        timeout: httpx.Timeout = DEFAULT_TIMEOUT,  # noqa: ASYNC109 (httpx's own timeouts)
        stream: bool = False,
        limit: int = MAX_ANSWER_BYTES,
    ) -> httpx.Response:
        """Send one request (see the module docstring); a non-2xx answer raises, a 2xx one
        comes back read (at most `limit` bytes), or unread with `stream`."""
        request = self._http.build_request(
            method,
            url,
            json=body,
            content=content,
            headers=headers,
            params=params,
            timeout=timeout,
        )
        with network_errors(self.origin):
            response = await self._http.send(
                request, auth=self._auth, stream=True, follow_redirects=False
            )
            if not response.is_success:
                await read_capped(response)
                raise self._error_for(response)
            if not stream:
                await read_limited(response, limit, self._too_large)
        return response

    async def _json(self, method: str, route: str, **options: Any) -> Any:
        """The JSON value a route answers."""
        response = await self._send(method, self.url(route), **options)
        try:
            return response.json()
        except (ValueError, RecursionError):
            raise self._unreadable(route, _("not JSON")) from None

    async def _model(self, model: type[_M], method: str, route: str, **options: Any) -> _M:
        """A route's answer read as `model`; what does not fit is said in `_unreadable`."""
        return self._validate(model, await self._json(method, route, **options), route)

    def _validate(self, model: type[_M], data: Any, route: str) -> _M:
        """`data` read as `model`, or the unreadable-answer error naming the first problem."""
        try:
            return model.model_validate(data)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise self._unreadable(route, f"{where}: {first['msg']}") from None
