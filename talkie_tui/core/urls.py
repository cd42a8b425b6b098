"""Addresses every protocol compares: the origin of a URL, and whether a host is this computer.

The bearer goes only to its issuer's origin, links and files open only on the server's origin,
and plain http is accepted for loopback hosts: these questions are the same whatever the server
speaks, so they live here rather than with talkie/1's discovery (`protocol/manifest.py`).
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING

# httpx comes when an address is first read: the server picker starts without it (issue 24).
if TYPE_CHECKING:
    import httpx

__all__ = ["is_loopback_host", "origin_of"]

_DEFAULT_PORTS = {"http": 80, "https": 443}


def is_loopback_host(host: str) -> bool:
    """True for localhost names and loopback IP addresses."""
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def origin_of(url: httpx.URL | str) -> str:
    """The canonical origin `scheme://host[:port]` of a URL (default ports dropped)."""
    import httpx

    url = httpx.URL(url)
    host = url.host
    if ":" in host:
        host = f"[{host}]"
    port = url.port
    if port is None or port == _DEFAULT_PORTS.get(url.scheme):
        return f"{url.scheme}://{host}"
    return f"{url.scheme}://{host}:{port}"
