"""An error or warning about a turn: the server's words, its code, and Retry when it may help."""

from __future__ import annotations

import math
import time

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Button, Static

from talkie_tui.chat.turns import NoticePart
from talkie_tui.i18n import N_, _
from talkie_tui.ui.messages import RetryRequested
from talkie_tui.ui.widgets.action_card import Clock

__all__ = ["NoticeView"]

RETRY_HINT = N_("Trying again may help.")


class NoticeView(Widget):
    """A NoticePart; with `retry_after` (a 429), the Retry button counts down first."""

    def __init__(
        self,
        part: NoticePart,
        retry_after: float | None = None,
        *,
        monotonic: Clock = time.monotonic,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=f"notice -{part.level}")
        self.part = part
        self._monotonic = monotonic
        wait = retry_after if part.code == "rate_limited" and retry_after else 0.0
        self._retry_at = monotonic() + max(0.0, wait)
        self._ticker: Timer | None = None

    def compose(self) -> ComposeResult:
        """Message, code, and the retry hint with its button."""
        part = self.part
        yield Static(Content(part.text), markup=False, classes="notice--text")
        if part.code:
            code = _("code: {code}").format(code=part.code)
            yield Static(Content(code), markup=False, classes="notice--code")
        if part.retryable:
            with Horizontal(classes="notice--retry"):
                yield Static(Content(_(RETRY_HINT)), markup=False, classes="notice--hint")
                yield Button(Content(_("Retry")), classes="notice--retry-button", compact=True)

    def on_mount(self) -> None:
        """Start the countdown when the server asked us to wait."""
        if self.part.retryable and self.seconds_left > 0:
            self._ticker = self.set_interval(1.0, self.refresh_countdown)
        self.refresh_countdown()

    @property
    def seconds_left(self) -> int:
        """Whole seconds until Retry is allowed (0 when it is)."""
        return max(0, math.ceil(self._retry_at - self._monotonic()))

    def refresh_countdown(self) -> None:
        """Show the seconds left on the Retry button; enable it when they are over."""
        if not self.part.retryable:
            return
        left = self.seconds_left
        button = self.query_one(".notice--retry-button", Button)
        label = _("Retry in {seconds}s").format(seconds=left) if left else _("Retry")
        button.label = Content(label)
        button.disabled = left > 0
        if not left and self._ticker is not None:
            self._ticker.stop()
            self._ticker = None

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Retry, once the server's wait is over."""
        event.stop()
        if self.seconds_left == 0:
            self.post_message(RetryRequested(self.part))
