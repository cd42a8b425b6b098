"""The one place talkie makes HTTP clients: redirects, timeouts, proxies, trust store, failures.

Every client talkie opens comes from `make_http_client`, so all of them behave alike on a
corporate network:

- **Proxies** come from the environment or the system settings, and loopback always goes
  direct: `proxies.py`.
- **Certificates** are checked against the operating system's trust store, plus
  `SSL_CERT_FILE` / `SSL_CERT_DIR`: `trust.py`.
- **Failures** are explained (which certificate, which proxy, why) by `describe_failure` in
  `failures.py`.

`read_capped` reads the body of an answer that is only reported (an error page, a refused
401), never more than 64 kB of it.
"""

from __future__ import annotations

import logging
import ssl
import time
from collections.abc import Mapping
from typing import Any

import httpx

from talkie_tui.i18n import _, accept_language
from talkie_tui.protocol.net.proxies import (
    PROXY_EXTENSION,
    ProxySetting,
    ProxySettings,
    ProxySetupError,
    proxy_settings,
)
from talkie_tui.protocol.net.trust import TrustStore, ssl_context, trust_store

__all__ = [
    "DEFAULT_TIMEOUT",
    "USER_AGENT",
    # What `talkie doctor` reports of the network, beside the client it makes.
    "ProxySettings",
    "TrustStore",
    "make_http_client",
    "proxy_settings",
    "read_capped",
    "trust_store",
]

USER_AGENT = "talkie-tui/0.1 (talkie/1)"
DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=10.0)
DEFAULT_LIMITS = httpx.Limits(max_connections=100, max_keepalive_connections=20)
MAX_REPORTED_BODY = 64 * 1024

log = logging.getLogger("talkie_tui.http")


class _Router(httpx.AsyncBaseTransport):
    """Sends each request direct or through the proxy its URL calls for, and logs it."""

    def __init__(
        self,
        direct: httpx.AsyncBaseTransport,
        proxies: ProxySettings | None,
        context: ssl.SSLContext,
        limits: httpx.Limits,
    ) -> None:
        self._direct = direct
        self._proxies = proxies
        self._context = context
        self._limits = limits
        self._through: dict[str, httpx.AsyncBaseTransport] = {}

    def _transport_for(
        self, proxy: ProxySetting | None, request: httpx.Request
    ) -> httpx.AsyncBaseTransport:
        if proxy is None:
            return self._direct
        transport = self._through.get(proxy.url)
        if transport is None:
            # Built on first use, so a broken proxy setting fails the request that needs it
            # (with a message naming it), not every client.
            try:
                url = proxy.normalized
                # TLS to the proxy itself (an https:// proxy) trusts what the server does.
                tls = self._context if url.lower().startswith("https://") else None
                target = httpx.Proxy(url, ssl_context=tls)
                transport = httpx.AsyncHTTPTransport(
                    verify=self._context, proxy=target, limits=self._limits
                )
            except ImportError:
                text = _(
                    "{source} names a SOCKS proxy ({proxy}), which needs the 'socksio' package "
                    "(pip install 'httpx[socks]')"
                )
                raise ProxySetupError(
                    text.format(source=proxy.where_found, proxy=proxy.shown), request=request
                ) from None
            except (ValueError, httpx.InvalidURL) as error:
                text = _("{source} is not a proxy address talkie can use ({proxy}: {error})")
                raise ProxySetupError(
                    text.format(source=proxy.where_found, proxy=proxy.shown, error=error),
                    request=request,
                ) from None
            self._through[proxy.url] = transport
        return transport

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send `request` on its way; a proxy's own 407 becomes a ProxyError."""
        proxy = self._proxies.proxy_for(request.url) if self._proxies else None
        if proxy is not None:
            request.extensions[PROXY_EXTENSION] = proxy
        via = f" via proxy {proxy.shown}" if proxy else ""
        started = time.perf_counter()
        try:
            response = await self._transport_for(proxy, request).handle_async_request(request)
        except httpx.HTTPError as error:
            took = (time.perf_counter() - started) * 1000
            log.debug(
                "%s %s%s failed after %.0f ms: %s: %s",
                request.method, request.url, via, took, type(error).__name__, error,
            )  # fmt: skip
            raise
        took = (time.perf_counter() - started) * 1000
        log.debug(
            "%s %s%s -> %d (headers after %.0f ms)",
            request.method, request.url, via, response.status_code, took,
        )  # fmt: skip
        if proxy is not None and response.status_code == 407 and request.url.scheme == "http":
            # Plain http goes to the proxy as a normal request, so its 407 arrives as a
            # response; a tunnel's 407 (https) is already a ProxyError.
            await response.aclose()
            raise httpx.ProxyError("407 Proxy Authentication Required", request=request)
        return response

    async def aclose(self) -> None:
        """Close the direct connections and those through every proxy used."""
        await self._direct.aclose()
        for transport in self._through.values():
            await transport.aclose()


async def _ask_for_language(request: httpx.Request) -> None:
    """Servers word their errors "in the user's language" (§3): tell them which it is."""
    if "Accept-Language" not in request.headers:
        request.headers["Accept-Language"] = accept_language()


def make_http_client(
    *,
    timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
    follow_redirects: bool = False,
    headers: Mapping[str, str] | None = None,
    trust_env: bool = True,
    verify: ssl.SSLContext | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    limits: httpx.Limits = DEFAULT_LIMITS,
    **options: Any,
) -> httpx.AsyncClient:
    """An AsyncClient as every part of talkie needs it (see the module docstring).

    Redirects are not followed unless asked (a manifest or token must not wander to another
    origin). `trust_env=False` ignores proxies and SSL_CERT_FILE/DIR. A `transport` given by
    the caller (tests) is used as is, without proxies.
    """
    context = verify or ssl_context(trust_env=trust_env)
    proxies = proxy_settings() if trust_env and transport is None else None
    direct = transport or httpx.AsyncHTTPTransport(verify=context, limits=limits)
    hooks = options.pop("event_hooks", {})
    hooks = {**hooks, "request": [_ask_for_language, *hooks.get("request", [])]}
    return httpx.AsyncClient(
        event_hooks=hooks,
        follow_redirects=follow_redirects,
        timeout=timeout,
        headers={"User-Agent": USER_AGENT, **(headers or {})},
        # The environment is read here (proxies, certificates), not by httpx, so that
        # loopback always goes direct and SSL_CERT_FILE adds to the system store.
        trust_env=False,
        transport=_Router(direct, proxies, context, limits),
        **options,
    )


async def read_capped(response: httpx.Response, limit: int = MAX_REPORTED_BODY) -> None:
    """Read at most `limit` bytes of a streamed answer, then close it; the rest is dropped.

    For answers that are only reported (an error page, a 401 about to be retried): a server
    cannot make talkie read a huge body. A connection lost meanwhile keeps what arrived.
    """
    body = bytearray()
    try:
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > limit:
                break
    except httpx.HTTPError:
        pass
    finally:
        await response.aclose()
    # httpx keeps a read body here; `response.content` and `aread()` then give these bytes.
    response._content = bytes(body[:limit])
