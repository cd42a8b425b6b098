"""What a screen's helper borrows from the screen: its message queue, workers and notifications.

The chat screen's helpers (the voice call, the takeaways) are not widgets; they run on the
screen's own Textual machinery, so their work ends with the screen. Their host protocols extend
this one with what each needs of the chat; `ChatHost` is what most of them share.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from textual.app import App
    from textual.message import Message
    from textual.notifications import SeverityLevel
    from textual.timer import Timer
    from textual.worker import Worker

    from talkie_tui.backends.base import Session
    from talkie_tui.core.errors import TalkieError
    from talkie_tui.ui.widgets.composer import Composer
    from talkie_tui.ui.widgets.header import TalkieHeader
    from talkie_tui.ui.widgets.transcript import Transcript

__all__ = ["ANSWER_GROUP", "ChatHost", "ScreenHost", "run_answer"]

ANSWER_GROUP = "run"
"""The chat screen's worker group of what streams a thread in (a message's answer, a thread
opened): one at a time; `answering` is whether one runs, and Esc stops it."""


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

    @property
    def app(self) -> App[Any]:
        """The app: its clipboard, and the screens pushed over this one."""

    def refresh_bindings(self) -> None:
        """Ask the footer and the key checks to look again (what applies changed)."""

    def set_timer(self, delay: float, callback: Callable[[], object]) -> Timer:
        """Call `callback` once, `delay` seconds from now."""

    def set_interval(self, interval: float, callback: Callable[[], object]) -> Timer:
        """Call `callback` every `interval` seconds until the timer is stopped."""

    def call_after_refresh(self, callback: Callable[..., object], *args: Any) -> bool:
        """Call `callback` once the screen has drawn what changed."""


class ChatHost(ScreenHost, Protocol):
    """The chat around a controller of the chat screen (`ChatScreen` is one)."""

    session: Session[Any]
    """Its conversation is the thread on screen."""

    @property
    def header(self) -> TalkieHeader:
        """Where the connection, the user and the usage show."""

    @property
    def transcript(self) -> Transcript:
        """Where the thread shows."""

    @property
    def composer(self) -> Composer:
        """Where the person writes."""

    @property
    def answering(self) -> bool:
        """True while an answer streams in."""

    def show_state(self) -> None:
        """Read the conversation again into the header and the activity line."""

    def sign_in_needed(self, error: TalkieError) -> bool:
        """On a 401 offer a new sign-in; True when it was offered."""


def run_answer(
    host: ScreenHost, work: Callable[[], Coroutine[Any, Any, None]], name: str
) -> Worker[None]:
    """Run `work` as the screen's one answer, in place of the one before (`ANSWER_GROUP`)."""
    return host.run_worker(work, name=name, group=ANSWER_GROUP, exclusive=True, exit_on_error=False)
