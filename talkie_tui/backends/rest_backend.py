"""What a backend over one REST client answers from that client (a Minara gateway's, a Cuckoo
hub's): whether a URL is the server's, the URL made absolute, and its files downloaded; and the
client's first answer as the backend connects (`first_answer`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    import httpx

    from talkie_tui.auth.store import TokenStore
    from talkie_tui.backends.base import KeptSignIn
    from talkie_tui.core.tokens import TokenSource
    from talkie_tui.protocol.net.bearer import BearerClient

__all__ = ["FileServer", "RestBackend", "first_answer"]

T = TypeVar("T")


class FileServer(Protocol):
    """A REST client of one server that serves files."""

    def is_same_origin(self, url: str, /) -> bool:
        """True when `url` is on the server's origin."""
        ...

    def resolve_url(self, url: str, /) -> str:
        """`url` made absolute against the server."""
        ...

    def open_file(self, url: str, /) -> AbstractAsyncContextManager[httpx.Response]:
        """A streamed GET of a file of the server, signed in; another origin is refused."""
        ...


async def first_answer(
    client: BearerClient,
    kept: KeptSignIn | None,
    kept_token: Callable[[TokenStore | None], TokenSource | None],
    probe: Callable[[], Awaitable[T]],
) -> T:
    """What `probe` gets from a new `client`: signed in first with the token `kept_token` finds
    in the kept store when the client was given none; the client is closed if anything fails."""
    try:
        if client.tokens is None and kept is not None:
            # Keyring look-ups may block on D-Bus: off the event loop.
            client.tokens = await asyncio.to_thread(lambda: kept_token(kept.store()))
        return await probe()
    except BaseException:
        await client.aclose()
        raise


class RestBackend:
    """The `Backend` members a gateway or a hub answers from its client; neither has a logo."""

    client: FileServer

    def is_same_origin(self, url: str) -> bool:
        """True when `url` is on the server's origin."""
        return self.client.is_same_origin(url)

    def resolve_url(self, url: str) -> str:
        """`url` made absolute against the server (a file's path is relative to its base)."""
        return self.client.resolve_url(url)

    def download(self, url: str) -> AbstractAsyncContextManager[httpx.Response]:
        """A streamed GET of one of the server's files (its file route, or a same-origin
        URL), signed in; another origin is refused."""
        return self.client.open_file(url)

    async def logo(self) -> bytes | None:
        """A gateway or a hub has no logo of its own."""
        return None
