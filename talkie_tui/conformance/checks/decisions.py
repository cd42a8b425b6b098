"""The talkie/1 checks of §8 decisions: repeated, conflicting, stale, expired."""

from __future__ import annotations

import contextlib

from talkie_tui.conformance.checks.base import Session, check
from talkie_tui.conformance.checks.steps import (
    confirm_until_done,
    decide,
    decided_action,
    proposed_or_skip,
)
from talkie_tui.conformance.report import CheckFailed, CheckSkipped, show
from talkie_tui.conformance.wire import expect_error


@check("decision-repeat", section="§8")
async def decision_repeat(session: Session) -> None:
    """Repeating the same decision → 200 with the same state."""
    proposed = await proposed_or_skip(session)
    first = await confirm_until_done(session, proposed)
    again = decided_action(await decide(session, proposed, "confirm"), "repeating the confirm")
    if again.id != first.id or again.status != first.status:
        raise CheckFailed(
            f"repeating the confirm answered action {show(again.id, 30)} "
            f"{show(again.status)}, expected {show(first.id, 30)} {show(first.status)}"
        )


@check("decision-conflict", section="§8")
async def decision_conflict(session: Session) -> None:
    """The opposite decision after one was made → 409 conflict, and the action is unchanged."""
    proposed = await proposed_or_skip(session)
    cancelled = decided_action(await decide(session, proposed, "cancel"), "cancelling")
    if cancelled.status != "cancelled":
        raise CheckFailed(f'after cancel the action is {show(cancelled.status)}, not "cancelled"')
    answer = await decide(session, proposed, "confirm")
    expect_error(answer, 409, "conflict", "confirming a cancelled action")
    now = await session.client.action(proposed.id)
    if now.status != "cancelled":
        raise CheckFailed(f"the refused confirm changed the action to {show(now.status)}")


@check("decision-stale", section="§8")
async def decision_stale(session: Session) -> None:
    """A decision with a changed paramsHash → 409 stale, and the action stays pending."""
    proposed = await proposed_or_skip(session)
    changed = "sha256:" + "0" * 64
    if changed == proposed.params_hash:
        changed = "sha256:" + "1" * 64
    try:
        answer = await decide(session, proposed, "confirm", params_hash=changed)
        expect_error(answer, 409, "stale", "confirming with a changed paramsHash")
        now = await session.client.action(proposed.id)
        if now.status != "pending":
            raise CheckFailed(f"the refused confirm changed the action to {show(now.status)}")
    finally:
        # Leave no pending fixture behind; a failure here must not hide the verdict above.
        with contextlib.suppress(CheckFailed):
            await decide(session, proposed, "cancel")


@check("decision-expired", section="§8", needs_test_mode=False)
async def decision_expired(session: Session) -> None:
    """410 expired cannot be forced on an arbitrary server."""
    raise CheckSkipped("an action cannot be made to expire on demand; 410 expired is not tested")
