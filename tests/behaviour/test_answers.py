"""An answer, on every protocol alike: it streams, it stops when asked, a message the server did
not get goes out once when retried, a failed answer says why, and the thread opened again shows
what was streamed.

Driven through `backends.connect` and the `Backend` and `Session` interfaces, as the TUI and
`talkie ask` use them, against each reference server (`conftest.reference`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from talkie_tui.backends.base import Backend, Session
from talkie_tui.chat.turns import Turn
from talkie_tui.core.errors import TalkieError
from tests.behaviour.conftest import Reference
from tests.ui.killable_proxy import KillableProxy
from tests.ui.test_history_equals_live import rendering

pytestmark = pytest.mark.slow

WORDS = "one two three four five six seven eight nine ten"


@asynccontextmanager
async def signed_in(reference: Reference, url: str | None = None) -> AsyncIterator[Backend]:
    """A backend signed in to the reference server (or to `url` in front of it), closed after."""
    backend = await reference.backend(url)
    try:
        yield backend
    finally:
        await backend.aclose()


def last_two(session: Session[Any]) -> list[tuple[str, str, str]]:
    """The message sent and its answer: who, what, and how it ended."""
    return [(t.role, t.text, t.state) for t in session.conversation.turns[-2:]]


def sent(turns: list[Turn], text: str) -> int:
    """How many times `text` is in the thread as the person's message."""
    return sum(1 for turn in turns if turn.role == "user" and turn.text == text)


async def test_a_message_is_answered_as_a_stream(reference: Reference) -> None:
    async with signed_in(reference) as backend:
        session = backend.new_session()
        outgoing = session.prepare(f"{reference.echo} {WORDS}")
        deltas: list[tuple[str, bool]] = []  # each piece, and whether the answer had ended
        async for update in session.send(outgoing):
            if update.delta:
                deltas.append((update.delta, outgoing.finished))
    assert outgoing.finished and outgoing.failure is None
    # The words stream in; on a hub, the agent's greeting may stream into the same
    # conversation just before them.
    assert "".join(delta for delta, _ in deltas).endswith(WORDS)
    assert not deltas[0][1]  # shown while it was written, not only at the end
    assert last_two(session) == [
        ("user", f"{reference.echo} {WORDS}", "done"),
        ("assistant", WORDS, "done"),
    ]
    assert session.thread_id is not None and outgoing.thread_id == session.thread_id


async def stopped_mid_stream(backend: Backend, session: Session[Any], text: str) -> None:
    """Send `text` and stop its answer at its first piece; read on to the stream's end."""
    outgoing = session.prepare(text)
    stops = 0
    async for update in session.send(outgoing):
        if update.delta and not stops:
            assert outgoing.run_id is not None
            await backend.stop(outgoing.run_id)
            stops += 1
    assert stops == 1
    assert outgoing.finished and outgoing.failure is None  # stopped on request: no failure


async def test_an_answer_stopped_mid_stream_ends_where_it_stood(reference: Reference) -> None:
    async with signed_in(reference) as backend:
        session = backend.new_session()
        await stopped_mid_stream(backend, session, reference.slow)
        (role, text, state) = last_two(session)[-1]
        assert (role, state) == ("assistant", "cancelled")
        assert text and reference.slow_text.startswith(text) and text != reference.slow_text
        assert session.thread_id is not None
        stored = await backend.new_session(session.thread_id).load(session.thread_id)
    assert [(t.role, t.text, t.state) for t in stored.turns[-1:]] == [(role, text, state)]


async def test_a_message_sent_while_the_server_is_away_goes_out_once_on_retry(
    reference: Reference,
) -> None:
    text = f"{reference.echo} while away"
    async with KillableProxy(reference.url) as proxy, signed_in(reference, proxy.origin) as backend:
        session = backend.new_session()
        first = session.prepare(f"{reference.echo} before")
        updates = [update async for update in session.send(first)]
        assert first.finished and updates
        await proxy.down()
        outgoing = session.prepare(text)
        with pytest.raises(TalkieError) as refused:
            async for _ in session.send(outgoing):
                pass
        assert refused.value.retryable  # the server is away: trying again may help
        assert not outgoing.finished
        await proxy.up()
        retried = session.again(outgoing.text, outgoing.message_id)
        assert retried.message_id == outgoing.message_id
        async for _ in session.send(retried):
            pass
        assert retried.finished and retried.failure is None
        assert last_two(session) == [("user", text, "done"), ("assistant", "while away", "done")]
        assert session.thread_id is not None
        stored = await backend.new_session(session.thread_id).load(session.thread_id)
    assert sent(stored.turns, text) == 1  # once, though it was sent twice
    assert [t.text for t in stored.turns if t.role == "assistant"][-2:] == ["before", "while away"]


FAILS = {"talkie": "talkie-test:error", "minara": "minara-test:error"}
"""The servers whose answer can fail, and the message that makes it fail. (A hub's agent that
fails says so in a message of its own: there is no failed answer on a hub.)"""


@pytest.mark.parametrize("reference", list(FAILS), indirect=True)
async def test_a_failed_answer_says_why_and_that_trying_again_may_help(
    reference: Reference,
) -> None:
    async with signed_in(reference) as backend:
        session = backend.new_session()
        outgoing = session.prepare(FAILS[reference.protocol])
        async for _ in session.send(outgoing):
            pass
        failure = outgoing.failure
        assert failure is not None and failure.message and failure.retryable
        assert not outgoing.finished and outgoing.settled
        role, _, state = last_two(session)[-1]
        assert (role, state) == ("assistant", "error")  # the answer is marked failed
        later = session.prepare(f"{reference.echo} after")
        async for _ in session.send(later):
            pass  # the thread goes on
        assert later.finished and last_two(session)[-1] == ("assistant", "after", "done")


async def test_a_thread_opened_again_shows_what_was_streamed(reference: Reference) -> None:
    async with signed_in(reference) as backend:
        session = backend.new_session()
        for message in (f"{reference.echo} {WORDS}", f"{reference.echo} and *more*"):
            async for _ in session.send(session.prepare(message)):
                pass
        await stopped_mid_stream(backend, session, reference.slow)
        assert session.thread_id is not None
        live = session.conversation
        stored = await backend.new_session(session.thread_id).load(session.thread_id)
    assert rendering(stored) == rendering(live)
    assert [t.state for t in stored.turns] == [t.state for t in live.turns]
    assert [t.role for t in live.turns][-6:] == ["user", "assistant"] * 3
