"""What the Minara backend cannot replay, against the reference gateway over real HTTP and
WebSocket on 127.0.0.1: events the gateway no longer has are rebuilt from the session's rows
(`GET /v1/sessions/:id`), and a message whose answer was lost is sent again under its
`client_message_id` without a second turn.

The network's failures come from `GatewayProxy` (a TCP proxy in the test's loop) and from the
gateway's test mode (`/v1/_test/sessions/:id/lose_events`: a real gap in its buffer).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from talkie_tui.backends.minara.backend import MinaraBackend, connect
from talkie_tui.backends.minara.reducer import MinaraConversation
from talkie_tui.backends.minara.session import MinaraOutgoing, MinaraSession, MinaraUpdate
from talkie_tui.chat.turns import Turn
from talkie_tui.core.errors import TransportError
from talkie_tui.core.tokens import StaticToken
from tests.backends.minara.turn_shapes import shapes
from tests.helpers import TEST_TOKEN
from tests.ui.minara_e2e import GatewayProxy, gateway_http, session_done

pytestmark = pytest.mark.slow

COUNT = "minara-test:count 30 25"  # 30 deltas over about 0.75 s
COUNTED = "".join(f"{n} " for n in range(1, 31))
SEND = "POST /v1/chat/stream"


@pytest.fixture
async def proxy(gateway_url: str) -> AsyncIterator[GatewayProxy]:
    async with GatewayProxy(gateway_url) as proxy:
        yield proxy


async def backend_at(origin: str) -> MinaraBackend:
    """The backend on `origin`; its socket tries again every 50 ms once dropped."""
    return await connect(
        origin, tokens=StaticToken(TEST_TOKEN), stream_options={"delays": (0.0, 0.05)}
    )


@pytest.fixture
async def backend(proxy: GatewayProxy) -> AsyncIterator[MinaraBackend]:
    connected = await backend_at(proxy.origin)
    yield connected
    await connected.aclose()


async def read(
    session: MinaraSession,
    outgoing: MinaraOutgoing,
    during: Callable[[MinaraUpdate], Any] | None = None,
) -> list[MinaraUpdate]:
    """Every update of sending `outgoing`; `during` sees (and may hold up) each one."""
    updates: list[MinaraUpdate] = []

    async def reading() -> None:
        async for update in session.send(outgoing):
            updates.append(update)
            if during is not None:
                result = during(update)
                if asyncio.iscoroutine(result):
                    await result

    await asyncio.wait_for(reading(), 20)
    return updates


def answer_to(session: MinaraSession, message_id: str) -> Turn:
    """The answer that follows the person's message `message_id`."""
    turns = session.conversation.turns
    index = next(i for i, t in enumerate(turns) if t.id == message_id and t.role == "user")
    answer = turns[index + 1]
    assert answer.role == "assistant"
    return answer


async def uninterrupted(backend: MinaraBackend, text: str) -> Turn:
    """The answer to `text` in a session of its own, nothing in the way."""
    session = backend.new_session()
    outgoing = session.prepare(text)
    await read(session, outgoing)
    return answer_to(session, outgoing.message_id)


async def stored(backend: MinaraBackend, session: MinaraSession) -> MinaraSession:
    """The session loaded anew from its rows."""
    loaded = backend.new_session()
    await loaded.load(session.thread_id or "")
    return loaded


def seqs_of(updates: list[MinaraUpdate]) -> list[int]:
    return [u.seq for u in updates if u.seq is not None]


def shapes_of(turn: Turn) -> Any:
    """One turn as `shapes` compares turns."""
    alone = MinaraConversation(None)
    alone.turns.append(turn)
    return shapes(alone)


