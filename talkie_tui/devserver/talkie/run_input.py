"""Validation of the `POST run` body (an AG-UI RunAgentInput) into what the server needs."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from ag_ui.core import RunAgentInput, TextPart, UserMessage
from starlette.requests import Request

from talkie_tui.devserver.common.body_cap import read_capped
from talkie_tui.devserver.common.http import validated_body
from talkie_tui.devserver.common.json_input import JsonInputError, decode
from talkie_tui.devserver.talkie.errors import ApiError, invalid_request

TITLE_CHARS = 60
MAX_BODY_BYTES = 2_000_000


@dataclass(frozen=True)
class UserInput:
    """One user message of the request."""

    id: str
    text: str


@dataclass(frozen=True)
class RunRequest:
    """A validated run request."""

    thread_id: str
    run_id: str
    messages: list[UserInput]
    channel: str


def _too_large() -> ApiError:
    return ApiError(413, "too_large", f"The request body is over {MAX_BODY_BYTES} bytes.")


async def read_body(request: Request) -> bytes:
    """The raw request body, or 413 once it passes MAX_BODY_BYTES (nothing more is read)."""
    return await read_capped(request, MAX_BODY_BYTES, _too_large)


def parse_json_body(body: bytes) -> Any:
    """Decode a JSON request body or raise 400."""
    if not body.strip():
        raise invalid_request("The request body is empty; a JSON object is expected.")
    try:
        return decode(body)
    except JsonInputError as error:
        raise invalid_request(f"The request body is not valid JSON: {error}") from None


def message_text(message: UserMessage) -> str:
    """The text of a user message (text parts joined; other parts ignored)."""
    if isinstance(message.content, str):
        return message.content
    return "".join(part.text for part in message.content if isinstance(part, TextPart))


def parse_run_request(payload: Any, max_chars: int) -> RunRequest:
    """Validate a RunAgentInput; unknown fields and `protocolVersion` are accepted and ignored."""
    run_input = validated_body(
        RunAgentInput,
        payload,
        what="run request",
        invalid=invalid_request,
        not_an_object="The request body must be a JSON object (an AG-UI RunAgentInput).",
    )
    if not run_input.thread_id.strip() or not run_input.run_id.strip():
        raise invalid_request("threadId and runId must not be empty.")
    users = [message for message in run_input.messages if isinstance(message, UserMessage)]
    if not users:
        raise invalid_request("messages must contain at least one user message.")
    inputs = [UserInput(message.id, message_text(message)) for message in users]
    for item in inputs:
        if not item.text.strip():
            raise invalid_request(f"Message {item.id} has no text.")
        if len(item.text) > max_chars:
            raise ApiError(
                413,
                "too_large",
                f"The message is {len(item.text)} characters long; the limit is {max_chars}.",
            )
    return RunRequest(run_input.thread_id, run_input.run_id, inputs, _channel(run_input))


def _channel(run_input: RunAgentInput) -> str:
    props = run_input.forwarded_props
    talkie = props.get("talkie") if isinstance(props, dict) else None
    channel = talkie.get("channel") if isinstance(talkie, dict) else None
    return channel if channel in ("chat", "voice") else "chat"


def thread_title(text: str) -> str:
    """A thread title from the first message: no control characters, one line, ≤ 60 chars."""
    visible = "".join(
        " " if char in "\t\n\r" else char
        for char in text
        if char in "\t\n\r" or unicodedata.category(char) not in ("Cc", "Cf")
    )
    title = re.sub(r"\s+", " ", visible).strip()
    if len(title) > TITLE_CHARS:
        title = title[: TITLE_CHARS - 1].rstrip() + "…"
    return title or "New conversation"
