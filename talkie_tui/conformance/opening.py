"""How the suites over raw HTTP (Minara, the Cuckoo hub) open: the server's base URL and a
client, or `Unreachable` with the reason."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TypeVar

import httpx

from talkie_tui.conformance.suite import Target, Unreachable, describe_error
from talkie_tui.core.errors import TalkieError
from talkie_tui.protocol.net.http import make_http_client

__all__ = ["first_answer", "opened"]

T = TypeVar("T")


@asynccontextmanager
async def opened(
    target: Target, base_of: Callable[..., str]
) -> AsyncIterator[tuple[str, httpx.AsyncClient]]:
    """The base URL `base_of` makes of the server given, and an HTTP client."""
    try:
        base = base_of(target.server, allow_private_http=target.allow_private_http)
    except TalkieError as error:
        raise Unreachable(describe_error(error)) from None
    async with make_http_client() as http:
        yield base, http


async def first_answer(request: Awaitable[T]) -> T:
    """The answer to a suite's first request; Unreachable with the failure's words."""
    try:
        return await request
    except Exception as error:  # a CheckFailed naming the transport error
        raise Unreachable(str(error)) from None
