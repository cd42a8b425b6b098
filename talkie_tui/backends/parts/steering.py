"""A message sent while the agent works steers the running turn (`capabilities.interjections`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from talkie_tui.backends.session import Session

__all__ = ["Steers"]


@runtime_checkable
class Steers(Protocol):
    """A message sent while the agent works steers the running turn (`interjections`)."""

    async def interject(self, session: Session[Any], text: str) -> bool:
        """Send `text` into the running turn; False when none runs (send it as a new turn)."""
        ...
