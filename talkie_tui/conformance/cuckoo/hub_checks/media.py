"""The hub checks of media: the kind from the bytes, the files of a message, the size limits."""

from __future__ import annotations

from talkie_tui.conformance.cuckoo.hub import Throwaway
from talkie_tui.conformance.cuckoo.hub_checks import limits
from talkie_tui.conformance.cuckoo.hub_checks.base import (
    PNG,
    SPEC,
    HubSession,
    check_with_agent,
    expect_error,
    messages_path,
    upload,
    upload_png,
)
from talkie_tui.conformance.report import CheckFailed, show


@check_with_agent("media-kind", section="Media")
async def media_kind(session: HubSession, made: Throwaway) -> None:
    """An upload's kind is decided from its bytes, not its name."""
    answer = await upload(session, made, PNG, "notes.txt")
    media = (answer.json() or {}).get("media") if isinstance(answer.json(), dict) else None
    if answer.status not in (200, 201) or not isinstance(media, dict):
        raise CheckFailed(f"a raw upload with ?name= answered {answer.describe()}")
    if media.get("kind") != "image":
        raise CheckFailed(
            f'a PNG named notes.txt was stored as kind {show(media.get("kind"))}; {SPEC}: "The '
            'kind is decided from the bytes, not from what the caller says."'
        )


@check_with_agent("attachments", section="Media")
async def attachments(session: HubSession, made: Throwaway) -> None:
    """At most ten files per message, no duplicates, and each file sent once."""
    hub, path = session.hub, messages_path(made.conversation_id)
    files = [await upload_png(session, made) for _ in range(limits.MAX_FILES + 1)]
    rule = (
        f'{SPEC}: "At most ten files per message, no duplicates, and each file may be sent once."'
    )
    cases = {
        "eleven files": files,
        "one file twice": [files[0], files[0]],
    }
    for what, attached in cases.items():
        answer = await hub.request(
            "POST", path, made.agent, json_body={"text": what, "attachments": attached}
        )
        answer.expect_refused(f"a message with {what}", rule, status=422)
    await hub.ok("POST", path, made.agent, "sending a file", json_body={"attachments": [files[0]]})
    again = await hub.request("POST", path, made.agent, json_body={"attachments": [files[0]]})
    again.expect_refused("sending the same file again", rule)


@check_with_agent("media-limits", section="Media")
async def media_limits(session: HubSession, made: Throwaway) -> None:
    """An image over 16 MiB is refused with 422 file_too_large."""
    answer = await upload(
        session, made, PNG + b"\x00" * (limits.IMAGE_MAX + 1 - len(PNG)), "big.png"
    )
    rule = (
        f'{SPEC}: "image 16 MiB" … "An oversized body is 422 body_too_large and an oversized '
        'file is 422 file_too_large."'
    )
    if answer.status < 400:
        raise CheckFailed(f"an image of 16 MiB and a byte was stored; {rule}")
    try:
        expect_error(answer, 422, "file_too_large", "an image over 16 MiB")
    except CheckFailed as failure:
        raise CheckFailed(f"{failure}; {rule}") from None
