"""Keeping WebRTC on 127.0.0.1 (notes §4.4): no STUN, and host candidates on loopback only.

aioice leaves 127.0.0.1 out of its host candidates (RFC 8445 §5.1.1.1) and gathers on every
other interface instead, so a peer on this machine would be reached over eth0. Inside
`loopback_ice()` its address lookup answers just 127.0.0.1. A context variable scopes this to
the peers created inside the block (asyncio tasks inherit it), so other peers in the process
keep the normal behaviour.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import aioice.ice
from aiortc import RTCConfiguration

LOOPBACK = "127.0.0.1"

_loopback_only: ContextVar[bool] = ContextVar("talkie_loopback_ice", default=False)
_fallback: Callable[[bool, bool], list[str]] | None = None


def _host_addresses(use_ipv4: bool, use_ipv6: bool) -> list[str]:
    if _loopback_only.get():
        return [LOOPBACK] if use_ipv4 else []
    assert _fallback is not None
    return _fallback(use_ipv4, use_ipv6)


def _install() -> None:
    global _fallback
    current = aioice.ice.get_host_addresses
    if current is not _host_addresses:
        # Re-checked on every use: a test's monkeypatch may have swapped the function since.
        _fallback = current
        aioice.ice.get_host_addresses = _host_addresses


@contextmanager
def loopback_ice() -> Iterator[None]:
    """Peers that gather candidates inside this block (and its tasks) use 127.0.0.1 only."""
    _install()
    token = _loopback_only.set(True)
    try:
        yield
    finally:
        _loopback_only.reset(token)


def rtc_configuration() -> RTCConfiguration:
    """No ICE servers: no STUN request leaves the machine (aiortc's default is Google's)."""
    return RTCConfiguration(iceServers=[])
