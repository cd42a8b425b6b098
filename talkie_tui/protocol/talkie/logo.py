"""The server's `brand.logo` (§1), fetched carefully: same-origin or https, PNG or JPEG, capped.

A bad logo is skipped, never fatal: every failure returns None and is logged at debug level.
"""

from __future__ import annotations

import logging

import httpx

from talkie_tui.core.logo import MAGIC_LENGTH, MAX_LOGO_BYTES, is_logo_image
from talkie_tui.protocol.talkie.client import TalkieClient

__all__ = ["fetch_logo"]

log = logging.getLogger(__name__)


def _logo_url(client: TalkieClient) -> str | None:
    """The absolute logo URL when it is same-origin or https; None otherwise."""
    logo = client.server.manifest.brand.logo
    if not logo or not logo.strip():
        return None
    url = client.resolve_url(logo.strip())
    if client.is_same_origin(url) or httpx.URL(url).scheme == "https":
        return url
    log.debug("logo %r refused: neither same-origin nor https", url)
    return None


async def fetch_logo(client: TalkieClient) -> bytes | None:
    """The logo's bytes if it is a same-origin or https PNG/JPEG of at most 256 kB, else None."""
    try:
        url = _logo_url(client)
        if url is None:
            return None
        async with client.open_stream(url) as response:
            declared = response.headers.get("content-length")
            if declared is not None and int(declared) > MAX_LOGO_BYTES:
                log.debug("logo refused: Content-Length %s is over the cap", declared)
                return None
            data = bytearray()
            async for chunk in response.aiter_bytes():
                data += chunk
                if len(data) > MAX_LOGO_BYTES:
                    log.debug("logo refused: more than %d bytes", MAX_LOGO_BYTES)
                    return None  # leaving the block closes the stream unread
                if len(data) >= MAGIC_LENGTH and not is_logo_image(bytes(data[:MAGIC_LENGTH])):
                    log.debug("logo refused: not a PNG or JPEG")
                    return None
        if not is_logo_image(bytes(data)):
            log.debug("logo refused: not a PNG or JPEG")
            return None
        return bytes(data)
    except Exception as error:  # a logo is decoration: nothing about it may break connecting
        log.debug("logo not loaded: %s", error)
        return None
