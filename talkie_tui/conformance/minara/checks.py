"""The Minara gateway checks, in the order they run: agent-independent, each names its rule.

A real gateway runs a real model, so no check depends on what the agent says: only on the
shape and order of what the gateway sends, and on what it stores and refuses.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from talkie_tui.conformance.http import error_object
from talkie_tui.conformance.minara.folding import fold, stored_shape
from talkie_tui.conformance.minara.session import LONG, Session
from talkie_tui.conformance.minara.wire import Socket, Turn
from talkie_tui.conformance.report import CheckFailed, CheckSkipped, show
from talkie_tui.conformance.suite import Registry
from talkie_tui.conformance.wire import Answer

__all__ = ["CHECKS"]

_REGISTRY: Registry[Session] = Registry()
CHECKS = _REGISTRY.checks
CHAT = "minara-chat.md"
STREAM = "minara-stream.md"
ACCEPT_WITHIN = 10.0  # "responds immediately": well before a turn could have run
INTERRUPT_GRACE = 15.0
MIB = 1024 * 1024
MAX_ATTACHMENTS = 8
IMAGE_LIMIT = 5 * MIB
POLL = 0.25
CLOSE_WAIT = 5.0  # "closes at once"

ERROR_RULE = (
    f'{STREAM}: "Errors everywhere: {{ "error": {{ "code", "message" }} }} with 400, 401, 404, '
    '409, 413, 429"'
)


def check(
    name: str, *, section: str, timeout: float = 30.0, slow: bool = False
) -> Callable[[Callable[[Session], Awaitable[None]]], Callable[[Session], Awaitable[None]]]:
    """Register a Minara check under `name`; checks run in the order they are defined."""
    return _REGISTRY.check(name, section=section, timeout=timeout, slow=slow)


def expect_error(answer: Answer, status: int, what: str) -> None:
    """Require this status and the documented error body `{error: {code, message}}`."""
    error_object(answer, status, what, ERROR_RULE)


def _fail_all(problems: list[str]) -> None:
    if problems:
        raise CheckFailed("; ".join(problems))


async def _sessions_total(session: Session) -> int:
    data = await session.wire.json("GET", "/v1/sessions", "GET /v1/sessions", params={"limit": 1})
    total = data.get("total")
    if type(total) is not int:
        raise CheckFailed(f"GET /v1/sessions: total is {show(total)}, not an integer")
    return total


# --- health and authentication --------------------------------------------------------------


@check("healthz", section="notes/minara.md (the gateway's public documentation)")
async def healthz(session: Session) -> None:
    """GET /healthz answers 200 {"ok": true} without a token."""
    answer = await session.wire.request("GET", "/healthz", token=None)
    data = answer.json()
    if answer.status != 200 or not isinstance(data, dict) or data.get("ok") is not True:
        raise CheckFailed(f'GET /healthz answered {answer.describe()}, not 200 {{"ok": true}}')


@check("auth-http", section=f"{CHAT} Authentication")
async def auth_http(session: Session) -> None:
    """With a token set, a request without it or with a wrong one → 401 and the error body."""
    wire = session.wire
    if not wire.token:
        raise CheckSkipped("no token given (--token or MINARA_TOKEN): the gateway is anonymous")
    rule = (
        f'{CHAT}: "When the gateway runs with GATEWAY_AUTH_TOKEN set, HTTP requests carry '
        'Authorization: Bearer <token>"'
    )
    for token, what in ((None, "without a token"), ("wrong-" + wire.token, "with a wrong token")):
        answer = await wire.request("GET", "/v1/sessions", token=token)
        if answer.status != 401:
            raise CheckFailed(f"GET /v1/sessions {what} answered {answer.describe()}; {rule}")
        expect_error(answer, 401, f"GET /v1/sessions {what}")


@check("auth-socket", section=f"{STREAM} The socket")
async def auth_socket(session: Session) -> None:
    """The socket takes `?token=`; without one it is accepted and closed with 4401."""
    wire = session.wire
    if not wire.token:
        raise CheckSkipped("no token given (--token or MINARA_TOKEN): the gateway is anonymous")
    async with wire.socket() as socket:
        await socket.send({"type": "ping"})
        frame = await socket.frame()
        if frame.get("type") != "pong":
            raise CheckFailed(
                f"with ?token= the socket answered a ping with {show(frame)}, not "
                f'{{"type": "pong"}}'
            )
    for token, what in ((None, "without a token"), ("wrong-" + wire.token, "with a wrong token")):
        rule = (
            f'{STREAM}: "A missing or bad token: the server accepts the upgrade and closes at '
            'once with code 4401"'
        )
        async with wire.socket(token=token) as socket:
            try:
                code = await socket.closed_with(wait=CLOSE_WAIT)
            except CheckFailed as failure:
                raise CheckFailed(f"the socket {what}: {failure}; {rule}") from None
        if code != 4401:
            raise CheckFailed(f"the socket {what} closed with code {code}; {rule}")


# --- the turn loop ---------------------------------------------------------------------------


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
    _fail_all(problems)
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
async def _live_turn(session: Session, count: int) -> AsyncIterator[tuple[str, Socket, Turn]]:
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
    async with _live_turn(session, count=2) as (key, _, before):
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


# --- history ---------------------------------------------------------------------------------


@check("history", section=f"{STREAM} Turn request and session rows")
async def history(session: Session) -> None:
    """The turn rebuilt from GET /v1/sessions/:id equals the turn folded from the stream."""
    finished = await session.finished_turn()
    path = f"/v1/sessions/{finished.session_id}"
    deadline = time.monotonic() + 10.0
    while True:
        detail = await session.wire.json("GET", path, f"GET {path}")
        if detail.get("is_streaming") is not True or time.monotonic() > deadline:
            break
        await asyncio.sleep(POLL)
    rows = detail.get("messages")
    if not isinstance(rows, list):
        raise CheckFailed(f"GET {path}: messages is {show(rows)}, not a list of rows")
    users = [r for r in rows if isinstance(r, dict) and r.get("role") == "user"]
    if not any(r.get("content") == finished.message for r in users):
        raise CheckFailed(f"GET {path} holds no user row with the message sent")
    index = max(
        i
        for i, r in enumerate(rows)
        if isinstance(r, dict) and r.get("content") == finished.message
    )
    answers = [r for r in rows[index + 1 :] if isinstance(r, dict) and r.get("role") == "assistant"]
    if not answers:
        raise CheckFailed(f"GET {path} holds no assistant row after the message")
    row = answers[0]
    live = fold(finished.turn.events)
    if row.get("content") != live.content:
        raise CheckFailed(
            f"the assistant row's content is {show(row.get('content'))}, the text_delta texts "
            f"were {show(live.content)}; {STREAM}: \"An assistant row's content is the "
            "concatenation of the turn's text_delta texts, in order\""
        )
    stored = stored_shape(row)
    if stored is not None and stored != live.segments:
        raise CheckFailed(
            f"the row's metadata.segments {show(stored, 100)} differ from the stream's "
            f'{show(live.segments, 100)}; {STREAM}: "Rebuilding turns from rows MUST give what '
            'the live reducer built"'
        )


@check("sessions-list", section=f"{CHAT} History")
async def sessions_list(session: Session) -> None:
    """GET /v1/sessions lists the most recently updated first, and limit/offset page it."""
    finished = await session.finished_turn()
    wire = session.wire
    full = await wire.json("GET", "/v1/sessions", "GET /v1/sessions", params={"limit": 20})
    rows = full.get("sessions")
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise CheckFailed(f"GET /v1/sessions: sessions is {show(rows)}, not a list of objects")
    rule = f'{CHAT}: "GET /v1/sessions … lists sessions, most recently updated first"'
    stamps = [str(r.get("updated_at", "")) for r in rows]
    if stamps != sorted(stamps, reverse=True):
        raise CheckFailed(f"the sessions' updated_at are {show(stamps[:4], 120)}; {rule}")
    ids = [r.get("id") for r in rows]
    if finished.session_id not in ids:
        raise CheckFailed(f"the session {show(finished.session_id)} just used is not listed")
    total = full.get("total")
    if type(total) is not int or total < len(rows):
        raise CheckFailed(f"total is {show(total)} with {len(rows)} sessions listed")
    window = ids[:3]
    for offset, expected in enumerate(window):
        page = await wire.json(
            "GET", "/v1/sessions", "GET /v1/sessions", params={"limit": 1, "offset": offset}
        )
        got = [r.get("id") for r in page.get("sessions", []) if isinstance(r, dict)]
        if got != [expected]:
            raise CheckFailed(
                f"limit=1&offset={offset} answered {show(got)}, the full list has "
                f"{show(expected)} there"
            )


@check("search", section=f"{CHAT} History")
async def search(session: Session) -> None:
    """GET /v1/sessions/search finds a message's word, with the match between « and »."""
    finished = await session.finished_turn()
    word = session.word
    deadline = time.monotonic() + 5.0
    while True:
        data = await session.wire.json(
            "GET", "/v1/sessions/search", "GET /v1/sessions/search", params={"q": word}
        )
        results = data.get("results")
        if not isinstance(results, list):
            raise CheckFailed(f"search answered {show(data)}, not {{results: [...]}}")
        ours = [
            r for r in results if isinstance(r, dict) and r.get("session_id") == finished.session_id
        ]
        if ours or time.monotonic() > deadline:
            break
        await asyncio.sleep(POLL)
    if not ours:
        raise CheckFailed(f"searching for {show(word)}, a word of a message sent, found nothing")
    snippet = ours[0].get("snippet")
    if not isinstance(snippet, str) or f"«{word}»".lower() not in snippet.lower():
        raise CheckFailed(
            f'the snippet is {show(snippet)}; {STREAM}: "snippets with the match between « and »"'
        )


