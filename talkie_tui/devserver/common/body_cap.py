"""Reading a request body with a cap, so that no client can make a server hold more than it
accepts: a declared length past the cap is refused before a byte is read, and a body sent
without one (chunked) is refused as soon as it grows past the cap."""

from __future__ import annotations

from collections.abc import Callable

from starlette.requests import Request

MIB = 1024 * 1024
JSON_BODY_CAP = MIB
"""The largest JSON body any reference server reads (the Cuckoo hub's rule, kept by all)."""


async def read_capped(request: Request, cap: int, too_large: Callable[[], Exception]) -> bytes:
    """The raw body, or `too_large()` raised as soon as it is known to pass `cap` bytes."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isascii() and declared.isdigit() and int(declared) > cap:
        raise too_large()
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > cap:
            raise too_large()
        chunks.append(chunk)
    return b"".join(chunks)
