"""A person's message's delivery state, told to the sender's devices when it changes."""

from __future__ import annotations

from talkie_tui.devserver.cuckoo.live import ClientFeeds
from talkie_tui.devserver.cuckoo.storage import Storage


class DeliveryNews:
    """Tells a message's sender how its delivery to the agents stands."""

    def __init__(self, storage: Storage, feeds: ClientFeeds) -> None:
        self.storage = storage
        self.feeds = feeds

    def changed(self, message_id: str) -> None:
        """Tell the sender's devices a message's delivery state."""
        found = self.storage.sender_and_delivery(message_id)
        if found is None or found[0]["sender_kind"] != "user":
            return
        row, status = found
        self.feeds.push(
            [row["sender_id"]],
            "delivery.updated",
            {
                "conversation_id": row["conversation_id"],
                "message_id": message_id,
                "delivery_status": status,
            },
        )
