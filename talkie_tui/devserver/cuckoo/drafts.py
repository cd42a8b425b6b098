"""What a sender asks for (`Draft`), what a send made (`Sent`), and the checks every send
shares: idempotency keys, text, attachments, the message replied to, a tap on a button."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from talkie_tui.devserver.common.sqlite import Row
from talkie_tui.devserver.cuckoo.buttons import LABEL_CHARS, id_buttons
from talkie_tui.devserver.cuckoo.errors import conflict, invalid, rate_limited
from talkie_tui.devserver.cuckoo.rates import RateLimiter
from talkie_tui.devserver.cuckoo.storage import Storage

MAX_ATTACHMENTS = 10
KEY_CHARS = 200
_SENT_BY_ALL = ("text", "attachments", "idempotency_key", "reply_to")
PERSON_FIELDS = (*_SENT_BY_ALL, "action", "buttons", "quick_replies")
"""The fields of a person's send (a tap is an `action`; buttons are refused, but named)."""
AGENT_FIELDS = (*_SENT_BY_ALL, "stream", "buttons", "quick_replies", "schedule_id")
"""The fields of an agent's send."""


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


def take_rate(limiter: RateLimiter, what: str, who: str, rate: tuple[float, int]) -> None:
    """429 when `who` has used up its rate of `what`."""
    wait = limiter.take(what, who, rate)
    if wait > 0:
        raise rate_limited(wait)


def replay(storage: Storage, sender_id: str, conversation_id: str, key: Any) -> Row | None:
    """The message a sender already sent with this idempotency key (422, 409 when misused)."""
    if key is None:
        return None
    if not isinstance(key, str) or not 0 < len(key) <= KEY_CHARS:
        raise invalid(
            "invalid_idempotency_key",
            f"An idempotency key is 1 to {KEY_CHARS} characters.",
            field="idempotency_key",
        )
    prior = storage.message_by_key(sender_id, key)
    if prior is not None and prior["conversation_id"] != conversation_id:
        raise conflict(
            "idempotency_key_reused",
            "This idempotency key was used for a message in another conversation.",
            field="idempotency_key",
        )
    return prior


def checked_text(raw: Any, limit: int, *, allow_empty: bool, trim: bool = True) -> str:
    """Checked text: a person's is trimmed; an agent's is kept as sent (indented code)."""
    if raw is None:
        raw = ""
    if not isinstance(raw, str):
        raise invalid("invalid_text", "`text` must be a string.", field="text")
    text = raw.strip() if trim or not raw.strip() else raw
    if len(text) > limit or (not text and not allow_empty):
        raise invalid("invalid_text", f"Text is 1 to {limit} characters.", field="text")
    return text


def checked_attachments(storage: Storage, sender_id: str, raw: Any) -> list[Row]:
    """The sender's unsent uploads `raw` names (422 otherwise)."""
    if raw is None or raw == []:
        return []
    if not isinstance(raw, list) or not all(isinstance(item, str) for item in raw):
        raise invalid("invalid_attachment", "`attachments` is a list of media ids.", "attachments")
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
        row = storage.get_media(media_id)
        if row is None or row["owner_id"] != sender_id:
            raise invalid(
                "unknown_attachment", f"{media_id} is not one of your uploads.", "attachments"
            )
        if row["message_id"] is not None:
            raise invalid("attachment_already_sent", f"{media_id} was sent already.", "attachments")
        rows.append(row)
    return rows


def checked_reply_to(storage: Storage, conversation_id: str, raw: Any) -> Row | None:
    """The message `raw` names, if it is one of this conversation's (else 422)."""
    if raw is None:
        return None
    found = storage.get_message(raw) if isinstance(raw, str) else None
    if found is None or found["conversation_id"] != conversation_id:
        raise invalid(
            "invalid_reply_to", "`reply_to` is a message of this conversation.", "reply_to"
        )
    return found


def checked_tap(storage: Storage, conversation_id: str, raw: Any) -> tuple[dict[str, str], str]:
    """A tap's `action` and the label of the button it names (422, 409 when taken)."""
    if not isinstance(raw, dict) or set(raw) != {"button_id", "source_message_id"}:
        raise invalid("invalid_action", "`action` is `{button_id, source_message_id}`.", "action")
    source = None
    if isinstance(raw["source_message_id"], str):
        source = storage.get_message(raw["source_message_id"])
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


def plain_label(label: Any) -> bool:
    """Whether an activity label is one short line without links."""
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
