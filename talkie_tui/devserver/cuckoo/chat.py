"""Messages: sending (a person's text, files or tap; an agent's text, files, buttons or stream),
streams (append, finish, the hub's own finish when idle or too long), stop, and activity.

Every message created is pushed to the people in its conversation and, once complete, becomes
a `message.created` event for every agent in it but its sender.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from talkie_tui.devserver.common import clock
from talkie_tui.devserver.common.sqlite import Row
from talkie_tui.devserver.cuckoo import ids, shapes, signing
from talkie_tui.devserver.cuckoo.buttons import (
    LABEL_CHARS,
    id_buttons,
    parse_buttons,
    parse_quick_replies,
)
from talkie_tui.devserver.cuckoo.errors import conflict, invalid, not_found, rate_limited

if TYPE_CHECKING:
    from talkie_tui.devserver.cuckoo.services import Hub

MAX_ATTACHMENTS = 10
KEY_CHARS = 200
ACTIVITY_STATES = ("thinking", "working", "idle")


class Unread:
    """A lookup not made yet (the caller had nothing to hand over)."""


UNREAD = Unread()


@dataclass
class Draft:
    """What a sender asked for, before the rules are checked."""

    text: str | None = None
    attachments: Any = None
    idempotency_key: str | None = None
    reply_to: str | None = None
    buttons: Any = None
    quick_replies: Any = None
    action: Any = None
    stream: Any = False
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, body: dict[str, Any]) -> Draft:
        """A draft from a request body or socket frame (types are checked later)."""
        return cls(
            text=body.get("text"),
            attachments=body.get("attachments"),
            idempotency_key=body.get("idempotency_key"),
            reply_to=body.get("reply_to"),
            buttons=body.get("buttons"),
            quick_replies=body.get("quick_replies"),
            action=body.get("action"),
            stream=body.get("stream") or False,
            extra={"schedule_id": body.get("schedule_id")},
        )


@dataclass
class Sent:
    """A message a send made (`created`) or found again by its idempotency key; when made, the
    message it replies to, its sender's name and how many agents it became an event for."""

    row: Row
    created: bool
    reply: Row | None = None
    sender_name: str | None = None
    events: int = 0


