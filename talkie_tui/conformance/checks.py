"""The talkie/1 conformance checks, in the order they run; each raises to fail or skip.

A check is an async function of the `Session`. It returns to pass, raises `CheckFailed` with one
sentence naming the broken rule, or `CheckSkipped` when it cannot be run against this server.
Checks that send `talkie-test:` messages or decide actions need `testMode: true` (§1, §11).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import ag_ui.core as agui
from pydantic import ValidationError

from talkie_tui.conformance import suite
from talkie_tui.conformance.report import CheckFailed, CheckSkipped, show
from talkie_tui.conformance.wire import (
    Answer,
    RunResult,
    Wire,
    collect_run,
    expect_error,
    expect_ok,
    open_run,
)
from talkie_tui.core.errors import NotFoundError
from talkie_tui.protocol.talkie.client import RunRequest, TalkieClient
from talkie_tui.protocol.talkie.events import ActionProposed, CardReceived
from talkie_tui.protocol.talkie.models import (
    Action,
    DecisionResult,
    FieldsBlock,
    Manifest,
    ThreadHistory,
)

__all__ = ["CHECKS", "Check", "Session"]

_T = agui.EventType
SPEC = "talkie/1"
REQUIRED_ENDPOINTS = ("status", "run", "cancelRun", "threads", "thread", "action", "decision")
TEST = "talkie-test:"
# Unicode from several scripts, an emoji outside the BMP and doubled inner spaces: an echo that
# re-encodes, trims or re-tokenises the text shows up as a difference.
ECHO_TEXT = "Příliš žluťoučký kůň  úpěl ďábelské ódy – 🐎 «テスト»  ok"
MIN_ACTION_TTL = 60.0
CLOCK_SKEW = 5.0
MIN_SLOW_SPAN = 3.0  # §11 asks for ~5 s; a buffered stream delivers everything at once
CANCEL_GRACE = 2.0
SETTLE_SECONDS = 12.0  # a confirmed action may sit in `running` through a short undo window
DISCONNECT_WAIT = 15.0
DISCONNECT_MARGIN = 5.0  # beyond the duration of a complete slow run
POLL_INTERVAL = 0.25


@dataclass
class Session:
    """What the checks share: the client, the raw wire, and results later checks build on."""

    client: TalkieClient
    wire: Wire
    slow: RunResult | None = None  # the complete `talkie-test:slow` run, once the slow check ran

    @property
    def manifest(self) -> Manifest:
        """The server's manifest."""
        return self.client.server.manifest


Check = suite.Check
_REGISTRY: suite.Registry[Session] = suite.Registry()
CHECKS: list[suite.Check[Session]] = _REGISTRY.checks


def check(
    name: str,
    *,
    section: str,
    timeout: float = 15.0,
    needs_test_mode: bool = True,
    slow: bool = False,
) -> Callable[[Callable[[Session], Awaitable[None]]], Callable[[Session], Awaitable[None]]]:
    """Register a talkie/1 check under `name`; checks run in the order they are defined."""
    return _REGISTRY.check(
        name,
        section=f"talkie-1.md {section}",
        timeout=timeout,
        slow=slow,
        needs_test_mode=needs_test_mode,
    )


def _fail_all(problems: list[str]) -> None:
    if problems:
        raise CheckFailed("; ".join(problems))


# --- shared steps ----------------------------------------------------------------------------


async def propose_action(session: Session) -> Action:
    """Run `talkie-test:action` and return the one action it proposed."""
    result = await collect_run(session.wire, f"{TEST}action")
    result.expect_finished()
    proposed = result.of_class(ActionProposed)
    if len(proposed) != 1:
        raise CheckFailed(f"talkie-test:action proposed {len(proposed)} actions instead of one")
    action: Action = proposed[0].action
    return action


async def _proposed_or_skip(session: Session) -> Action:
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


def _is_delta(event: object) -> bool:
    return getattr(event, "type", None) is _T.TEXT_MESSAGE_CONTENT


# --- §1 discovery ----------------------------------------------------------------------------


