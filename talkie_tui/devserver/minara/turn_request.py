"""The body of `POST /v1/chat/stream`, checked before any turn starts (errors are 400s)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from talkie_tui.devserver.common.http import validated_body
from talkie_tui.devserver.minara.bodies import parse_json_body
from talkie_tui.devserver.minara.config import GatewayConfig
from talkie_tui.devserver.minara.errors import ApiError, invalid_request
from talkie_tui.devserver.minara.files import ATTACHMENT_KINDS, FileStore, size_limit_error
from talkie_tui.devserver.minara.models import check_choice


class AttachmentRef(BaseModel):
    """One attachment of a turn request: an uploaded file's key and how to show it."""

    model_config = ConfigDict(extra="ignore")

    key: str = Field(min_length=1, max_length=500)
    filename: str | None = Field(default=None, max_length=255)
    media_type: str | None = Field(default=None, max_length=255)
    size: int | None = None
    kind: str | None = None


class TurnBody(BaseModel):
    """The request fields of `minara-stream.md`."""

    model_config = ConfigDict(extra="ignore")

    message: str
    session_id: str | None = Field(default=None, min_length=1, max_length=200)
    kind: Literal["chat"] = "chat"
    attachments: list[AttachmentRef] = Field(default_factory=list)
    model: str | None = None
    reasoning_effort: str | None = None
    voice_input_key: str | None = Field(default=None, min_length=1, max_length=500)
    client_message_id: str | None = Field(default=None, min_length=1, max_length=200)


def parse_turn_body(raw: bytes, config: GatewayConfig) -> TurnBody:
    """A validated turn request (model, attachment count and message length included)."""
    payload = parse_json_body(raw)
    body = validated_body(
        TurnBody,
        payload,
        what="turn request",
        invalid=invalid_request,
        not_an_object="The body must be a JSON object with at least `message`.",
    )
    if not body.message.strip() and not body.attachments:
        raise invalid_request("`message` is empty.")
    if len(body.message) > config.max_message_chars:
        raise invalid_request(f"`message` is over {config.max_message_chars} characters.")
    if len(body.attachments) > config.max_attachments:
        raise invalid_request(
            f"A turn takes at most {config.max_attachments} attachments "
            f"({len(body.attachments)} were sent)."
        )
    check_choice(body.model, body.reasoning_effort)
    return body


def resolve_attachments(body: TurnBody, files: FileStore) -> list[dict[str, Any]]:
    """The attachments as stored on the user row; 400 for unknown keys, 413 over a limit."""
    resolved = []
    for item in body.attachments:
        record = files.get(item.key)
        if record is None:
            raise ApiError(
                400,
                "unknown_attachment",
                f"Attachment {item.key!r} is not an uploaded file (POST /v1/files first).",
            )
        kind = item.kind or record["kind"]
        if kind not in ATTACHMENT_KINDS:
            raise invalid_request(
                f"Attachment kind {kind!r} is not one of {', '.join(ATTACHMENT_KINDS)}."
            )
        filename = item.filename or record["filename"]
        too_big = size_limit_error(filename, kind, int(record["size"]), files.config)
        if too_big is not None:
            raise too_big
        resolved.append(
            {
                "key": record["key"],
                "filename": filename,
                "media_type": record["media_type"],
                "size": record["size"],
                "kind": kind,
                "url": files.url_of(record["key"]),
            }
        )
    if body.voice_input_key is not None and files.get(body.voice_input_key) is None:
        raise invalid_request(f"voice_input_key {body.voice_input_key!r} is not a stored file.")
    return resolved
