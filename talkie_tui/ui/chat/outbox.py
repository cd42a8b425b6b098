"""Messages sent that the server has not taken yet, kept until it has (issue 20, "never lost").

A message goes into the draft store's outbox the moment it is sent and leaves it when the
server shows it took it: the first step of its answer, or the thread loaded with it. A message
still there when talkie quits comes back the next time its thread (or the new thread, for a
message that never got one) is shown: in the conversation, marked not delivered, with Retry,
which sends it under the same id, so the server keeps it once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from talkie_tui.chat.turns import Turn
from talkie_tui.i18n import _
from talkie_tui.ui.chat.drafts import NEW, DraftStore

if TYPE_CHECKING:
    from talkie_tui.chat.conversation import Conversation

__all__ = ["Outbox"]


class Outbox:
    """The messages of one server that wait for it to take them, in the draft store."""

    def __init__(self, store: DraftStore, server_id: str) -> None:
        self._store = store
        self._server_id = server_id

    def hold(self, thread: str | None, message_id: str, text: str) -> None:
        """Keep a message being sent (saved at once: talkie may be closed any moment)."""
        self._store.hold(self._server_id, thread or NEW, message_id, text)
        self._store.save()

    def taken(self, message_id: str) -> None:
        """The server took the message."""
        self._store.taken(self._server_id, message_id)
        self._store.save()

    def restore(self, conversation: Conversation, thread: str | None) -> list[Turn]:
        """Show a thread's messages still not taken, not delivered, with Retry; the ones the
        loaded thread already has were taken after all, and are kept no more."""
        shown = {turn.id for turn in conversation.turns if turn.role == "user"}
        restored: list[Turn] = []
        for message in self._store.unsent(self._server_id, thread):
            if message.message_id in shown:
                self._store.taken(self._server_id, message.message_id)
                continue
            conversation.add_user_message(message.message_id, message.text)
            turn = conversation.not_delivered(
                message.message_id, _("Not sent yet: the server did not take this message.")
            )
            if turn is not None:
                restored.append(turn)
        self._store.save()
        return restored
