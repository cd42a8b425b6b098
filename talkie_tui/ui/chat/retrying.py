"""Retry on the chat screen: a message not delivered, or an answer that failed, sent again.

A notice's Retry and Ctrl+R (the newest one that can be retried) come here. The message goes
again under its own id, so a server that stored it already ignores it (§5); where a message
carries more than its text, the failed one takes its files again (out of the tray, where the
failure put them), the thread's model as it is now, and the message it answered.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from talkie_tui.chat.turns import NoticePart
from talkie_tui.ui.chat.host import ChatHost
from talkie_tui.ui.chat.parts import ChatParts

if TYPE_CHECKING:
    from talkie_tui.backends.base import Backend, Outgoing
    from talkie_tui.chat.turns import Turn
    from talkie_tui.ui.chat.sending import Sending

__all__ = ["Retries", "RetryHost"]


class RetryHost(ChatHost, ChatParts, Protocol):
    """What Retry needs of the chat screen; `ChatScreen` is one."""


class Retries:
    """The failed messages and answers of one chat screen, sent again on request."""

    def __init__(self, host: RetryHost, backend: Backend, sending: Sending) -> None:
        self._host = host
        self._backend = backend
        self._sending = sending  # the last request, its files, and the way to send

    def retry(self, notice: NoticePart | None) -> None:
        """Send again what `notice` is about (the message it marks, else the last request)."""
        host = self._host
        if host.answering:
            return
        sending = self._sending
        failed = sending.request or self._last_request()
        owner = self._owner_of(notice)
        if owner is not None and (failed is None or failed.message_id != owner.id):
            failed = host.session.again(owner.text, owner.id)  # an older message not sent
        if failed is None:
            return
        # Same message id: the server ignores a message it already stored (§5).
        if failed is not sending.request or not self._offers_extras:
            sending.send(host.session.again(failed.text, failed.message_id))
            return
        # Its files again (out of the tray, where the failure put them), the thread's model now,
        # the message it answered.
        files = host.attachments.take(sending.files)
        extras = sending.extras(files, host.dictation.extras()) | host.replies.extras_of(failed)
        sending.send(host.session.again(failed.text, failed.message_id, **extras), files)

    def newest(self) -> NoticePart | None:
        """The newest notice with a Retry (what Ctrl+R retries)."""
        for turn in reversed(self._host.session.conversation.turns):
            for part in reversed(turn.parts):
                if isinstance(part, NoticePart) and part.retryable:
                    return part
        return None

    @property
    def _offers_extras(self) -> bool:
        """True when a message may carry more than its text here (files, a model, audio, the
        message it answers)."""
        offers = self._backend.info.capabilities
        return offers.attachments or offers.models or offers.dictation or offers.replies

    def _owner_of(self, notice: NoticePart | None) -> Turn | None:
        """The person's message a "not delivered" notice is about."""
        if notice is None or notice.kind != "not_delivered":
            return None
        for turn in self._host.session.conversation.turns:
            if turn.role == "user" and any(part is notice for part in turn.parts):
                return turn
        return None

    def _last_request(self) -> Outgoing | None:
        """Rebuild the request of the last user message (to retry a failed answer)."""
        for turn in reversed(self._host.session.conversation.turns):
            if turn.role == "user":
                request: Outgoing = self._host.session.again(turn.text, turn.id)
                return request
        return None