async def test_a_turn_whose_buffer_went_while_away_is_rebuilt_from_the_rows(
    backend: MinaraBackend, proxy: GatewayProxy, gateway_url: str
) -> None:
    """The socket is down while the turn ends and another client's turn replaces its buffer:
    resubscribed, `firstSeq` is past the last seq applied; the turn comes from the rows."""
    session = backend.new_session()
    outgoing = session.prepare(COUNT)
    away = False

    async with gateway_http(gateway_url) as http:

        async def go_away(update: MinaraUpdate) -> None:
            nonlocal away
            if update.delta != "5 " or away:
                return
            away = True
            proxy.sockets_down()
            session_id = session.thread_id or ""
            await session_done(http, session_id, 2)  # our turn ended meanwhile
            other = {"message": "minara-test:echo from another client", "session_id": session_id}
            (await http.post("/v1/chat/stream", json=other)).raise_for_status()
            await session_done(http, session_id, 4)  # its buffer replaced ours
            proxy.sockets_up()

        updates = await read(session, outgoing, go_away)
        last_seq = (await http.get(f"/v1/sessions/{session.thread_id}")).json()["last_seq"]

    assert away and outgoing.finished and outgoing.failure is None
    assert any(u.lost for u in updates)
    assert updates[-1].recovered is not None and updates[-1].recovered.complete
    seqs = seqs_of(updates)
    assert seqs == list(range(1, len(seqs) + 1)) and len(seqs) < 32  # each once; not all live
    reference = await uninterrupted(backend, COUNT)
    answer = answer_to(session, outgoing.message_id)
    assert answer.text == COUNTED
    assert shapes_of(answer) == shapes_of(reference)
    # The rows brought the other client's turn too, and the session goes on from them.
    assert [t.text for t in session.conversation.turns][2:] == [
        "minara-test:echo from another client",
        "from another client",
    ]
    assert shapes(session.conversation) == shapes((await stored(backend, session)).conversation)
    assert session.last_seq == last_seq  # where the next turn's events begin
    following = session.prepare("minara-test:echo next")
    later = seqs_of(await read(session, following))
    assert answer_to(session, following.message_id).text == "next"
    assert later == list(range(last_seq + 1, last_seq + 1 + len(later)))


async def test_events_lost_inside_the_buffer_are_rebuilt_while_the_turn_runs(
    gateway_url: str,
) -> None:
    """A real gap: seqs the gateway never buffered. The replay has the same hole, so the
    client rebuilds from the rows while the turn still runs; the final turn is whole."""
    backend = await backend_at(gateway_url)
    try:
        session = backend.new_session()
        outgoing = session.prepare(COUNT)
        lost: dict[str, Any] = {}

        async with gateway_http(gateway_url) as http:

            async def lose(update: MinaraUpdate) -> None:
                if update.delta == "5 " and not lost:
                    route = f"/v1/_test/sessions/{session.thread_id}/lose_events"
                    lost.update((await http.post(route, json={"count": 3})).json())

            updates = await read(session, outgoing, lose)
            detail = (await http.get(f"/v1/sessions/{session.thread_id}")).json()

        assert lost and outgoing.finished and outgoing.failure is None
        assert any(u.recovered is not None for u in updates)  # the rebuild
        seqs = seqs_of(updates)
        assert len(seqs) == len(set(seqs)) and seqs == sorted(seqs)  # none applied twice
        missing = set(range(1, detail["last_seq"] + 1)) - set(seqs)
        assert missing and min(missing) > lost["last_seq"]  # the gap was there
        reference = await uninterrupted(backend, COUNT)
        answer = answer_to(session, outgoing.message_id)
        assert answer.text == COUNTED
        assert shapes_of(answer) == shapes_of(reference)
        assert shapes(session.conversation) == shapes((await stored(backend, session)).conversation)
    finally:
        await backend.aclose()


async def test_a_message_whose_answer_was_lost_is_sent_again_without_a_second_turn(
    backend: MinaraBackend, proxy: GatewayProxy, gateway_url: str
) -> None:
    """The gateway stored the message and started its turn, but its answer to the POST never
    came back: sent again with the same `client_message_id`, the turn is followed, once."""
    session = backend.new_session()
    first = session.prepare("minara-test:echo just once")
    proxy.lose_answer(SEND)
    with pytest.raises(TransportError):
        await read(session, first)
    assert session.conversation.turns[0].state == "failed"
    again = session.again(first.text, first.message_id)
    assert again.message_id == first.message_id
    await read(session, again)
    assert again.finished
    assert proxy.requests(SEND) == [200, 200]  # both reached the gateway
    assert [t.role for t in session.conversation.turns] == ["user", "assistant"]
    assert session.conversation.turns[1].text == "just once"
    async with gateway_http(gateway_url) as http:
        rows = (await session_done(http, session.thread_id or "", 2))["messages"]
    assert [(row["role"], row["id"]) for row in rows] == [
        ("user", first.message_id),
        ("assistant", rows[1]["id"]),
    ]
