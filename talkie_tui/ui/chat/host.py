"""What a screen's helper borrows from the screen: its message queue, workers and notifications.

The chat screen's helpers (the voice call, the takeaways) are not widgets; they run on the
screen's own Textual machinery, so their work ends with the screen. Their host protocols extend
this one with what each needs of the chat.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from textual.message import Message
    from textual.notifications import SeverityLevel
    from textual.worker import Worker

__all__ = ["ScreenHost"]


class ScreenHost(Protocol):
    """The screen's own Textual methods a helper calls (a `Screen` has them all)."""

    def post_message(self, message: Message) -> bool:
        """Put a message on the screen's queue (safe from the helper's tasks and callbacks)."""

    def run_worker(
        self,
        work: Callable[[], Coroutine[Any, Any, Any]] | Awaitable[Any],
        *,
        name: str | None = "",
        group: str = "default",
        exit_on_error: bool = True,
        exclusive: bool = False,
    ) -> Worker[Any]:
        """Run long work as the screen's worker: it is cancelled when the screen goes."""

    def notify(
        self,
        message: str,
        *,
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Tell the person something (talkie passes `markup=False`: the text is data)."""
