"""The steps several talkie/1 checks take: propose an action, decide it, let it settle, poll a
thread."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from ag_ui.core import EventType
from pydantic import ValidationError

from talkie_tui.conformance.checks.base import POLL_INTERVAL, TEST, Session
from talkie_tui.conformance.report import CheckFailed, CheckSkipped, show
from talkie_tui.conformance.wire import Answer, collect_run
from talkie_tui.core.errors import NotFoundError
from talkie_tui.protocol.talkie.events import ActionProposed
from talkie_tui.protocol.talkie.models import Action, DecisionResult, ThreadHistory

SETTLE_SECONDS = 12.0  # a confirmed action may sit in `running` through a short undo window


async def propose_action(session: Session) -> Action:
    """Run `talkie-test:action` and return the one action it proposed."""
    result = await collect_run(session.wire, f"{TEST}action")
    result.expect_finished()
    proposed = result.of_class(ActionProposed)
    if len(proposed) != 1:
        raise CheckFailed(f"talkie-test:action proposed {len(proposed)} actions instead of one")
    action: Action = proposed[0].action
    return action


async def proposed_or_skip(session: Session) -> Action:
    """An action to decide; when test mode cannot propose one, the `action` check says why."""
    try:
        return await propose_action(session)
    except CheckFailed as error:
        raise CheckSkipped(f"no action to decide ({error}); see the action check") from error


async def decide(
    session: Session, action: Action, decision: str, *, params_hash: str | None = None
) -> Answer:
    """POST a decision from a (pretend) button press."""
    body = {
        "decision": decision,
        "paramsHash": action.params_hash if params_hash is None else params_hash,
        "method": "button",
    }
    return await session.wire.request("POST", "decision", {"actionId": action.id}, json_body=body)


def decided_action(answer: Answer, what: str) -> Action:
    """The action of a `200 {action, events}` decision answer."""
    if answer.status != 200:
        raise CheckFailed(f"{what}: expected HTTP 200, got {answer.describe()}")
    try:
        return DecisionResult.model_validate(answer.json()).action
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "body"
        raise CheckFailed(
            f"{what}: the answer is not {{action, events}} ({where}: {first['msg']})"
        ) from None


async def settle(session: Session, action: Action) -> Action:
    """The action once it has left `running` (an undo window may delay it briefly)."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while action.status == "running" and time.monotonic() < deadline:
        await asyncio.sleep(POLL_INTERVAL)
        action = await session.client.action(action.id)
    return action


async def confirm_until_done(session: Session, action: Action) -> Action:
    """Confirm an action and require that it ends `done` (§11)."""
    confirmed = decided_action(await decide(session, action, "confirm"), "confirming the action")
    final = await settle(session, confirmed)
    if final.status != "done":
        raise CheckFailed(f'after confirming, the action is {show(final.status)}, not "done"')
    return final


async def poll_thread(
    session: Session,
    thread_id: str,
    problem: Callable[[ThreadHistory], str | None],
    within: float,
) -> ThreadHistory:
    """GET the thread until `problem` finds nothing wrong; fail with the last problem."""
    deadline = time.monotonic() + within
    while True:
        try:
            history = await session.client.thread(thread_id)
        except NotFoundError as error:
            # The server may store the thread a moment after the stream ended.
            issue = f"GET thread {show(thread_id, 40)} answers 404: {show(error.message)}"
        else:
            found = problem(history)
            if found is None:
                return history
            issue = found
        if time.monotonic() >= deadline:
            raise CheckFailed(issue)
        await asyncio.sleep(POLL_INTERVAL)


def is_delta(event: object) -> bool:
    """A text delta of the answer (TEXT_MESSAGE_CONTENT)."""
    return getattr(event, "type", None) is EventType.TEXT_MESSAGE_CONTENT
