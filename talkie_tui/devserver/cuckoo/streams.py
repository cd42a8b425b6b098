"""An agent's streamed message: appends, its finish, the hub's own finish when it is idle or
open too long, and a person's stop."""

from __future__ import annotations

from typing import Any

from talkie_tui.devserver.common import clock
from talkie_tui.devserver.common.sqlite import Row
from talkie_tui.devserver.cuckoo import shapes, signing
from talkie_tui.devserver.cuckoo.buttons import parse_buttons, parse_quick_replies
from talkie_tui.devserver.cuckoo.drafts import take_rate
from talkie_tui.devserver.cuckoo.errors import conflict, invalid, not_found
from talkie_tui.devserver.cuckoo.outbox import Outbox
from talkie_tui.devserver.cuckoo.writing import Writing


class Streams:
    """The rules of streaming."""

    def __init__(self, writing: Writing, outbox: Outbox) -> None:
        self.writing = writing
        self.outbox = outbox

    def append(self, agent_id: str, message_id: str, text: Any) -> None:
        """Add text to the agent's open stream (409 `not_streaming`, `stopped`)."""
        row = self.writing.storage.get_message(message_id) if isinstance(message_id, str) else None
        if row is None or row["sender_id"] != agent_id:
            raise conflict("not_streaming", "That message is not a stream of yours.")
        if row["stopped"]:
            raise conflict("stopped", "The person stopped this reply.")
        if row["status"] != "streaming":
            raise conflict("not_streaming", "That stream is finished.")
        if not isinstance(text, str):
            raise invalid("invalid_text", "`text` must be a string.", "text")
        take_rate(self.writing.limiter, "delta", agent_id, self.writing.config.delta_rate)
        limit = self.writing.config.max_text_chars
        current = str(row["body"].get("text", ""))
        room = max(0, limit - len(current))
        piece = text[:room]
        fields: dict[str, Any] = {"last_append_at": clock.iso(clock.now())}
        if len(text) > room:
            fields["truncated"] = True
        if piece:
            fields["body"] = {**row["body"], "text": current + piece}
        self.writing.storage.update_message(message_id, **fields)
        if piece:
            self.writing.feeds.push(
                self.writing.conversations.people_of(row["conversation_id"]),
                "message.delta",
                {
                    "conversation_id": row["conversation_id"],
                    "message_id": message_id,
                    "text": piece,
                },
            )

    def finish(
        self, agent_id: str, message_id: str, buttons: Any = None, quick_replies: Any = None
    ) -> Row:
        """End the agent's stream, with buttons and quick replies; again: the same message."""
        row = self.writing.storage.get_message(message_id) if isinstance(message_id, str) else None
        if row is None or row["sender_id"] != agent_id:
            raise not_found("stream_not_found", "That message is not a stream of yours.")
        if row["status"] != "streaming":
            return row
        checked_buttons = parse_buttons(buttons)
        checked_replies = parse_quick_replies(quick_replies)
        body = dict(row["body"])
        if checked_buttons:
            body["buttons"] = checked_buttons
        if checked_replies:
            body["quick_replies"] = checked_replies
        return self.close_stream(row, body=body)

    def close_stream(
        self,
        row: Row,
        *,
        body: dict[str, Any] | None = None,
        truncated: bool = False,
        stopped: bool = False,
    ) -> Row:
        """Finish a stream as complete (clamped, signed again) and tell everyone."""
        body = dict(body if body is not None else row["body"])
        text = str(body.get("text", ""))
        limit = self.writing.config.max_text_chars
        if len(text) > limit:
            body["text"] = text[:limit]
            truncated = True
        finished = {
            **row,
            "body": body,
            "status": "complete",
            "truncated": truncated or row["truncated"],
            "stopped": stopped,
        }
        stored = self.writing.storage.update_message(
            row["id"],
            body=body,
            status="complete",
            truncated=finished["truncated"],
            stopped=stopped,
            signature=signing.sign(self.writing.signing_key, finished),
            updated_at=clock.iso(clock.now()),
        )
        self.writing.announcer.announce(stored, "message.completed")
        return stored

    def cut_short(self, row: Row) -> None:
        """End a stream whose agent may write there no more (truncated)."""
        self.close_stream(row, truncated=True)

    def sweep_streams(self) -> None:
        """Finish streams idle too long (truncated) or open too long."""
        now = clock.now()
        config = self.writing.config
        for row in self.writing.storage.streaming_messages():
            idle = (
                now - clock.parse_iso(row["last_append_at"] or row["created_at"])
            ).total_seconds()
            age = (now - clock.parse_iso(row["created_at"])).total_seconds()
            if idle >= config.stream_idle_seconds:
                self.close_stream(row, truncated=True)
            elif age >= config.stream_max_seconds:
                self.close_stream(row)

    def stop(self, user_id: str, conversation_id: str) -> list[Row]:
        """A person stops the replies in progress; each agent hears `stop.requested`."""
        conversation = self.writing.conversations.for_member(user_id, conversation_id)
        stopped: dict[str, str] = {}
        rows = []
        for row in self.writing.storage.streaming_in(conversation_id):
            if row["sender_kind"] == "agent":
                rows.append(self.close_stream(row, truncated=True, stopped=True))
                stopped[row["sender_id"]] = row["id"]
        for part in self.writing.storage.participants_named(conversation_id):
            if part["kind"] == "agent" and not part["blocked"]:
                self.outbox.emit(
                    part["member_id"],
                    "stop.requested",
                    {
                        "conversation": shapes.conversation_ref(conversation),
                        "message_id": stopped.get(part["member_id"]),
                    },
                )
        return rows
