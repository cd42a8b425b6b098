"""Webhook addresses: HTTPS (plain HTTP in dev mode) to a public host. An IPv6 address that
carries an IPv4 one (mapped, NAT64, 6to4) is judged as that IPv4 address. Link-local and cloud
metadata addresses are refused in every mode; dev mode opens loopback and private networks
(RFC 1918, unique local IPv6) and nothing else that is not public."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from urllib.parse import urlsplit

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

URL_CHARS = 2048
# Python's `is_private` also covers loopback, link-local, documentation and reserved ranges:
# these are the networks dev mode means by "private".
PRIVATE = tuple(
    ipaddress.ip_network(net)
    for net in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7")
)
# Metadata services of cloud machines outside the link-local range (169.254.169.254 is in it).
METADATA = frozenset(ipaddress.ip_address(a) for a in ("fd00:ec2::254", "100.100.100.200"))
NAT64 = ipaddress.ip_network("64:ff9b::/96")


def url_problem(url: object, dev: bool) -> str | None:
    """Why a webhook URL is refused, or None when its form is fine."""
    if not isinstance(url, str) or not 0 < len(url) <= URL_CHARS:
        return f"`webhook_url` is a URL of at most {URL_CHARS} characters."
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - read for its check: a port out of range raises
    except ValueError:
        return "`webhook_url` is not a URL."
    allowed = ("https", "http") if dev else ("https",)
    if parts.scheme not in allowed or not parts.hostname:
        return "`webhook_url` must be an https:// URL."
    try:
        address = ipaddress.ip_address(parts.hostname)
    except ValueError:
        return None
    return address_problem(address, dev)


def unmapped(address: Address) -> Address:
    """The IPv4 address an IPv6 one carries (mapped, NAT64, 6to4), else the address itself."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return address.ipv4_mapped
        if address in NAT64:
            return ipaddress.IPv4Address(int(address) & 0xFFFF_FFFF)
        if address.sixtofour is not None:
            return address.sixtofour
    return address


def address_problem(address: Address, dev: bool) -> str | None:
    """Why an address may not receive webhooks, or None."""
    address = unmapped(address)
    if address.is_link_local or address in METADATA:
        return f"{address} is a link-local or metadata address."
    if address.is_global and not address.is_multicast:
        return None
    if address.is_loopback or any(address in net for net in PRIVATE):
        if dev:
            return None
        return f"{address} is a loopback or private address (allowed in dev mode only)."
    return f"{address} is not a public address."


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
