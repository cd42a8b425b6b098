"""JSON shapes on the wire: users, agents, conversations, participants and messages, in the
client form (no signature, no sender name) and the agent form (sender name and signature)."""

from __future__ import annotations

from typing import Any

from talkie_tui.devserver.common.sqlite import Row

PREVIEW_CHARS = 100


def user_json(row: Row) -> dict[str, Any]:
    """A person as the client API shows them."""
    return {
        "id": row["id"],
        "display_name": row["display_name"],
        "locale": row["locale"],
        "avatar_media_id": None,
        "created_at": row["created_at"],
        "updated_at": row["updated_at"],
    }


def agent_json(row: Row) -> dict[str, Any]:
    """An agent as `/v1/agent/me` and the management API show it."""
    return {
        "id": row["id"],
        "handle": row["handle"],
        "display_name": row["display_name"],
        "description": row["description"],
        "owner_id": row["owner_id"],
        "starters": row["starters"],
        "supports_schedules": row["supports_schedules"],
        "created_at": row["created_at"],
    }


def binding_json(row: Row) -> dict[str, Any]:
    """A binding (never its secret)."""
    return {
        "id": row["id"],
        "agent_id": row["agent_id"],
        "mode": row["mode"],
        "webhook_url": row["webhook_url"],
        "created_at": row["created_at"],
        "revoked_at": row["revoked_at"],
    }


def conversation_ref(row: Row) -> dict[str, str]:
    """`{id, kind}` of a conversation, as events carry it."""
    return {"id": row["id"], "kind": row["kind"]}


def body_json(body: dict[str, Any], selected: str | None) -> dict[str, Any]:
    """A message body with empty fields left out."""
    out = {name: value for name, value in body.items() if value not in (None, "", [], {})}
    if selected:
        out["selected_button_id"] = selected
    return out


def reply_ref(row: Row | None) -> dict[str, str] | None:
    """What a message replies to: id, sender kind and the start of its text."""
    if row is None:
        return None
    text = str(row["body"].get("text", ""))
    return {
        "id": row["id"],
        "sender_kind": row["sender_kind"],
        "text_preview": text[:PREVIEW_CHARS],
    }


def client_message(
    row: Row,
    reply_to: Row | None,
    delivery: str | None,
    schedule: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A message in the client API's form (`schedule`: `{id, title}` of the schedule it was
    sent for)."""
    return {
        "id": row["id"],
        "conversation_id": row["conversation_id"],
        "sender": {"kind": row["sender_kind"], "id": row["sender_id"]},
        "body": body_json(row["body"], row["selected_button_id"]),
        "reply_to": reply_ref(reply_to),
        "status": row["status"],
        "truncated": row["truncated"],
        "stopped": row["stopped"],
        "schedule": schedule,
        "delivery_status": delivery,
        "created_at": row["created_at"],
    }


def agent_message(row: Row, sender_name: str, reply_to: Row | None) -> dict[str, Any]:
    """A message in the agent API's form (with the hub's signature)."""
    message = {
        "id": row["id"],
        "sender": {"kind": row["sender_kind"], "id": row["sender_id"], "display_name": sender_name},
        "body": body_json(row["body"], row["selected_button_id"]),
        "reply_to": reply_ref(reply_to),
        "status": row["status"],
        "truncated": row["truncated"],
        "stopped": row["stopped"],
        "created_at": row["created_at"],
    }
    if row.get("schedule_id"):
        message["schedule_id"] = row["schedule_id"]
    if row["signature"]:
        message["signature"] = row["signature"]
    return message


def media_json(row: Row) -> dict[str, Any]:
    """A media record as the upload answers it."""
    media: dict[str, Any] = {
        "id": row["id"],
        "kind": row["kind"],
        "mime_type": row["mime_type"],
        "byte_size": row["byte_size"],
        "file_name": row["file_name"],
        "has_thumbnail": row["has_thumbnail"],
        "created_at": row["created_at"],
    }
    for name in ("width", "height", "duration_ms", "waveform"):
        if row.get(name) is not None:
            media[name] = row[name]
    return media


def attachment_json(row: Row) -> dict[str, Any]:
    """A file as a message body lists it (no URL: it is fetched by id)."""
    attachment = {
        "media_id": row["id"],
        "kind": row["kind"],
        "mime_type": row["mime_type"],
        "byte_size": row["byte_size"],
        "file_name": row["file_name"],
    }
    for name in ("width", "height", "duration_ms", "waveform"):
        if row.get(name) is not None:
            attachment[name] = row[name]
    if row["has_thumbnail"]:
        attachment["has_thumbnail"] = True
    return attachment
