"""The Minara checks of the turn loop: a turn accepted at once, replayed, numbered without
gaps, ended, resumed."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from talkie_tui.conformance.minara.checks.base import CHAT, STREAM, check
from talkie_tui.conformance.minara.session import LONG, Session
from talkie_tui.conformance.minara.wire import Socket, Turn
from talkie_tui.conformance.report import CheckFailed, fail_all, show

ACCEPT_WITHIN = 10.0  # "responds immediately": well before a turn could have run


@check("turn-accepted", section=f"{CHAT} The turn loop")
async def turn_accepted(session: Session) -> None:
    """POST /v1/chat/stream answers `{session_id, kind, is_new}` at once; a follow-up is not new."""
    finished = await session.finished_turn()
    accepted = finished.accepted
    problems = []
    if not isinstance(accepted.get("kind"), str):
        problems.append(f"kind is {show(accepted.get('kind'))}, not a string")
    if accepted.get("is_new") is not True:
        problems.append(f"is_new is {show(accepted.get('is_new'))} for a new session, not true")
    fail_all(problems)
    started = time.monotonic()
    again = await session.follow_up()
    if time.monotonic() - started > ACCEPT_WITHIN:
        raise CheckFailed(
            f'the POST took over {ACCEPT_WITHIN:g} s; {CHAT}: "The gateway responds immediately'
            ' with { session_id, kind, is_new } and runs the turn in the background"'
        )
    if again.get("session_id") != finished.session_id or again.get("is_new") is not False:
        raise CheckFailed(
            f"a message to session {show(finished.session_id)} answered {show(again)}, "
            "expected the same session_id and is_new false"
        )


@check("turn-replay", section=f"{CHAT} The turn loop; {STREAM} The socket")
async def turn_replay(session: Session) -> None:
    """Subscribing with fromSeq 0 after the POST replays the turn from its `start`."""
    finished = await session.finished_turn()
    turn = finished.turn
    if not turn.events:
        raise CheckFailed("the subscription with fromSeq 0 delivered no event")
    first_seq, first = turn.events[0]
    rule = f'{CHAT}: "a subscribe with fromSeq: 0 replays the buffer from the start"'
    if first.get("type") != "start":
        raise CheckFailed(
            f"the first event replayed is {show(first.get('type'))}, not start; {rule}"
        )
    if first_seq != turn.subscribed["firstSeq"]:
        raise CheckFailed(
            f"the first event has seq {first_seq} but the subscribed frame said firstSeq "
            f"{turn.subscribed['firstSeq']}; {rule}"
        )
    version = first.get("data", {}).get("protocol_version", 1)
    if version != 1:
        raise CheckFailed(
            f'start announces protocol_version {show(version)}; {CHAT}: "A start event '
            'without the field means version 1" (this suite knows version 1)'
        )


def _gaps(events: list[tuple[int, dict[str, Any]]], start: int) -> str | None:
    expected = start
    for seq, event in events:
        if seq != expected:
            return (
                f"after seq {expected - 1} came seq {seq} ({show(event.get('type'))}); "
                f'{STREAM}: "seq starts at 1 for each key and grows by 1, per channel and key, '
                'across turns of a session"'
            )
        expected += 1
    return None


@check("seq", section=f"{STREAM} The socket")
async def seq_rules(session: Session) -> None:
    """`seq` starts at 1 and grows by exactly 1 per key, across the turns of a session."""
    finished = await session.finished_turn()
    turn = finished.turn
    problem = _gaps(turn.events, 1)
    if problem:
        raise CheckFailed(f"first turn: {problem}")
    await session.follow_up()
    async with session.wire.socket() as socket:
        await socket.subscribe(finished.session_id, turn.last_seq)
        second = await Turn(finished.session_id, await socket.subscribed(finished.session_id)).read(
            socket
        )
    problem = _gaps(second.events, turn.last_seq + 1)
    if problem:
        raise CheckFailed(f"second turn: {problem}")


@check("turn-end", section=f"{CHAT} The turn loop")
async def turn_end(session: Session) -> None:
    """A turn ends in `done` or `error` (an error with a code and a message)."""
    turn = (await session.finished_turn()).turn
    seq, last = turn.events[-1]
    if last.get("type") == "error":
        data = last.get("data", {})
        if not isinstance(data.get("code"), str) or not isinstance(data.get("message"), str):
            raise CheckFailed(f"the error event {show(data)} lacks a code or a message")
    ends = [s for s, event in turn.events if event.get("type") in ("done", "error")]
    if ends != [seq]:
        raise CheckFailed(f"the turn has done/error events at seq {ends}; it ends at the first")


@asynccontextmanager
async def live_turn(session: Session, count: int) -> AsyncIterator[tuple[str, Socket, Turn]]:
    """A long turn started, subscribed from seq 0, and its first `count` events read: the
    session key, the open socket and the turn so far."""
    accepted = await session.wire.start_turn(LONG)
    key = str(accepted["session_id"])
    async with session.wire.socket() as socket:
        await socket.subscribe(key, 0)
        turn = Turn(key, await socket.subscribed(key))
        await turn.read(socket, until_end=False, count=count)
        yield key, socket, turn


@check("resume", section=f"{STREAM} The socket")
async def resume(session: Session) -> None:
    """Dropping the socket mid-turn and resubscribing from the last seq: no duplicate, no gap."""
    wire = session.wire
    async with live_turn(session, count=2) as (key, _, before):
        pass
    # The socket is gone; a reconnect subscribes again from the last seq applied.
    async with wire.socket() as socket:
        await socket.subscribe(key, before.last_seq)
        subscribed = await socket.subscribed(key)
        after = await Turn(key, subscribed).read(socket)
    rule = (
        f'{STREAM}: "A client that reconnects subscribes again with fromSeq = the last seq it '
        'applied: no event is applied twice and none is skipped"'
    )
    if subscribed["lastSeq"] < before.last_seq:
        raise CheckFailed(
            f"the resubscription says lastSeq {subscribed['lastSeq']}, below seq "
            f"{before.last_seq} already delivered"
        )
    if after.events and after.events[0][0] <= before.last_seq:
        raise CheckFailed(
            f"after resubscribing from seq {before.last_seq} the event of seq "
            f"{after.events[0][0]} came again; {rule}"
        )
    problem = _gaps(after.events, before.last_seq + 1)
    if problem and after.events:
        raise CheckFailed(f"after resubscribing from seq {before.last_seq}: {rule}; {problem}")
    if not before.ended and not after.ended:
        raise CheckFailed("the resumed turn did not end in done or error")


@check("first-seq", section=f"{STREAM} The socket")
async def first_seq(session: Session) -> None:
    """The subscribed frame's firstSeq/lastSeq follow the rules; an unknown key → not_found."""
    finished = await session.finished_turn()
    key = finished.session_id
    async with session.wire.socket() as socket:
        await socket.subscribe(key, 0)
        subscribed = await socket.subscribed(key)
        first, last = subscribed["firstSeq"], subscribed["lastSeq"]
        rule = (
            f'{STREAM}: "M is the newest seq assigned for that key (0 when none), F the oldest '
            'one still buffered (M + 1 when the buffer is empty)"'
        )
        if not 1 <= first <= last + 1:
            raise CheckFailed(f"firstSeq {first} and lastSeq {last} break the rule; {rule}")
        replay = Turn(key, subscribed)
        if first <= last:
            await replay.read(socket, until_end=False, count=last - first + 1)
            seqs = [seq for seq, _ in replay.events[: last - first + 1]]
            if seqs != list(range(first, last + 1)):
                raise CheckFailed(
                    f"with firstSeq {first} and lastSeq {last} the replay delivered seqs "
                    f"{show(seqs, 80)}; {rule}"
                )
        unknown = f"conformance-unknown-{uuid.uuid4().hex}"
        await socket.subscribe(unknown, 0)
        frame = await _next_about(socket, unknown)
    if frame.get("type") != "error" or frame.get("code") != "not_found":
        raise CheckFailed(
            f"subscribing to an unknown session answered {show(frame)}; {STREAM}: "
            '"{type: error, …, code, message} — e.g. not_found (unknown session)"'
        )


async def _next_about(socket: Socket, key: str) -> dict[str, Any]:
    """The next frame that names `key`, or has no key (an error for the whole socket)."""
    while True:
        frame = await socket.frame()
        if frame.get("key") in (key, None) and frame.get("type") != "pong":
            return frame
