"""History that comes in pages, and a thread that goes on being written while it is read:
what a backend or its session offers beyond loading a thread."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from talkie_tui.backends.session import Session, Update

__all__ = ["FollowsLive", "PagesBack", "Reattaches"]


@runtime_checkable
class PagesBack(Protocol):
    """History that comes in pages, back to the server's retention window."""

    async def load_earlier(self, session: Session[Any]) -> bool:
        """Put the previous page before the session's turns; False when there is no more."""
        ...


@runtime_checkable
class Reattaches(Protocol):
    """A session loaded while its turn still ran follows that turn (a Minara gateway's)."""

    @property
    def streaming(self) -> bool:
        """True when the thread was loaded while its turn ran."""
        ...

    def reattach(self) -> AsyncIterator[Update]:
        """The running turn's steps, replayed from its start, then as they come."""
        ...


@runtime_checkable
class FollowsLive(Protocol):
    """A session that follows its thread between answers (`capabilities.live`): a reply that
    came late, a message from another device, the agent writing on its own."""

    def follow(self) -> AsyncIterator[Update]:
        """The thread's changes as they come, until the backend closes."""
        ...
