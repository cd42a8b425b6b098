"""Telling everyone in a conversation about a message: people get it pushed, and a complete
one becomes a `message.created` event for every agent in it but its sender."""

from __future__ import annotations

from talkie_tui.devserver.common.sqlite import Row
from talkie_tui.devserver.cuckoo import shapes
from talkie_tui.devserver.cuckoo.conversations import Conversations
from talkie_tui.devserver.cuckoo.drafts import UNREAD, Sent, Unread
from talkie_tui.devserver.cuckoo.live import ClientFeeds
from talkie_tui.devserver.cuckoo.message_forms import MessageForms
from talkie_tui.devserver.cuckoo.outbox import Outbox
from talkie_tui.devserver.cuckoo.storage import Storage


class Announcer:
    """Pushes messages to people and hands complete ones to the agents' outbox."""

    def __init__(
        self,
        storage: Storage,
        feeds: ClientFeeds,
        outbox: Outbox,
        conversations: Conversations,
        forms: MessageForms,
    ) -> None:
        self.storage = storage
        self.feeds = feeds
        self.outbox = outbox
        self.conversations = conversations
        self.forms = forms

    def announce(
        self,
        row: Row,
        frame_type: str,
        *,
        conversation: Row | None = None,
        reply: Row | Unread | None = UNREAD,
        sent: Sent | None = None,
    ) -> None:
        """Push a message to people; a complete one becomes an event for the other agents
        (not for one a person blocked here).

        `conversation` and `reply`: the message's conversation and the message it replies to,
        if the caller has them; `sent`: a message made just now (no event carries it yet),
        whose sender's name and count of events are recorded there.
        """
        conversation_id = row["conversation_id"]
        parts = self.storage.participants_named(conversation_id)
        if isinstance(reply, Unread):
            reply = self.forms.reply_of(row)
        sender = next(
            (
                part
                for part in parts
                if part["member_id"] == row["sender_id"] and part["kind"] == row["sender_kind"]
            ),
            None,
        )
        if sent is not None:
            sent.sender_name = sender["display_name"] if sender else None
        self.feeds.push(
            [part["member_id"] for part in parts if part["kind"] == "user"],
            frame_type,
            {
                "conversation_id": conversation_id,
                "message": self.forms.client_form(
                    row, reply=reply, delivery=None if sent is not None else UNREAD
                ),
            },
        )
        if row["status"] != "complete":
            return
        agents = [
            part["member_id"]
            for part in parts
            if part["kind"] == "agent"
            and part["member_id"] != row["sender_id"]
            and not part["blocked"]
        ]
        if not agents:
            return
        if conversation is None:
            conversation = self.storage.get_conversation(conversation_id)
            assert conversation is not None
        message = self.forms.agent_form(
            row, reply=reply, sender_name=sender["display_name"] if sender else None
        )
        for agent_id in agents:
            self.outbox.emit(
                agent_id,
                "message.created",
                {
                    "conversation": shapes.conversation_ref(conversation),
                    "message": message,
                    "participants": self.conversations.agent_participants(
                        conversation_id, agent_id, parts
                    ),
                },
                message_id=row["id"],
            )
        if sent is not None:
            sent.events = len(agents)
