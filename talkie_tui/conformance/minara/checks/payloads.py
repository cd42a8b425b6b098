"""The Minara checks of what a request may carry: attachments, models, error bodies, unknown
fields."""

from __future__ import annotations

import uuid

from talkie_tui.conformance.minara.checks.base import (
    CHAT,
    STREAM,
    check,
    expect_error,
    expect_refusal,
    sessions_total,
)
from talkie_tui.conformance.minara.session import Session
from talkie_tui.conformance.minara.wire import Turn
from talkie_tui.conformance.report import CheckFailed, show
from talkie_tui.conformance.wire import Answer

MIB = 1024 * 1024
MAX_ATTACHMENTS = 8
IMAGE_LIMIT = 5 * MIB


async def _upload(session: Session, name: str, data: bytes, media_type: str) -> Answer:
    boundary = f"talkie{uuid.uuid4().hex}"
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
            f"Content-Type: {media_type}\r\n\r\n"
        ).encode()
        + data
        + f"\r\n--{boundary}--\r\n".encode()
    )
    return await session.wire.request(
        "POST",
        "/v1/files",
        content=body,
        headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
    )


def _key_of(answer: Answer, what: str) -> str:
    data = answer.json()
    if answer.status != 200 or not isinstance(data, dict) or not isinstance(data.get("key"), str):
        raise CheckFailed(f"uploading {what} answered {answer.describe()}, not 200 {{key, …}}")
    return str(data["key"])


PNG_HEADER = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00"
)


@check("attachment-limits", section=f"{CHAT} Attachments and voice")
async def attachment_limits(session: Session) -> None:
    """Nine attachments, or an image over 5 MiB, are refused before any agent work."""
    rule = f'{CHAT}: "Limits: 8 attachments per turn, 5 MiB per image, 20 MiB per other file"'
    keys = []
    for number in range(MAX_ATTACHMENTS + 1):
        answer = await _upload(
            session, f"note{number}.txt", b"conformance %d\n" % number, "text/plain"
        )
        keys.append(_key_of(answer, "a small text file"))
    attachments = [
        {"key": key, "filename": f"note{n}.txt", "media_type": "text/plain", "kind": "text"}
        for n, key in enumerate(keys)
    ]
    total = await sessions_total(session)
    answer = await session.wire.request(
        "POST", "/v1/chat/stream", json_body={"message": "nine files", "attachments": attachments}
    )
    answer.expect_refused(f"a turn with {len(keys)} attachments", rule)
    expect_error(answer, answer.status, f"a turn with {len(keys)} attachments")
    big = PNG_HEADER + b"\x00" * (IMAGE_LIMIT + 1 - len(PNG_HEADER))
    answer = await _upload(session, "big.png", big, "image/png")
    if answer.status == 200:
        key = _key_of(answer, "an image over 5 MiB")
        image = {"key": key, "filename": "big.png", "media_type": "image/png", "kind": "image"}
        answer = await session.wire.request(
            "POST", "/v1/chat/stream", json_body={"message": "a big image", "attachments": [image]}
        )
        answer.expect_refused("a turn with an image over 5 MiB", rule)
    expect_error(answer, answer.status, "an image over 5 MiB")
    if await sessions_total(session) != total:
        raise CheckFailed(
            "a refused turn still created a session: it was refused after agent work began"
        )


@check("models", section=f"{CHAT} Model selection")
async def models(session: Session) -> None:
    """The models list has the documented shape; a turn with an unknown model → 400."""
    answer = await session.wire.request("GET", "/v1/llm/available-models")
    data = answer.json()
    shape = (
        f'{STREAM}: "GET /v1/llm/available-models → {{ "models": [ {{ "id", "label"?, '
        '"reasoning"?: bool } ], "default" }"'
    )
    listed = data.get("models") if isinstance(data, dict) else None
    if answer.status != 200 or not isinstance(listed, list):
        raise CheckFailed(f"the answer is {answer.describe()}; {shape}")
    problems = []
    for item in listed:
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            problems.append(f"the model {show(item)} has no string id")
        elif "label" in item and not isinstance(item["label"], str):
            problems.append(f"model {show(item['id'])}: label is not a string")
        elif "reasoning" in item and not isinstance(item["reasoning"], bool):
            problems.append(f"model {show(item['id'])}: reasoning is not a boolean")
    ids = [item.get("id") for item in listed if isinstance(item, dict)]
    if "default" not in data:
        problems.append("default is missing")
    elif data["default"] is not None and data["default"] not in ids:
        problems.append(f"default {show(data['default'])} is not one of the models")
    if problems:
        raise CheckFailed("; ".join(problems) + f"; {shape}")
    unknown = f"conformance-no-such-model-{uuid.uuid4().hex[:8]}"
    answer = await session.wire.request(
        "POST", "/v1/chat/stream", json_body={"message": "hello", "model": unknown}
    )
    expect_refusal(
        answer,
        400,
        "a turn with an unknown model",
        f'{CHAT}: "Invalid values fail with 400 before the turn starts"',
    )


@check("error-bodies", section=f"{STREAM} Turn request and session rows")
async def error_bodies(session: Session) -> None:
    """Unknown sessions → 404, malformed or incomplete turn requests → 400, as the error body."""
    wire = session.wire
    unknown = f"/v1/sessions/conformance-unknown-{uuid.uuid4().hex}"
    expect_error(await wire.request("GET", unknown), 404, f"GET {unknown[:40]}…")
    expect_error(
        await wire.request(
            "POST",
            "/v1/chat/stream",
            content=b'{"message": ',
            headers={"Content-Type": "application/json"},
        ),
        400,
        "POST /v1/chat/stream with a body that is not JSON",
    )
    expect_error(
        await wire.request("POST", "/v1/chat/stream", json_body={"session_id": "x"}),
        400,
        "POST /v1/chat/stream without message",
    )


@check("unknown-fields", section=f"{CHAT} Versioning and compatibility")
async def unknown_fields(session: Session) -> None:
    """Unknown request fields and frame types are tolerated: the turn runs, the socket stays."""
    rule = (
        f'{CHAT}: "The protocol evolves additively. New event types and new optional fields '
        'appear over time"'
    )
    answer = await session.wire.request(
        "POST",
        "/v1/chat/stream",
        json_body={"message": "hello", "x_conformance_future_field": {"nested": [1, 2]}},
    )
    accepted = answer.json()
    if answer.status != 200 or not isinstance(accepted, dict) or "session_id" not in accepted:
        raise CheckFailed(
            f"a turn request with a field the gateway does not know answered "
            f"{answer.describe()}; {rule}"
        )
    key = str(accepted["session_id"])
    async with session.wire.socket() as socket:
        await socket.send({"type": "x_conformance_future_frame", "anything": True})
        await socket.subscribe(key, 0, x_conformance_hint="ignored")
        turn = Turn(key, await socket.subscribed(key))
        await turn.read(socket)
        await socket.send({"type": "ping"})
        while (frame := await socket.frame()).get("type") != "pong":
            if frame.get("type") not in ("error", "event"):
                raise CheckFailed(
                    f"after a frame of an unknown type the socket sent {show(frame)}, no pong; "
                    f"{rule}"
                )