@check("discovery", section="§1", needs_test_mode=False)
async def discovery(session: Session) -> None:
    """The manifest: spec, issuer, serverId, same-origin endpoints, a sign-in offer."""
    server = session.client.server
    manifest = server.manifest
    problems = []
    if manifest.spec != SPEC:
        problems.append(f'spec is {show(manifest.spec, 30)}, not "{SPEC}"')
    if manifest.issuer != server.origin:
        problems.append(f"issuer {show(manifest.issuer)} is not the origin {server.origin}")
    if not manifest.server_id.strip():
        problems.append("serverId is blank")
    missing = [name for name in REQUIRED_ENDPOINTS if name not in manifest.endpoints]
    if missing:
        problems.append(f"endpoints missing: {', '.join(missing)}")
    for name, origin in sorted(server.foreign_endpoints.items()):
        problems.append(f"endpoint {show(name, 30)} is on another origin ({show(origin)})")
    if manifest.auth.oauth is None and manifest.auth.token is None:
        problems.append("auth offers neither oauth nor token")
    _fail_all(problems)


@check("test-mode", section="§11", needs_test_mode=False)
async def test_mode(session: Session) -> None:
    """The manifest says testMode: true, so fixtures make the destructive checks safe."""
    if not session.manifest.test_mode:
        raise CheckFailed(
            "the manifest does not say testMode: true; conformance needs a server in test mode "
            "(§11), so the checks that send talkie-test: messages or decide actions are skipped"
        )


# --- §4 status and §3 errors -----------------------------------------------------------------


@check("status", section="§4", needs_test_mode=False)
async def status(session: Session) -> None:
    """GET status answers a readable Status."""
    await session.client.status()


@check("error-not-found", section="§3", needs_test_mode=False)
async def error_not_found(session: Session) -> None:
    """An unknown thread or action → 404 not_found envelope."""
    unknown = f"conformance-unknown-{uuid.uuid4().hex}"
    for endpoint, param in (("thread", "threadId"), ("action", "actionId")):
        answer = await session.wire.request("GET", endpoint, {param: unknown})
        expect_error(answer, 404, "not_found", f"GET {endpoint} of an unknown id")


# A body that is not JSON, and JSON whose `messages` is not a list.
_MALFORMED_RUN_BODIES = (
    b'{"threadId": "t_conformance", "messages": [',
    json.dumps(
        {"threadId": "t_conformance", "runId": "r_conformance", "messages": "not a list"}
    ).encode(),
)


@check("error-invalid-request", section="§3", needs_test_mode=False)
async def error_invalid_request(session: Session) -> None:
    """A malformed run body → 400 invalid_request envelope, before any stream."""
    for body in _MALFORMED_RUN_BODIES:
        answer = await session.wire.request("POST", "run", content=body, event_stream=True)
        expect_error(answer, 400, "invalid_request", f"POST run with {show(body.decode(), 40)}")


@check("error-unauthorized", section="§2.2, §3", needs_test_mode=False)
async def error_unauthorized(session: Session) -> None:
    """Without the bearer token → 401 unauthorized envelope (status and run)."""
    auth = session.manifest.auth
    if auth.oauth is None and auth.token is None:
        raise CheckSkipped("the manifest offers no sign-in, so no token is required")
    if not session.wire.token:
        raise CheckSkipped("no token given (--token), so a request without one proves nothing")
    answer = await session.wire.request("GET", "status", auth=False)
    expect_error(answer, 401, "unauthorized", "GET status without a token")
    run = RunRequest(f"{TEST}echo unauthorized")
    answer = await session.wire.request(
        "POST", "run", content=run.body(), auth=False, event_stream=True
    )
    expect_error(answer, 401, "unauthorized", "POST run without a token")


# --- §11 test messages -----------------------------------------------------------------------


@check("echo", section="§11")
async def echo(session: Session) -> None:
    """`talkie-test:echo <text>` → exactly one text message whose content is exactly <text>."""
    result = await collect_run(session.wire, f"{TEST}echo {ECHO_TEXT}")
    result.expect_finished()
    messages = result.of_type(_T.TEXT_MESSAGE_START)
    if len(messages) != 1:
        raise CheckFailed(f"expected one text message, got {len(messages)}")
    got = result.text
    if got != ECHO_TEXT:
        at = next(
            (i for i, (a, b) in enumerate(zip(got, ECHO_TEXT, strict=False)) if a != b),
            min(len(got), len(ECHO_TEXT)),
        )
        raise CheckFailed(
            f"the echo differs from the sent text at character {at}: "
            f"sent {show(ECHO_TEXT, 80)}, got {show(got, 80)}"
        )


