"""The actions of the answer's keys (Esc, Ctrl+R) and Retry, handed to their controllers.

A mixin of the chat screen, as `CallKeys` is: Textual finds a key's action and a message's
`on_*` handler on the screen, so they are the screen's own; they are written here because each
only hands on to `Sending` (a message on its way, the answer stopped), `Retries`, `Replies` or
the session (the wait for a broken stream's answer). Which of the three Esc does now is
`escape_does`, read by the screen's `check_action`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from talkie_tui.ui.messages import RetryRequested

if TYPE_CHECKING:
    from textual.message import Message
    from textual.worker import Worker

    from talkie_tui.backends.base import Outgoing, Session
    from talkie_tui.ui.chat.live import LiveTurns
    from talkie_tui.ui.chat.replies import Replies
    from talkie_tui.ui.chat.retrying import Retries
    from talkie_tui.ui.chat.sending import Sending
    from talkie_tui.ui.chat.waiting import AnswerWait
    from talkie_tui.ui.widgets.attachment_tray import Pending
    from talkie_tui.ui.widgets.composer import Composer

__all__ = ["AnswerKeys"]


class AnswerKeys:
    """Esc stops the answer, the wait or the reply; Ctrl+R retries; messages go out."""

    session: Session[Any]
    sending: Sending
    retries: Retries
    replies: Replies
    live: LiveTurns

    _waiting: AnswerWait

    if TYPE_CHECKING:  # the screen's own

        def post_message(self, message: Message) -> bool:
            """Put a message on the screen's queue."""

        @property
        def answering(self) -> bool:
            """True while an answer streams in."""

    def on_composer_submitted(self, event: Composer.Submitted) -> None:
        """Enter in the composer: a message, an interjection or a command."""
        self.sending.submit(event.text)

    def send(self, request: Outgoing, files: list[Pending] | None = None) -> Worker[None]:
        """Send a message (with the files taken for it) and show the answer as it streams."""
        return self.sending.send(request, files)

    def send_text(self, text: str) -> None:
        """Send `text` as a new message of the thread on screen (a queued interjection)."""
        self.sending.send_text(text)

    def escape_does(self) -> str:
        """What Esc does now: stop waiting for a broken stream's answer, else drop the reply
        being written while no answer runs, else stop the answer."""
        if self._waiting.waiting:
            return "stop_waiting"
        if self.replies.target is not None and not self.answering:
            return "cancel_reply"
        return "cancel_run"

    def on_retry_requested(self, event: RetryRequested) -> None:
        """A notice's Retry (or Ctrl+R's)."""
        event.stop()
        self.retries.retry(event.notice)

    def action_retry(self) -> None:
        """Ctrl+R: Retry the newest message not delivered or answer that failed."""
        notice = self.retries.newest()
        if notice is not None:
            self.post_message(RetryRequested(notice))

    def action_cancel_reply(self) -> None:
        """Esc while the next message answers an earlier one: it answers nothing."""
        self.replies.cancel()

    def action_stop_waiting(self) -> None:
        """Esc while reconnecting: stop waiting for the answer; the message stays with Retry.

        Only the wait ends: the run goes on on the server (disconnect is not cancel), so its
        answer is in the thread when it is opened again.
        """
        self.session.stop_waiting()

    def action_cancel_run(self) -> None:
        """Esc: stop the answer being streamed (cancelRun, §5), or the turn reattached to."""
        self.sending.stop(self.live.reattached)
