"""Addresses a person types, whatever the server speaks: the URL meant, and whether it is safe.

`host[:port]` means https, or plain http on this computer; plain http to a private LAN needs the
development switch, and anywhere else it is refused. Every protocol's client reads an address
through `service_url` and checks a URL through `check_secure`, so the rules hold alike.
"""

from __future__ import annotations

import ipaddress

import httpx

from talkie_tui.core.errors import AddressRefused, TalkieError
from talkie_tui.core.urls import is_loopback_host, origin_of
from talkie_tui.i18n import _

__all__ = ["check_secure", "check_socket_url", "service_url"]


def _is_private_host(host: str) -> bool:
    host = host.strip("[]").lower()
    if host.endswith(".local"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_private or address.is_link_local


def check_secure(url: httpx.URL, *, allow_private_http: bool = False) -> None:
    """Refuse plain http except for loopback (and private LAN behind the development switch)."""
    if url.scheme == "https":
        return
    if url.scheme != "http":
        raise AddressRefused(_("'{url}' is not an http(s) address.").format(url=url))
    if is_loopback_host(url.host):
        return
    if _is_private_host(url.host):
        if allow_private_http:
            return
        raise AddressRefused(
            _(
                "{origin} uses plain http on a private network. Talkie needs https; "
                "for a development server on your LAN, pass --allow-private-http."
            ).format(origin=origin_of(url))
        )
    raise AddressRefused(
        _("{origin} uses plain http. Talkie needs https outside this computer.").format(
            origin=origin_of(url)
        )
    )


def service_url(address: str, *, allow_private_http: bool = False) -> httpx.URL:
    """The URL a person means by `host[:port]` (plain http for loopback, else https) or a URL;
    refused when it has no host, carries a user name, or is plain http off this computer."""
    text = address.strip()
    if not text:
        raise AddressRefused(_("No server address given."))
    if "://" not in text:
        host = text.split("/", 1)[0].rsplit("@", 1)[-1]
        try:
            bare_host = httpx.URL(f"http://{host}").host  # also "[::1]:8000"
        except httpx.InvalidURL:
            bare_host = host
        scheme = "http" if is_loopback_host(bare_host) else "https"
        text = f"{scheme}://{text}"
    try:
        url = httpx.URL(text)
    except httpx.InvalidURL as error:
        raise AddressRefused(
            _("'{address}' is not a server address: {error}.").format(address=address, error=error)
        ) from None
    if not url.host:
        raise AddressRefused(_("'{address}' has no host name.").format(address=address))
    if url.userinfo:
        raise AddressRefused(_("Server addresses must not contain a user name or password."))
    check_secure(url, allow_private_http=allow_private_http)
    return url.copy_with(fragment=None)


def check_socket_url(url: str, *, allow_plain: bool = False) -> httpx.URL:
    """A WebSocket URL, refused unless it is `wss:` or `ws:` on this computer (`allow_plain`:
    the development switch), as plain http is: the token would travel in the clear."""
    parsed = httpx.URL(url)
    if parsed.scheme not in ("ws", "wss"):
        raise TalkieError(_("'{url}' is not a WebSocket address.").format(url=url))
    if parsed.scheme == "ws" and not (is_loopback_host(parsed.host) or allow_plain):
        raise TalkieError(
            _("{host} offers its socket without TLS (ws://); talkie needs wss://.").format(
                host=parsed.host
            )
        )
    return parsed
