"""The talkie/1 checks of §5 runs: an idempotent retry, cancel, a dropped stream."""

from __future__ import annotations

import time
import uuid

from talkie_tui.conformance.checks.base import TEST, Session, check
from talkie_tui.conformance.checks.steps import is_delta, poll_thread
from talkie_tui.conformance.report import CheckFailed
from talkie_tui.conformance.wire import collect_run, expect_ok, open_run
from talkie_tui.protocol.talkie.models import ThreadHistory
from talkie_tui.protocol.talkie.run_request import RunRequest

CANCEL_GRACE = 2.0
DISCONNECT_WAIT = 15.0
DISCONNECT_MARGIN = 5.0  # beyond the duration of a complete slow run


@check("idempotent-retry", section="§5")
async def idempotent_retry(session: Session) -> None:
    """The same run body sent twice → the thread holds the user message and its answer once."""
    echoed = f"retry {uuid.uuid4().hex[:12]}"
    first_request = RunRequest(f"{TEST}echo {echoed}")
    first = await collect_run(session.wire, first_request)
    first.expect_finished()
    # Byte for byte the same body: the same thread, run and message ids.
    retry = RunRequest(
        first_request.text,
        thread_id=first_request.thread_id,
        message_id=first_request.message_id,
        run_id=first_request.run_id,
    )
    await collect_run(session.wire, retry)

    def problem(history: ThreadHistory) -> str | None:
        users = [
            m
            for m in history.messages
            if m.role == "user" and (m.id == retry.message_id or m.content == retry.text)
        ]
        answers = [m for m in history.messages if m.role == "assistant" and m.content == echoed]
        if len(users) != 1:
            return f"the thread holds the retried user message {len(users)} times"
        if len(answers) != 1:
            return f"the thread holds {len(answers)} answers to the retried message"
        return None

    await poll_thread(session, first.thread_id, problem, within=2.0)


@check("cancel", section="§5")
async def cancel(session: Session) -> None:
    """cancelRun during `talkie-test:slow` → {ok: true} and the stream ends soon after."""
    request = RunRequest(f"{TEST}slow")
    async with open_run(session.wire, request) as stream:
        await stream.until(is_delta, "its first text delta")
        answer = await session.wire.request(
            "POST", "cancelRun", {"runId": request.run_id}, json_body={}
        )
        expect_ok(answer, "cancelRun of a live run")
        cancelled_at = time.monotonic()
        result = await stream.read_to_end()
    lasted = result.ended_at - cancelled_at
    if lasted > CANCEL_GRACE:
        raise CheckFailed(f"the stream went on for {lasted:.1f} s after cancelRun answered ok")
    if session.slow is not None and len(result.text) >= len(session.slow.text):
        raise CheckFailed("the cancelled run still delivered the whole slow text")


@check("cancel-ended", section="§5")
async def cancel_ended(session: Session) -> None:
    """cancelRun for a run that already ended → {ok: true}."""
    result = await collect_run(session.wire, f"{TEST}echo cancel after the end")
    answer = await session.wire.request(
        "POST", "cancelRun", {"runId": result.request.run_id}, json_body={}
    )
    expect_ok(answer, "cancelRun of an ended run")


@check("disconnect", section="§5", timeout=DISCONNECT_WAIT + 10.0, slow=True)
async def disconnect(session: Session) -> None:
    """Closing the connection mid-run does not cancel it: the full answer is stored (§5)."""
    request = RunRequest(f"{TEST}slow")
    async with open_run(session.wire, request) as stream:
        await stream.until(is_delta, "its first text delta")
        await stream.until(is_delta, "its second text delta")
        thread_id = stream.started.thread_id if stream.started else request.thread_id
        received = stream.text
    # Leaving the block closed the response half-read, which drops the connection.
    full = session.slow.text if session.slow is not None else None
    # The run needs as long as a complete slow run took; waiting much longer proves nothing.
    within = DISCONNECT_WAIT
    if session.slow is not None:
        within = min(within, session.slow.duration + DISCONNECT_MARGIN)

    def problem(history: ThreadHistory) -> str | None:
        answers = [m.content for m in history.messages if m.role == "assistant"]
        if not answers:
            return f"{within:.0f} s after the disconnect the thread has no answer"
        stored = answers[-1]
        if full is not None and stored == full:
            return None
        if full is None and stored.startswith(received) and len(stored) > len(received):
            return None  # without the slow check's text, more than was received must do
        expected = len(full) if full is not None else f"more than {len(received)}"
        return (
            f"{within:.0f} s after the disconnect the stored answer has {len(stored)} "
            f"characters, expected {expected} (was the run cancelled on disconnect?)"
        )

    await poll_thread(session, thread_id, problem, within=within)