class Chat:
    """The rules of sending and streaming."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub

    # forms

    def _reply_of(self, row: Row) -> Row | None:
        return self.hub.storage.get_message(row["reply_to_id"]) if row["reply_to_id"] else None

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
            reply = self._reply_of(row)
        if isinstance(delivery, Unread):
            delivery = None
            if row["sender_kind"] == "user":
                delivery = self.hub.storage.delivery_status(row["id"])
        schedule = None
        if row.get("schedule_id"):
            schedule = self.hub.schedules.refs([row["schedule_id"]]).get(row["schedule_id"])
        return shapes.client_message(row, reply, delivery, schedule)

    def agent_form(
        self, row: Row, *, reply: Row | Unread | None = UNREAD, sender_name: str | None = None
    ) -> dict[str, Any]:
        """A message as agents see it (signed); `reply` and `sender_name` if the caller has
        them."""
        if isinstance(reply, Unread):
            reply = self._reply_of(row)
        if sender_name is None:
            sender_name = self.hub.conversations.name_of(row["sender_kind"], row["sender_id"])
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

    # checks shared by people and agents

    def _replay(self, sender_id: str, conversation_id: str, key: Any) -> Row | None:
        if key is None:
            return None
        if not isinstance(key, str) or not 0 < len(key) <= KEY_CHARS:
            raise invalid(
                "invalid_idempotency_key",
                f"An idempotency key is 1 to {KEY_CHARS} characters.",
                field="idempotency_key",
            )
        prior = self.hub.storage.message_by_key(sender_id, key)
        if prior is not None and prior["conversation_id"] != conversation_id:
            raise conflict(
                "idempotency_key_reused",
                "This idempotency key was used for a message in another conversation.",
                field="idempotency_key",
            )
        return prior

    def _rate(self, what: str, who: str, rate: tuple[float, int]) -> None:
        wait = self.hub.limiter.take(what, who, rate)
        if wait > 0:
            raise rate_limited(wait)

    def _text(self, raw: Any, *, allow_empty: bool, trim: bool = True) -> str:
        """Checked text: a person's is trimmed; an agent's is kept as sent (indented code)."""
        if raw is None:
            raw = ""
        if not isinstance(raw, str):
            raise invalid("invalid_text", "`text` must be a string.", field="text")
        text = raw.strip() if trim or not raw.strip() else raw
        limit = self.hub.config.max_text_chars
        if len(text) > limit or (not text and not allow_empty):
            raise invalid("invalid_text", f"Text is 1 to {limit} characters.", field="text")
        return text

    def _attachments(self, sender_id: str, raw: Any) -> list[Row]:
        if raw is None or raw == []:
            return []
        if not isinstance(raw, list) or not all(isinstance(item, str) for item in raw):
            raise invalid(
                "invalid_attachment", "`attachments` is a list of media ids.", "attachments"
            )
        if len(raw) > MAX_ATTACHMENTS:
            raise invalid(
                "too_many_attachments",
                f"At most {MAX_ATTACHMENTS} files per message.",
                field="attachments",
            )
        if len(set(raw)) != len(raw):
            raise invalid("invalid_attachment", "A file is attached twice.", "attachments")
        rows = []
        for media_id in raw:
            row = self.hub.storage.get_media(media_id)
            if row is None or row["owner_id"] != sender_id:
                raise invalid(
                    "unknown_attachment", f"{media_id} is not one of your uploads.", "attachments"
                )
            if row["message_id"] is not None:
                raise invalid(
                    "attachment_already_sent", f"{media_id} was sent already.", "attachments"
                )
            rows.append(row)
        return rows

    def _reply_to(self, conversation_id: str, raw: Any) -> Row | None:
        """The message `raw` names, if it is one of this conversation's (else 422)."""
        if raw is None:
            return None
        found = self.hub.storage.get_message(raw) if isinstance(raw, str) else None
        if found is None or found["conversation_id"] != conversation_id:
            raise invalid(
                "invalid_reply_to", "`reply_to` is a message of this conversation.", "reply_to"
            )
        return found

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
        row["signature"] = signing.sign(self.hub.signing_key, row)
        storage = self.hub.storage
        with storage.grouped():
            stored = storage.add_message(row)
            if media:
                media_ids = [item["id"] for item in media]
                storage.attach_media(media_ids, conversation["id"], stored["id"])
            if schedule_id is not None:
                self.hub.schedules.ran(schedule_id)
            sent = Sent(stored, True, reply)
            self._announce(
                stored,
                "message.started" if streaming else "message.created",
                conversation=conversation,
                reply=reply,
                sent=sent,
            )
        return sent

    def people_of(self, conversation_id: str) -> list[str]:
        """The people in a conversation."""
        return [
            part["member_id"]
            for part in self.hub.storage.participants_named(conversation_id)
            if part["kind"] == "user"
        ]

    def _announce(
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
        parts = self.hub.storage.participants_named(conversation_id)
        if isinstance(reply, Unread):
            reply = self._reply_of(row)
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
        self.hub.feeds.push(
            [part["member_id"] for part in parts if part["kind"] == "user"],
            frame_type,
            {
                "conversation_id": conversation_id,
                "message": self.client_form(
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
            conversation = self.hub.storage.get_conversation(conversation_id)
            assert conversation is not None
        message = self.agent_form(
            row, reply=reply, sender_name=sender["display_name"] if sender else None
        )
        for agent_id in agents:
            self.hub.outbox.emit(
                agent_id,
                "message.created",
                {
                    "conversation": shapes.conversation_ref(conversation),
                    "message": message,
                    "participants": self.hub.conversations.agent_participants(
                        conversation_id, agent_id, parts
                    ),
                },
                message_id=row["id"],
            )
        if sent is not None:
            sent.events = len(agents)

    def delivery_changed(self, message_id: str) -> None:
        """Tell the sender's devices a message's delivery state."""
        found = self.hub.storage.sender_and_delivery(message_id)
        if found is None or found[0]["sender_kind"] != "user":
            return
        row, status = found
        self.hub.feeds.push(
            [row["sender_id"]],
            "delivery.updated",
            {
                "conversation_id": row["conversation_id"],
                "message_id": message_id,
                "delivery_status": status,
            },
        )

    # a person sends

    def send_by_person(self, user_id: str, conversation_id: str, draft: Draft) -> Sent:
        """Send text, files or a tap (not created when the idempotency key matched)."""
        conversation = self.hub.conversations.for_member(user_id, conversation_id)
        prior = self._replay(user_id, conversation_id, draft.idempotency_key)
        if prior is not None:
            return Sent(prior, False)
        self.hub.conversations.check_not_blocked(conversation_id)
        if draft.buttons not in (None, []) or draft.quick_replies not in (None, []):
            raise invalid(
                "buttons_not_allowed", "Only agents send buttons and quick replies.", "buttons"
            )
        self._rate("send", user_id, self.hub.config.person_send_rate)
        media = self._attachments(user_id, draft.attachments)
        body: dict[str, Any] = {}
        if draft.action is not None:
            if (draft.text or "").strip() or media:
                raise invalid("invalid_action", "A tap carries no text and no files.", "action")
            action, label = self._tap(conversation_id, draft.action)
            body = {"text": label, "action": action}
        else:
            body["text"] = self._text(draft.text, allow_empty=bool(media))
        if media:
            body["attachments"] = [shapes.attachment_json(item) for item in media]
        reply = self._reply_to(conversation_id, draft.reply_to)
        if draft.action is not None and not self.hub.storage.select_button(
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

    def _tap(self, conversation_id: str, raw: Any) -> tuple[dict[str, str], str]:
        if not isinstance(raw, dict) or set(raw) != {"button_id", "source_message_id"}:
            raise invalid(
                "invalid_action", "`action` is `{button_id, source_message_id}`.", "action"
            )
        source = None
        if isinstance(raw["source_message_id"], str):
            source = self.hub.storage.get_message(raw["source_message_id"])
        if (
            source is None
            or source["conversation_id"] != conversation_id
            or source["sender_kind"] != "agent"
            or source["status"] != "complete"
        ):
            raise invalid(
                "invalid_action", "The action names no finished agent message here.", "action"
            )
        button = id_buttons(source["body"].get("buttons")).get(str(raw["button_id"]))
        if button is None:
            raise invalid("invalid_action", "That message has no such button.", "action")
        if source["selected_button_id"] is not None:
            raise conflict("button_already_selected", "A button of this message was taken.")
        action = {"button_id": button["id"], "source_message_id": source["id"]}
        return action, button["label"]

    # an agent sends

    def send_by_agent(self, agent_id: str, conversation_id: str, draft: Draft) -> Sent:
        """Send a message or start a stream (not created when the idempotency key matched)."""
        conversation = self.hub.conversations.for_member(agent_id, conversation_id)
        prior = self._replay(agent_id, conversation_id, draft.idempotency_key)
        if prior is not None:
            return Sent(prior, False)
        schedule_id = None
        if draft.extra.get("schedule_id") is not None:
            schedule_id = self.hub.schedules.check_send(
                agent_id, conversation_id, draft.extra["schedule_id"]
            )
        if not isinstance(draft.stream, bool):
            raise invalid("invalid_stream", "`stream` must be true or false.", "stream")
        self._rate("send", agent_id, self.hub.config.agent_send_rate)
        reply = self._reply_to(conversation_id, draft.reply_to)
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
        media = self._attachments(agent_id, draft.attachments)
        body: dict[str, Any] = {"text": self._text(draft.text, allow_empty=bool(media), trim=False)}
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

    # streams

    def append(self, agent_id: str, message_id: str, text: Any) -> None:
        """Add text to the agent's open stream (409 `not_streaming`, `stopped`)."""
        row = self.hub.storage.get_message(message_id) if isinstance(message_id, str) else None
        if row is None or row["sender_id"] != agent_id:
            raise conflict("not_streaming", "That message is not a stream of yours.")
        if row["stopped"]:
            raise conflict("stopped", "The person stopped this reply.")
        if row["status"] != "streaming":
            raise conflict("not_streaming", "That stream is finished.")
        if not isinstance(text, str):
            raise invalid("invalid_text", "`text` must be a string.", "text")
        self._rate("delta", agent_id, self.hub.config.delta_rate)
        limit = self.hub.config.max_text_chars
        current = str(row["body"].get("text", ""))
        room = max(0, limit - len(current))
        piece = text[:room]
        fields: dict[str, Any] = {"last_append_at": clock.iso(clock.now())}
        if len(text) > room:
            fields["truncated"] = True
        if piece:
            fields["body"] = {**row["body"], "text": current + piece}
        self.hub.storage.update_message(message_id, **fields)
        if piece:
            self.hub.feeds.push(
                self.people_of(row["conversation_id"]),
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
        row = self.hub.storage.get_message(message_id) if isinstance(message_id, str) else None
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
        limit = self.hub.config.max_text_chars
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
        stored = self.hub.storage.update_message(
            row["id"],
            body=body,
            status="complete",
            truncated=finished["truncated"],
            stopped=stopped,
            signature=signing.sign(self.hub.signing_key, finished),
            updated_at=clock.iso(clock.now()),
        )
        self._announce(stored, "message.completed")
        return stored

    def sweep_streams(self) -> None:
        """Finish streams idle too long (truncated) or open too long."""
        now = clock.now()
        config = self.hub.config
        for row in self.hub.storage.streaming_messages():
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
        conversation = self.hub.conversations.for_member(user_id, conversation_id)
        stopped: dict[str, str] = {}
        rows = []
        for row in self.hub.storage.streaming_in(conversation_id):
            if row["sender_kind"] == "agent":
                rows.append(self.close_stream(row, truncated=True, stopped=True))
                stopped[row["sender_id"]] = row["id"]
        for part in self.hub.storage.participants_named(conversation_id):
            if part["kind"] == "agent" and not part["blocked"]:
                self.hub.outbox.emit(
                    part["member_id"],
                    "stop.requested",
                    {
                        "conversation": shapes.conversation_ref(conversation),
                        "message_id": stopped.get(part["member_id"]),
                    },
                )
        return rows

    # activity

    def activity(self, agent_id: str, conversation_id: str, state: Any, label: Any) -> None:
        """Show people what the agent is doing (thinking, working with a label, idle)."""
        self.hub.conversations.for_member(agent_id, conversation_id)
        self._rate("activity", agent_id, self.hub.config.activity_rate)
        if state not in ACTIVITY_STATES:
            raise invalid("invalid_state", "`state` is thinking, working or idle.", "state")
        data: dict[str, Any] = {
            "conversation_id": conversation_id,
            "agent_id": agent_id,
            "state": state,
        }
        if label is not None:
            if state != "working" or not _plain_label(label):
                raise invalid(
                    "invalid_label",
                    f"Only `working` takes a label: one line of 1 to {LABEL_CHARS} characters,"
                    " no links.",
                    "label",
                )
            data["label"] = label.strip()
        data["expires_at"] = clock.iso(clock.later(self.hub.config.typing_seconds))
        self.hub.feeds.push(self.people_of(conversation_id), "activity", data)

    def typing(self, agent_id: str, conversation_id: str, state: Any) -> None:
        """The older form of activity: start is thinking, stop is idle."""
        if state not in ("start", "stop"):
            self.hub.conversations.for_member(agent_id, conversation_id)
            raise invalid("invalid_state", "`state` is start or stop.", "state")
        self.activity(agent_id, conversation_id, "thinking" if state == "start" else "idle", None)


def _plain_label(label: Any) -> bool:
    if not isinstance(label, str):
        return False
    text = label.strip()
    lowered = text.lower()
    return (
        1 <= len(text) <= LABEL_CHARS
        and "\n" not in text
        and "://" not in lowered
        and "www." not in lowered
    )
