"""What a person changes of their own on a server (a Cuckoo hub's): their display name, and
their view of a conversation (a message hidden, everything so far cleared), for them only."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from talkie_tui.backends.session import Session
    from talkie_tui.chat.turns import Turn
    from talkie_tui.protocol.talkie.models import User

__all__ = ["ChangesOwn"]


@runtime_checkable
class ChangesOwn(Protocol):
    """The person's own name and own view of a conversation; the agent keeps every message."""

    @property
    def user(self) -> User | None:
        """Who is signed in, as the server last said."""
        ...

    @property
    def max_display_name(self) -> int:
        """The longest display name the server takes."""
        ...

    async def rename(self, display_name: str) -> User:
        """Change the person's display name (what agents and other people see)."""
        ...

    async def hide_for_me(self, session: Session[Any], turn: Turn) -> None:
        """Hide one message of the session's conversation for the person; it leaves the
        conversation shown."""
        ...

    async def clear_for_me(self, session: Session[Any]) -> None:
        """Hide every message of the session's conversation so far, for the person; the
        conversation shown is emptied."""
        ...
