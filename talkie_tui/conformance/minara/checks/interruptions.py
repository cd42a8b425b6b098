"""The Minara checks of what breaks into a turn: interactions, interject, interrupt."""

from __future__ import annotations

import asyncio
import time
import uuid

from talkie_tui.conformance.minara.checks.base import (
    CHAT,
    POLL,
    STREAM,
    check,
    expect_refusal,
)
from talkie_tui.conformance.minara.checks.turns import live_turn
from talkie_tui.conformance.minara.session import Session
from talkie_tui.conformance.report import CheckFailed, show

INTERRUPT_GRACE = 15.0


@check("interaction-not-pending", section=f"{CHAT} Interactions")
async def interaction_not_pending(session: Session) -> None:
    """Answering a question that is not pending → 404 (the SDK's `not_pending`)."""
    path = f"/v1/interactions/q_conformance_{uuid.uuid4().hex}/answer"
    answer = await session.wire.request(
        "POST", path, json_body={"answers": [{"questionIndex": 0, "selected_labels": ["Confirm"]}]}
    )
    expect_refusal(
        answer,
        404,
        "answering an unknown question",
        f'{CHAT}: ""not_pending" (HTTP 404 on the wire) is an expected outcome"',
        asked=f"POST {path[:40]}…",
    )


@check("interject-idle", section=f"{STREAM} Turn request and session rows")
async def interject_idle(session: Session) -> None:
    """Interjecting with no running turn → 409 {"status": "no_active_turn"}; no message → 400."""
    finished = await session.finished_turn()
    await _until_idle(session, finished.session_id)
    answer = await session.wire.request(
        "POST",
        "/v1/chat/interject",
        json_body={"session_id": finished.session_id, "message": "one more thing"},
    )
    data = answer.json()
    if answer.status != 409 or not isinstance(data, dict) or data.get("status") != "no_active_turn":
        raise CheckFailed(
            f"interjecting with no running turn answered {answer.describe()}; {STREAM}: "
            '"POST /v1/chat/interject answers 409 {"status": "no_active_turn"} when '
            'nothing runs"'
        )
    answer = await session.wire.request(
        "POST", "/v1/chat/interject", json_body={"session_id": finished.session_id}
    )
    if answer.status != 400:
        raise CheckFailed(f"interjecting without a message answered {answer.describe()}, not 400")


async def _until_idle(session: Session, session_id: str) -> None:
    path = f"/v1/sessions/{session_id}"
    deadline = time.monotonic() + 30.0
    while time.monotonic() < deadline:
        detail = await session.wire.json("GET", path, f"GET {path}")
        if detail.get("is_streaming") is not True:
            return
        await asyncio.sleep(POLL)
    raise CheckFailed(f"session {show(session_id)} still streams after 30 s")


@check("interrupt", section=f"{CHAT} Stream events; {STREAM} Turn request and session rows")
async def interrupt(session: Session) -> None:
    """Interrupting a turn ends it with `done` interrupted: true; again → no_active_turn."""
    wire = session.wire
    async with live_turn(session, count=1) as (key, socket, turn):
        answer = await wire.request("POST", "/v1/chat/interrupt", json_body={"session_id": key})
        data = answer.json()
        status = data.get("status") if isinstance(data, dict) else None
        if answer.status != 200 or status not in ("interrupted", "no_active_turn"):
            raise CheckFailed(
                f"POST /v1/chat/interrupt answered {answer.describe()}, not 200 "
                '{"status": "interrupted"} (or "no_active_turn" once the turn ended)'
            )
        await turn.read(socket, wait=INTERRUPT_GRACE)
    end = turn.events[-1][1]
    if status == "interrupted" and (
        end.get("type") != "done" or end.get("data", {}).get("interrupted") is not True
    ):
        raise CheckFailed(
            f"after an interrupt answered interrupted the turn ended with {show(end, 100)}; "
            f'{CHAT}: "interrupted: true when the user stopped the turn via POST '
            '/v1/chat/interrupt"'
        )
    again = await wire.request("POST", "/v1/chat/interrupt", json_body={"session_id": key})
    data = again.json()
    if again.status != 200 or not isinstance(data, dict) or data.get("status") != "no_active_turn":
        raise CheckFailed(
            f"interrupting an ended turn answered {again.describe()}; {STREAM}: "
            '"POST /v1/chat/interrupt answers 200 {"status": "no_active_turn"}"'
        )
    missing = await wire.request("POST", "/v1/chat/interrupt", json_body={})
    if missing.status != 400:
        raise CheckFailed(
            f"POST /v1/chat/interrupt without session_id answered {missing.describe()}, not 400"
        )
