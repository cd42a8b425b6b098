"""The Cuckoo session against the reference hub, with the independent test agent answering:
echo, a streamed reply, buttons and a tap, a stop, a dropped client socket caught up over REST
with every message once, a retry with the same key, an agent that never answers, paging back
and retention."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from talkie_tui.backends.cuckoo.session import TRIMMED_ID, CuckooSession, CuckooUpdate
from talkie_tui.chat.turns import ButtonsPart, NoticePart, QuickRepliesPart, ReplyPart, TextPart
from tests.backends.cuckoo.conftest import Hub, on_message
from tests.cuckoo_peer.agent import AgentBackend, echo

pytestmark = pytest.mark.slow


async def collect(session: CuckooSession, outgoing: Any) -> list[CuckooUpdate]:
    return [update async for update in session.send(outgoing)]


def texts(session: CuckooSession) -> list[tuple[str, str]]:
    return [(t.role, t.text) for t in session.conversation.turns]


async def test_echo_shows_the_message_then_the_reply(hub: Hub) -> None:
    person = await hub.person()
    agent = await hub.agent(person, echo)
    backend = await hub.backend(person)
    session = backend.new_session(agent.conversation_id)
    await session.load(agent.conversation_id)
    outgoing = session.prepare("hello there")
    updates = await collect(session, outgoing)
    assert outgoing.finished and outgoing.failure is None
    assert outgoing.sent is not None and outgoing.hub_message_id.startswith("msg_")
    assert texts(session) == [("user", "hello there"), ("assistant", "echo: hello there")]
    reply = session.conversation.turns[-1]
    quoted = [p for p in reply.parts if isinstance(p, ReplyPart)]
    assert quoted and quoted[0].message_id == outgoing.hub_message_id
    # The reply's text came as one step that `talkie ask` prints; every push has its wire form.
    assert [u.delta for u in updates if u.delta] == ["echo: hello there"]
    wires = [json.loads(u.wire) for u in updates if u.wire]
    assert {"message.created"} <= {w["type"] for w in wires}
    assert all(set(w) == {"type", "data"} for w in wires)


async def test_the_first_message_goes_to_the_agent_conversation(hub: Hub) -> None:
    person = await hub.person()
    agent = await hub.agent(person, echo)
    backend = await hub.backend(person)
    session = backend.new_session()
    outgoing = session.prepare("who is there")
    await collect(session, outgoing)
    assert outgoing.thread_id == agent.conversation_id == session.thread_id
    assert session.conversation.turns[-1].text == "echo: who is there"


async def streamed(peer: AgentBackend, event: dict[str, Any], text: str) -> None:
    conversation_id = event["data"]["conversation"]["id"]
    await peer.typing(conversation_id, "start")
    started = await peer.stream_start(conversation_id)
    message_id = started["message"]["id"] if "message" in started else started["message_id"]
    for word in ("Stream", "ing ", "reply"):
        await peer.stream_delta(message_id, word)
        await asyncio.sleep(0.05)
    buttons = [[{"id": "yes", "label": "Yes", "style": "primary"}, {"id": "no", "label": "No"}]]
    ended = await peer.stream_end(message_id, buttons=buttons, quick_replies=[{"label": "Later"}])
    assert ended.get("ok", True), ended


async def test_a_streamed_reply_grows_then_ends_with_buttons(hub: Hub) -> None:
    person = await hub.person()
    agent = await hub.agent(person, on_message(streamed))
    backend = await hub.backend(person)
    session = backend.new_session(agent.conversation_id)
    outgoing = session.prepare("stream please")
    updates = await collect(session, outgoing)
    assert outgoing.finished
    reply = session.conversation.turns[-1]
    assert reply.role == "assistant" and reply.state == "done"
    assert reply.text == "Streaming reply"
    deltas = "".join(u.delta or "" for u in updates)
    assert deltas == "Streaming reply"  # each piece once, whether pushed or read whole
    kinds = [type(u.change) for u in updates if u.change is not None]
    assert ButtonsPart in kinds and QuickRepliesPart in kinds
    buttons = next(p for p in reply.parts if isinstance(p, ButtonsPart))
    assert [b.label for b in buttons.rows[0]] == ["Yes", "No"]
    assert buttons.rows[0][0].style == "primary"
    types = [json.loads(u.wire)["type"] for u in updates if u.wire]
    assert "message.started" in types and "message.delta" in types
    assert "message.completed" in types


async def buttons_then_choice(peer: AgentBackend, event: dict[str, Any], text: str) -> None:
    conversation_id = event["data"]["conversation"]["id"]
    action = event["data"]["message"]["body"].get("action")
    if action is None:
        buttons = [[{"id": "a", "label": "Apples"}, {"id": "b", "label": "Pears"}]]
        await peer.send(conversation_id, "Which one?", buttons=buttons)
    else:
        await peer.send(conversation_id, f"you chose {action['button_id']}")


async def test_buttons_and_a_tap_followed_to_its_reply(hub: Hub) -> None:
    person = await hub.person()
    agent = await hub.agent(person, on_message(buttons_then_choice))
    backend = await hub.backend(person)
    session = backend.new_session(agent.conversation_id)
    await collect(session, session.prepare("fruit?"))
    question = session.conversation.turns[-1]
    tap = session.prepare_tap(question.id, "b")
    assert tap.text == "Pears"
    await collect(session, tap)
    assert tap.finished
    assert texts(session)[-2:] == [("user", "Pears"), ("assistant", "you chose b")]
    buttons = next(p for p in question.parts if isinstance(p, ButtonsPart))
    assert buttons.selected_button_id == "b"
    # History agrees: loaded again, the button is taken.
    loaded = await session.load(agent.conversation_id)
    again = next(p for p in loaded.turn(question.id).parts if isinstance(p, ButtonsPart))
    assert again.selected_button_id == "b"


async def test_backend_tap_sends_the_label_and_marks_the_button(hub: Hub) -> None:
    person = await hub.person()
    agent = await hub.agent(person, on_message(buttons_then_choice))
    backend = await hub.backend(person)
    session = backend.new_session(agent.conversation_id)
    await collect(session, session.prepare("fruit?"))
    question = session.conversation.turns[-1]
    await backend.tap(session, question.id, "a")
    assert session.conversation.turns[-1].text == "Apples"
    buttons = next(p for p in question.parts if isinstance(p, ButtonsPart))
    assert buttons.selected_button_id == "a"
    follow = session.follow()
    update = await asyncio.wait_for(anext(follow), 10)
    while session.conversation.turns[-1].text != "you chose a":
        update = await asyncio.wait_for(anext(follow), 10)
    assert update is not None
    await follow.aclose()


async def test_stop_ends_the_reply_where_it_stands(hub: Hub) -> None:
    started = asyncio.Event()

    async def slow(peer: AgentBackend, event: dict[str, Any], text: str) -> None:
        conversation_id = event["data"]["conversation"]["id"]
        reply = await peer.stream_start(conversation_id)
        message_id = reply["message"]["id"] if "message" in reply else reply["message_id"]
        await peer.stream_delta(message_id, "Working on it")
        started.set()
        for _ in range(100):
            await asyncio.sleep(0.1)
            await peer.stream_delta(message_id, ".")

    person = await hub.person()
    agent = await hub.agent(person, on_message(slow))
    backend = await hub.backend(person)
    session = backend.new_session(agent.conversation_id)
    outgoing = session.prepare("take your time")
    updates: list[CuckooUpdate] = []

    async def run() -> None:
        async for update in session.send(outgoing):
            updates.append(update)
            if update.delta == "Working on it":
                assert outgoing.run_id == agent.conversation_id
                await backend.stop(outgoing.run_id)

    await asyncio.wait_for(run(), 20)
    assert started.is_set() and outgoing.finished
    reply = session.conversation.turns[-1]
    assert reply.state == "cancelled"
    assert reply.text.startswith("Working on it")
    notices = [p for p in reply.parts if isinstance(p, NoticePart)]
    assert [n.code for n in notices] == ["stopped"]


async def test_a_dropped_socket_is_caught_up_with_every_message_once(hub: Hub) -> None:
    go = asyncio.Event()

    async def three(peer: AgentBackend, event: dict[str, Any], text: str) -> None:
        await go.wait()
        conversation_id = event["data"]["conversation"]["id"]
        for word in ("one", "two", "three"):
            await peer.send(conversation_id, word)

    person = await hub.person()
    agent = await hub.agent(person, on_message(three))
    backend = await hub.backend(person, socket_options={"delays": (1.5,)})
    session = backend.new_session(agent.conversation_id)
    await session.load(agent.conversation_id)
    outgoing = session.prepare("count")
    updates: list[CuckooUpdate] = []

    async def run() -> None:
        async for update in session.send(outgoing):
            updates.append(update)
            if update.lost:
                assert session.waiting
                go.set()  # the agent answers while the socket is down

    task = asyncio.create_task(run())
    for _ in range(100):
        if outgoing.sent is not None and backend.feed.state == "open":
            break
        await asyncio.sleep(0.05)
    connection = backend.feed._socket._socket  # type: ignore[union-attr]
    assert connection is not None
    connection.transport.abort()  # the line drops: no close frame
    await asyncio.wait_for(task, 20)
    assert any(u.lost for u in updates)
    assert any(u.recovered is not None and u.recovered.complete for u in updates)
    assert outgoing.finished and not session.waiting
    # The socket was down while the agent wrote: the record brought all three, each once.
    assert texts(session) == [
        ("user", "count"),
        ("assistant", "one"),
        ("assistant", "two"),
        ("assistant", "three"),
    ]
    page = await backend.client.messages(agent.conversation_id)
    assert [t.id for t in session.conversation.turns] == sorted(m.id for m in page.messages)
    # A live push of one of them now (a hub replaying) changes nothing.
    before = [(t.id, t.text) for t in session.conversation.turns]
    for message in page.messages:
        session.conversation.apply_message(message)
    assert [(t.id, t.text) for t in session.conversation.turns] == before


async def test_a_retry_with_the_same_key_stores_one_message(hub: Hub) -> None:
    person = await hub.person()
    agent = await hub.agent(person, echo)
    backend = await hub.backend(person)
    session = backend.new_session(agent.conversation_id)
    first = session.prepare("only once")
    await collect(session, first)
    again = session.again("only once", first.message_id)
    await collect(session, again)
    assert again.hub_message_id == first.hub_message_id
    assert again.finished
    assert texts(session) == [("user", "only once"), ("assistant", "echo: only once")]
    page = await backend.client.messages(agent.conversation_id)
    assert [m.body.text for m in page.messages].count("only once") == 1


async def test_an_agent_that_never_answers_ends_the_send_and_the_reply_shows_later(
    hub: Hub,
) -> None:
    person = await hub.person()
    agent = await hub.agent(person, echo, connect=False)
    backend = await hub.backend(person, session_options={"quiet_seconds": 1.5, "poll_seconds": 0.5})
    session = backend.new_session(agent.conversation_id)
    outgoing = session.prepare("anyone?")
    updates = await collect(session, outgoing)
    ended = updates[-1].recovered
    assert ended is not None and ended.pending and not ended.complete
    assert not outgoing.settled
    mine = session.conversation.turns[-1]
    assert mine.role == "user" and mine.text == "anyone?"
    assert any(isinstance(p, NoticePart) and p.code == "no_reply_yet" for p in mine.parts)
    follow = session.follow()
    await agent.peer.connect()  # back: the hub delivers what waited
    while session.conversation.turns[-1].text != "echo: anyone?":
        await asyncio.wait_for(anext(follow), 10)
    await follow.aclose()
    assert not any(isinstance(p, NoticePart) for p in mine.parts)


async def test_paging_back_to_the_first_message(hub: Hub) -> None:
    person = await hub.person()
    agent = await hub.agent(person, connect=False)
    for n in range(120):
        sent = await agent.peer.post_message(agent.conversation_id, text=f"m{n}")
        assert sent.status_code == 201, sent.text
    backend = await hub.backend(person)
    session = backend.new_session(agent.conversation_id)
    await session.load(agent.conversation_id)
    assert len(session.conversation.turns) == 50
    assert session.conversation.turns[-1].text == "m119"
    assert await backend.load_earlier(session)
    assert len(session.conversation.turns) == 100
    assert await backend.load_earlier(session)
    assert [t.text for t in session.conversation.turns] == [f"m{n}" for n in range(120)]
    assert not await backend.load_earlier(session)
    assert session.conversation.turns[0].id != TRIMMED_ID  # nothing was trimmed


async def test_history_cut_by_retention_says_so(cuckoo_hub: Any) -> None:
    from tests.backends.cuckoo.conftest import FAST_HUB

    codes: dict[str, str] = {}
    url = cuckoo_hub(
        code_sink=lambda email, code: codes.__setitem__(email, code),
        retention_seconds=1.0,
        **FAST_HUB,
    )
    hub = Hub(url, codes)
    try:
        person = await hub.person()
        agent = await hub.agent(person, connect=False)
        await agent.peer.post_message(agent.conversation_id, text="old")
        await asyncio.sleep(1.3)
        await agent.peer.post_message(agent.conversation_id, text="new")
        backend = await hub.backend(person)
        session = backend.new_session(agent.conversation_id)
        await session.load(agent.conversation_id)
        turns = session.conversation.turns
        assert turns[0].id == TRIMMED_ID
        notice = turns[0].parts[0]
        assert isinstance(notice, NoticePart) and notice.code == "trimmed"
        assert [t.text for t in turns[1:]] == ["new"]
        assert not await backend.load_earlier(session)
        assert [t.id for t in session.conversation.turns].count(TRIMMED_ID) == 1
    finally:
        for backend in hub.backends:
            await backend.aclose()
        for peer in hub.agents:
            await peer.close()


def test_text_parts_are_what_ask_prints() -> None:
    update = CuckooUpdate(TextPart("m", ["x"]), None, "x")
    assert update.delta == "x" and update.wire is None and not update.lost
