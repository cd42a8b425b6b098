"""Messages: sending (a person's text, files or tap; an agent's text, files, buttons or the
start of a stream), and activity.

Every message created is pushed to the people in its conversation and, once complete, becomes
a `message.created` event for every agent in it but its sender (`announcer.Announcer`); streams
go on in `streams.Streams`.
"""

from __future__ import annotations

from typing import Any

from talkie_tui.devserver.common import clock
from talkie_tui.devserver.common.sqlite import Row
from talkie_tui.devserver.cuckoo import ids, shapes, signing
from talkie_tui.devserver.cuckoo.buttons import LABEL_CHARS, parse_buttons, parse_quick_replies
from talkie_tui.devserver.cuckoo.drafts import (
    Draft,
    Sent,
    checked_attachments,
    checked_reply_to,
    checked_tap,
    checked_text,
    plain_label,
    replay,
    take_rate,
)
from talkie_tui.devserver.cuckoo.errors import conflict, invalid
from talkie_tui.devserver.cuckoo.schedules import Schedules
from talkie_tui.devserver.cuckoo.writing import Writing

ACTIVITY_STATES = ("thinking", "working", "idle")


class Chat:
    """The rules of sending and streaming."""

    def __init__(self, writing: Writing, schedules: Schedules) -> None:
        self.writing = writing
        self.schedules = schedules

    # creating

    def _create(
        self,
        conversation: Row,
        sender_kind: str,
        sender_id: str,
        body: dict[str, Any],
        *,
        reply: Row | None,
        key: str | None,
        streaming: bool = False,
        media: list[Row] | None = None,
        schedule_id: str | None = None,
    ) -> Sent:
        """Store a message (with its files and events: one transaction) and tell everyone
        (one sent for a schedule names it)."""
        now = clock.iso(clock.now())
        row: Row = {
            "id": ids.new_id("msg"),
            "conversation_id": conversation["id"],
            "sender_kind": sender_kind,
            "sender_id": sender_id,
            "body": body,
            "reply_to_id": reply["id"] if reply is not None else None,
            "status": "streaming" if streaming else "complete",
            "truncated": False,
            "stopped": False,
            "idempotency_key": key,
            "created_at": now,
            "updated_at": now,
            "last_append_at": now if streaming else None,
            "schedule_id": schedule_id,
        }
        row["signature"] = signing.sign(self.writing.signing_key, row)
        storage = self.writing.storage
        with storage.grouped():
            stored = storage.add_message(row)
            if media:
                media_ids = [item["id"] for item in media]
                storage.attach_media(media_ids, conversation["id"], stored["id"])
            if schedule_id is not None:
                self.schedules.ran(schedule_id)
            sent = Sent(stored, True, reply)
            self.writing.announcer.announce(
                stored,
                "message.started" if streaming else "message.created",
                conversation=conversation,
                reply=reply,
                sent=sent,
            )
        return sent

    # a person sends

    def send_by_person(self, user_id: str, conversation_id: str, draft: Draft) -> Sent:
        """Send text, files or a tap (not created when the idempotency key matched)."""
        conversation = self.writing.conversations.for_member(user_id, conversation_id)
        prior = replay(self.writing.storage, user_id, conversation_id, draft.idempotency_key)
        if prior is not None:
            return Sent(prior, False)
        self.writing.conversations.check_not_blocked(conversation_id)
        if draft.buttons not in (None, []) or draft.quick_replies not in (None, []):
            raise invalid(
                "buttons_not_allowed", "Only agents send buttons and quick replies.", "buttons"
            )
        take_rate(self.writing.limiter, "send", user_id, self.writing.config.person_send_rate)
        media = checked_attachments(self.writing.storage, user_id, draft.attachments)
        body: dict[str, Any] = {}
        if draft.action is not None:
            if (draft.text or "").strip() or media:
                raise invalid("invalid_action", "A tap carries no text and no files.", "action")
            action, label = checked_tap(self.writing.storage, conversation_id, draft.action)
            body = {"text": label, "action": action}
        else:
            body["text"] = checked_text(
                draft.text, self.writing.config.max_text_chars, allow_empty=bool(media)
            )
        if media:
            body["attachments"] = [shapes.attachment_json(item) for item in media]
        reply = checked_reply_to(self.writing.storage, conversation_id, draft.reply_to)
        if draft.action is not None and not self.writing.storage.select_button(
            body["action"]["source_message_id"], body["action"]["button_id"]
        ):
            raise conflict("button_already_selected", "A button of this message was taken.")
        return self._create(
            conversation,
            "user",
            user_id,
            body,
            reply=reply,
            key=draft.idempotency_key,
            media=media,
        )

    # an agent sends

    def send_by_agent(self, agent_id: str, conversation_id: str, draft: Draft) -> Sent:
        """Send a message or start a stream (not created when the idempotency key matched)."""
        conversation = self.writing.conversations.for_member(agent_id, conversation_id)
        prior = replay(self.writing.storage, agent_id, conversation_id, draft.idempotency_key)
        if prior is not None:
            return Sent(prior, False)
        schedule_id = None
        if draft.extra.get("schedule_id") is not None:
            schedule_id = self.schedules.check_send(
                agent_id, conversation_id, draft.extra["schedule_id"]
            )
        if not isinstance(draft.stream, bool):
            raise invalid("invalid_stream", "`stream` must be true or false.", "stream")
        take_rate(self.writing.limiter, "send", agent_id, self.writing.config.agent_send_rate)
        reply = checked_reply_to(self.writing.storage, conversation_id, draft.reply_to)
        if draft.stream:
            if draft.text not in (None, ""):
                raise invalid("stream_with_text", "A stream starts empty.", "text")
            if draft.buttons not in (None, []) or draft.quick_replies not in (None, []):
                raise invalid("stream_with_buttons", "Buttons go on the finish.", "buttons")
            if draft.attachments not in (None, []):
                raise invalid(
                    "stream_with_attachments", "A stream carries no files.", "attachments"
                )
            return self._create(
                conversation,
                "agent",
                agent_id,
                {"text": ""},
                reply=reply,
                key=draft.idempotency_key,
                streaming=True,
                schedule_id=schedule_id,
            )
        media = checked_attachments(self.writing.storage, agent_id, draft.attachments)
        body: dict[str, Any] = {
            "text": checked_text(
                draft.text, self.writing.config.max_text_chars, allow_empty=bool(media), trim=False
            )
        }
        if media:
            body["attachments"] = [shapes.attachment_json(item) for item in media]
        buttons = parse_buttons(draft.buttons)
        replies = parse_quick_replies(draft.quick_replies)
        if buttons:
            body["buttons"] = buttons
        if replies:
            body["quick_replies"] = replies
        return self._create(
            conversation,
            "agent",
            agent_id,
            body,
            reply=reply,
            key=draft.idempotency_key,
            media=media,
            schedule_id=schedule_id,
        )

    # activity

    def activity(self, agent_id: str, conversation_id: str, state: Any, label: Any) -> None:
        """Show people what the agent is doing (thinking, working with a label, idle)."""
        self.writing.conversations.for_member(agent_id, conversation_id)
        take_rate(self.writing.limiter, "activity", agent_id, self.writing.config.activity_rate)
        if state not in ACTIVITY_STATES:
            raise invalid("invalid_state", "`state` is thinking, working or idle.", "state")
        data: dict[str, Any] = {
            "conversation_id": conversation_id,
            "agent_id": agent_id,
            "state": state,
        }
        if label is not None:
            if state != "working" or not plain_label(label):
                raise invalid(
                    "invalid_label",
                    f"Only `working` takes a label: one line of 1 to {LABEL_CHARS} characters,"
                    " no links.",
                    "label",
                )
            data["label"] = label.strip()
        data["expires_at"] = clock.iso(clock.later(self.writing.config.typing_seconds))
        self.writing.feeds.push(
            self.writing.conversations.people_of(conversation_id), "activity", data
        )

    def typing(self, agent_id: str, conversation_id: str, state: Any) -> None:
        """The older form of activity: start is thinking, stop is idle."""
        if state not in ("start", "stop"):
            self.writing.conversations.for_member(agent_id, conversation_id)
            raise invalid("invalid_state", "`state` is start or stop.", "state")
        self.activity(agent_id, conversation_id, "thinking" if state == "start" else "idle", None)
