"""What every backend does, whatever its protocol: the `Backend` interface.

Required here is only what all three protocols do; what some do is a part of its own
(`backends.parts`), implemented where the server's `Capabilities` say so and found by
`isinstance` on the part's runtime-checkable Protocol.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import httpx

    from talkie_tui.backends.server import Account, ServerInfo
    from talkie_tui.backends.session import Session
    from talkie_tui.protocol.talkie.models import Thread

__all__ = ["Backend"]


class Backend(Protocol):
    """A connection to one server, signed in or not, in its protocol."""

    @property
    def info(self) -> ServerInfo:
        """Who the server is and what it offers."""
        ...

    def new_session(self, thread_id: str | None = None) -> Session[Any]:
        """A session for a new thread, or for `thread_id`."""
        ...

    async def account(self) -> Account:
        """Who is signed in, their usage, and whether they may call."""
        ...

    async def threads(self) -> list[Thread]:
        """The person's threads, newest first."""
        ...

    async def delete_thread(self, thread_id: str) -> None:
        """Delete a thread for good."""
        ...

    async def stop(self, run_id: str) -> None:
        """Stop the answer being written (its partial work stays)."""
        ...

    def is_same_origin(self, url: str) -> bool:
        """True when `url` belongs to this server (its links open, its files download)."""
        ...

    def resolve_url(self, url: str) -> str:
        """`url` made absolute against the server."""
        ...

    def download(self, url: str) -> AbstractAsyncContextManager[httpx.Response]:
        """A streamed GET of one of the server's files, signed in."""
        ...

    async def logo(self) -> bytes | None:
        """The server's logo (PNG or JPEG, size-checked), or None."""
        ...

    async def aclose(self) -> None:
        """Close the connections."""
        ...
