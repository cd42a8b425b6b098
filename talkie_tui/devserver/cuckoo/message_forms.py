"""A message as people's apps see it and as agents see it (signed)."""

from __future__ import annotations

from typing import Any

from talkie_tui.devserver.common.sqlite import Row
from talkie_tui.devserver.cuckoo import shapes
from talkie_tui.devserver.cuckoo.conversations import Conversations
from talkie_tui.devserver.cuckoo.drafts import UNREAD, Sent, Unread
from talkie_tui.devserver.cuckoo.schedules import Schedules
from talkie_tui.devserver.cuckoo.storage import Storage


class MessageForms:
    """The client and agent forms of stored messages."""

    def __init__(
        self, storage: Storage, conversations: Conversations, schedules: Schedules
    ) -> None:
        self.storage = storage
        self.conversations = conversations
        self.schedules = schedules

    def reply_of(self, row: Row) -> Row | None:
        """The message `row` replies to, if any."""
        return self.storage.get_message(row["reply_to_id"]) if row["reply_to_id"] else None

    def client_form(
        self,
        row: Row,
        *,
        reply: Row | Unread | None = UNREAD,
        delivery: str | Unread | None = UNREAD,
    ) -> dict[str, Any]:
        """A message as people's apps see it (`reply`: its `reply_to` message, `delivery`: a
        person's message's delivery state, if the caller has them)."""
        if isinstance(reply, Unread):
            reply = self.reply_of(row)
        if isinstance(delivery, Unread):
            delivery = None
            if row["sender_kind"] == "user":
                delivery = self.storage.delivery_status(row["id"])
        schedule = None
        if row.get("schedule_id"):
            schedule = self.schedules.refs([row["schedule_id"]]).get(row["schedule_id"])
        return shapes.client_message(row, reply, delivery, schedule)

    def agent_form(
        self, row: Row, *, reply: Row | Unread | None = UNREAD, sender_name: str | None = None
    ) -> dict[str, Any]:
        """A message as agents see it (signed); `reply` and `sender_name` if the caller has
        them."""
        if isinstance(reply, Unread):
            reply = self.reply_of(row)
        if sender_name is None:
            sender_name = self.conversations.name_of(row["sender_kind"], row["sender_id"])
        return shapes.agent_message(row, sender_name, reply)

    def client_form_of(self, sent: Sent) -> dict[str, Any]:
        """The client form of what a send made or found again (no further reads when made)."""
        if not sent.created:
            return self.client_form(sent.row)
        delivery = "pending" if sent.row["sender_kind"] == "user" and sent.events else None
        return self.client_form(sent.row, reply=sent.reply, delivery=delivery)

    def agent_form_of(self, sent: Sent) -> dict[str, Any]:
        """The agent form of what a send made or found again (no further reads when made)."""
        if not sent.created:
            return self.agent_form(sent.row)
        return self.agent_form(sent.row, reply=sent.reply, sender_name=sent.sender_name)
