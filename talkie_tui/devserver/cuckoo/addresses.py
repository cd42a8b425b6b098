"""Webhook addresses: HTTPS (plain HTTP in dev mode) to a public host; loopback and private
networks only in dev mode, and never link-local, multicast or unspecified ones."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from urllib.parse import urlsplit

CGNAT = ipaddress.ip_network("100.64.0.0/10")
URL_CHARS = 2048


def url_problem(url: object, dev: bool) -> str | None:
    """Why a webhook URL is refused, or None when its form is fine."""
    if not isinstance(url, str) or not 0 < len(url) <= URL_CHARS:
        return f"`webhook_url` is a URL of at most {URL_CHARS} characters."
    parts = urlsplit(url)
    allowed = ("https", "http") if dev else ("https",)
    if parts.scheme not in allowed or not parts.hostname:
        return "`webhook_url` must be an https:// URL."
    try:
        address = ipaddress.ip_address(parts.hostname)
    except ValueError:
        return None
    return address_problem(address, dev)


def address_problem(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address, dev: bool
) -> str | None:
    """Why an address may not receive webhooks, or None."""
    if address.is_link_local or address.is_multicast or address.is_unspecified:
        return f"{address} is not a public address."
    if not dev and (address.is_loopback or address.is_private or address in CGNAT):
        return f"{address} is a loopback or private address (allowed in dev mode only)."
    return None


async def resolved_problem(url: str, dev: bool) -> str | None:
    """Why the host of a URL resolves to an address that may not receive webhooks, or None."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as error:
        return f"{host} does not resolve: {error}"
    for info in infos:
        problem = address_problem(ipaddress.ip_address(info[4][0]), dev)
        if problem is not None:
            return problem
    return None