# --- interactions, interject, interrupt ------------------------------------------------------


@check("interaction-not-pending", section=f"{CHAT} Interactions")
async def interaction_not_pending(session: Session) -> None:
    """Answering a question that is not pending → 404 (the SDK's `not_pending`)."""
    path = f"/v1/interactions/q_conformance_{uuid.uuid4().hex}/answer"
    answer = await session.wire.request(
        "POST", path, json_body={"answers": [{"questionIndex": 0, "selected_labels": ["Confirm"]}]}
    )
    if answer.status != 404:
        raise CheckFailed(
            f'POST {path[:40]}… answered {answer.describe()}; {CHAT}: ""not_pending" (HTTP '
            '404 on the wire) is an expected outcome"'
        )
    expect_error(answer, 404, "answering an unknown question")


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
    async with _live_turn(session, count=1) as (key, socket, turn):
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


# --- attachments, models, errors, tolerance ---------------------------------------------------


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
    total = await _sessions_total(session)
    answer = await session.wire.request(
        "POST", "/v1/chat/stream", json_body={"message": "nine files", "attachments": attachments}
    )
    if answer.status < 400:
        raise CheckFailed(
            f"a turn with {len(keys)} attachments answered {answer.describe()}; {rule}"
        )
    expect_error(answer, answer.status, f"a turn with {len(keys)} attachments")
    big = PNG_HEADER + b"\x00" * (IMAGE_LIMIT + 1 - len(PNG_HEADER))
    answer = await _upload(session, "big.png", big, "image/png")
    if answer.status == 200:
        key = _key_of(answer, "an image over 5 MiB")
        image = {"key": key, "filename": "big.png", "media_type": "image/png", "kind": "image"}
        answer = await session.wire.request(
            "POST", "/v1/chat/stream", json_body={"message": "a big image", "attachments": [image]}
        )
        if answer.status < 400:
            raise CheckFailed(
                f"a turn with an image over 5 MiB answered {answer.describe()}; {rule}"
            )
    expect_error(answer, answer.status, "an image over 5 MiB")
    if await _sessions_total(session) != total:
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
    if answer.status != 400:
        raise CheckFailed(
            f'a turn with an unknown model answered {answer.describe()}; {CHAT}: "Invalid '
            'values fail with 400 before the turn starts"'
        )
    expect_error(answer, 400, "a turn with an unknown model")


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
