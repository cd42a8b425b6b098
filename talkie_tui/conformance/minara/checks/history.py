"""The Minara checks of history: stored turns, the sessions list, search."""

from __future__ import annotations

import asyncio
import time

from talkie_tui.conformance.minara.checks.base import CHAT, POLL, STREAM, check
from talkie_tui.conformance.minara.folding import fold, stored_shape
from talkie_tui.conformance.minara.session import Session
from talkie_tui.conformance.report import CheckFailed, show


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