@check("card", section="§6, §11")
async def card(session: Session) -> None:
    """`talkie-test:card` → a tool call ending ok, one talkie.card with fields, some text."""
    result = await collect_run(session.wire, f"{TEST}card")
    result.expect_finished()
    problems = []
    starts = result.of_type(_T.TOOL_CALL_START)
    ends = {end.tool_call_id: end for end in result.of_type(_T.TOOL_CALL_END)}
    if not starts:
        problems.append("no TOOL_CALL_START")
    for start in starts:
        end = ends.get(start.tool_call_id)
        ok = (end.metadata or {}).get("ok") if end is not None else None
        if end is not None and ok is not True:
            problems.append(f"TOOL_CALL_END has metadata.ok {show(ok, 20)}, not true")
    cards = result.of_class(CardReceived)
    if len(cards) != 1:
        problems.append(f"{len(cards)} talkie.card events instead of one")
    elif not any(isinstance(block, FieldsBlock) for block in cards[0].card.blocks):
        problems.append("the card has no readable fields block")
    elif not cards[0].card.fallback_text.strip():
        problems.append("the card's fallbackText is empty")
    if not result.text.strip():
        problems.append("no text")
    _fail_all(problems)


@check("action", section="§8, §11")
async def action(session: Session) -> None:
    """`talkie-test:action` → one pending low-risk action, voice allowed, ≥ 60 s; confirm → done."""
    proposed = await propose_action(session)
    problems = []
    if proposed.status != "pending":
        problems.append(f'status is {show(proposed.status)}, not "pending"')
    if proposed.risk_level != "low":
        problems.append(f'riskLevel is {show(proposed.risk_level)}, not "low"')
    if set(proposed.confirm.methods) != {"button", "voice"}:
        problems.append(
            f'confirm.methods is {show(proposed.confirm.methods)}, not ["button","voice"]'
        )
    expires = proposed.expires_at
    if expires is None:
        problems.append("expiresAt is missing")
    else:
        if expires.tzinfo is None:
            expires = expires.replace(tzinfo=UTC)  # read a zone-less time as UTC
        left = (expires - datetime.now(UTC)).total_seconds()
        if left < MIN_ACTION_TTL - CLOCK_SKEW:
            problems.append(f"expiresAt is {left:.0f} s away, §11 asks for at least 60 s")
    _fail_all(problems)
    await confirm_until_done(session, proposed)


@check("run-error", section="§5, §11")
async def run_error(session: Session) -> None:
    """`talkie-test:error` → RUN_ERROR upstream_unavailable with metadata.retryable true."""
    result = await collect_run(session.wire, f"{TEST}error")
    terminal = result.terminal
    if not isinstance(terminal, agui.RunErrorEvent):
        raise CheckFailed("the run ended with RUN_FINISHED instead of RUN_ERROR")
    problems = []
    if terminal.code != "upstream_unavailable":
        problems.append(f'code is {show(terminal.code, 30)}, not "upstream_unavailable"')
    retryable = (terminal.metadata or {}).get("retryable")
    if retryable is not True:
        problems.append(f"metadata.retryable is {show(retryable, 20)}, not true")
    _fail_all(problems)


@check("slow", section="§11", timeout=20.0, slow=True)
async def slow(session: Session) -> None:
    """`talkie-test:slow` → several text deltas spread over seconds, not one buffered burst."""
    result = await collect_run(session.wire, f"{TEST}slow")
    result.expect_finished()
    deltas = result.deltas
    if len(deltas) < 2:
        raise CheckFailed(f"{len(deltas)} text delta(s); §11 asks for deltas over ~5 s")
    span = deltas[-1].at - deltas[0].at
    if span < MIN_SLOW_SPAN:
        raise CheckFailed(
            f"{len(deltas)} deltas arrived within {span:.1f} s; §11 asks for deltas over ~5 s "
            "(is the stream buffered?)"
        )
    session.slow = result


# --- §8 decisions ----------------------------------------------------------------------------


@check("decision-repeat", section="§8")
async def decision_repeat(session: Session) -> None:
    """Repeating the same decision → 200 with the same state."""
    proposed = await _proposed_or_skip(session)
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
    proposed = await _proposed_or_skip(session)
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
    proposed = await _proposed_or_skip(session)
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


# --- §5 idempotency, cancel, disconnect ------------------------------------------------------


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
        await stream.until(_is_delta, "its first text delta")
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
        await stream.until(_is_delta, "its first text delta")
        await stream.until(_is_delta, "its second text delta")
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
