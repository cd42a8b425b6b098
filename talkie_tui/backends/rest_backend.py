"""What a backend over one REST client answers from that client (a Minara gateway's, a Cuckoo
hub's): whether a URL is the server's, the URL made absolute, and its files downloaded."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import httpx

__all__ = ["FileServer", "RestBackend"]


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
