"""The talkie/1 checks of the §11 `talkie-test:` messages: echo, card, action, run error, slow."""

from __future__ import annotations

from datetime import UTC, datetime

import ag_ui.core as agui
from ag_ui.core import EventType

from talkie_tui.conformance.checks.base import TEST, Session, check
from talkie_tui.conformance.checks.steps import confirm_until_done, propose_action
from talkie_tui.conformance.report import CheckFailed, fail_all, show
from talkie_tui.conformance.wire import collect_run
from talkie_tui.protocol.talkie.cards import FieldsBlock
from talkie_tui.protocol.talkie.events import CardReceived

# Unicode from several scripts, an emoji outside the BMP and doubled inner spaces: an echo that
# re-encodes, trims or re-tokenises the text shows up as a difference.
ECHO_TEXT = "Příliš žluťoučký kůň  úpěl ďábelské ódy – 🐎 «テスト»  ok"
MIN_ACTION_TTL = 60.0
CLOCK_SKEW = 5.0
MIN_SLOW_SPAN = 3.0  # §11 asks for ~5 s; a buffered stream delivers everything at once


@check("echo", section="§11")
async def echo(session: Session) -> None:
    """`talkie-test:echo <text>` → exactly one text message whose content is exactly <text>."""
    result = await collect_run(session.wire, f"{TEST}echo {ECHO_TEXT}")
    result.expect_finished()
    messages = result.of_type(EventType.TEXT_MESSAGE_START)
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
    starts = result.of_type(EventType.TOOL_CALL_START)
    ends = {end.tool_call_id: end for end in result.of_type(EventType.TOOL_CALL_END)}
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
    fail_all(problems)


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
    fail_all(problems)
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
    fail_all(problems)


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
