"""An agent's answer on a hub may be several messages (through the bridge: a card, then the
streamed text; a text, then a message with buttons). A send follows every message of it, until
nothing streams, the agent's activity is idle or lapsed, and a short quiet passed; the next
send gets only its own answer. Against the reference hub, answered by the independent test
agent."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from talkie_tui.backends.cuckoo import session as cuckoo_session
from talkie_tui.backends.cuckoo.session import CuckooSession, CuckooUpdate
from talkie_tui.chat.turns import ButtonsPart
from tests.backends.cuckoo.conftest import FAST_SESSION, Hub, on_message
from tests.cuckoo_peer.agent import AgentBackend

pytestmark = pytest.mark.slow

CONFIRM = [[{"id": "yes", "label": "Confirm"}, {"id": "no", "label": "Cancel"}]]


async def activity(peer: AgentBackend, conversation_id: str, state: str) -> None:
    await peer.request({"op": "activity", "conversation_id": conversation_id, "state": state})


async def streamed(peer: AgentBackend, conversation_id: str, *chunks: str) -> None:
    started = await peer.stream_start(conversation_id)
    message_id = started["message_id"] if "message_id" in started else started["message"]["id"]
    for chunk in chunks:
        await peer.stream_delta(message_id, chunk)
        await asyncio.sleep(0.05)
    await peer.stream_end(message_id)


async def three_messages(peer: AgentBackend, event: dict[str, Any], text: str) -> None:
    """A card-like message, a pause longer than the settling time while the agent "thinks",
    the streamed text, then idle and a message with buttons."""
    conversation_id = event["data"]["conversation"]["id"]
    await activity(peer, conversation_id, "thinking")
    await peer.send(conversation_id, f"Card: {text}")
    await asyncio.sleep(2.0)  # longer than SETTLE_SECONDS: the activity holds the answer open
    await streamed(peer, conversation_id, "Two open ", "items for ", text, ".")
    await asyncio.sleep(0.3)
    # Idle before the buttons, as an agent that is done says: an "idle" sent after them could
    # reach the person after the next message's "thinking" (the peer handles events
    # concurrently), which ends that answer early.
    await activity(peer, conversation_id, "idle")
    await peer.send(conversation_id, "Send the offer?", buttons=CONFIRM)


async def two_quick_messages(peer: AgentBackend, event: dict[str, Any], text: str) -> None:
    """No activity at all: two messages a moment apart (less than the settling time)."""
    conversation_id = event["data"]["conversation"]["id"]
    await peer.send(conversation_id, f"First of {text}")
    await asyncio.sleep(0.4)
    await peer.send(conversation_id, f"Second of {text}")


async def collect(session: CuckooSession, outgoing: Any) -> list[CuckooUpdate]:
    return [update async for update in session.send(outgoing)]


def agent_texts(session: CuckooSession) -> list[str]:
    return [t.text for t in session.conversation.turns if t.role == "assistant"]


async def test_a_send_follows_every_message_of_the_answer(hub: Hub) -> None:
    person = await hub.person()
    agent = await hub.agent(person, on_message(three_messages))
    backend = await hub.backend(person)
    session = backend.new_session(agent.conversation_id)
    await session.load(agent.conversation_id)
    outgoing = session.prepare("Alfa")
    updates = await collect(session, outgoing)
    assert outgoing.finished and outgoing.failure is None
    assert agent_texts(session) == ["Card: Alfa", "Two open items for Alfa.", "Send the offer?"]
    assert all(t.state == "done" for t in session.conversation.turns)
    # Each message came through the send: the card whole, the text in its deltas, the buttons.
    deltas = "".join(u.delta or "" for u in updates)
    assert "Card: Alfa" in deltas and "Two open items for Alfa." in deltas
    assert any(isinstance(u.change, ButtonsPart) for u in updates)
    # The next send gets its own answer only: nothing of the first spills into it.
    second = session.prepare("Beta")
    updates = await collect(session, second)
    assert second.finished
    deltas = "".join(u.delta or "" for u in updates)
    assert "Alfa" not in deltas and "Card: Beta" in deltas and "items for Beta." in deltas
    assert agent_texts(session)[3:] == ["Card: Beta", "Two open items for Beta.", "Send the offer?"]


async def test_an_answer_without_activity_is_over_after_a_short_quiet(hub: Hub) -> None:
    person = await hub.person()
    agent = await hub.agent(person, on_message(two_quick_messages))
    # Over soon after the last message (the 1.2 s settling time), not at the no-answer timeout:
    # made ten minutes, it cannot end the answer within the wait below (a wait, not a measure).
    backend = await hub.backend(person, session_options={**FAST_SESSION, "quiet_seconds": 600.0})
    session = backend.new_session(agent.conversation_id)
    await session.load(agent.conversation_id)
    outgoing = session.prepare("hello")
    async with asyncio.timeout(60):
        await collect(session, outgoing)
    assert outgoing.finished
    assert agent_texts(session) == ["First of hello", "Second of hello"]


async def buttons_while_thinking(peer: AgentBackend, event: dict[str, Any], text: str) -> None:
    """Text, then buttons to tap, the agent still "thinking" (it never says idle)."""
    conversation_id = event["data"]["conversation"]["id"]
    await activity(peer, conversation_id, "thinking")
    await peer.send(conversation_id, f"About {text}")
    await peer.send(conversation_id, "Send the offer?", buttons=CONFIRM)


async def test_buttons_to_tap_end_the_answer_at_once(
    hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The person's turn: the app takes a tap only between answers, so the answer does not
    wait for the agent's activity to lapse (10 s) or the settling time."""
    person = await hub.person()
    agent = await hub.agent(person, on_message(buttons_while_thinking))
    # Settling and the activity's lapse made ten minutes: neither can end the answer within the
    # wait below (a wait, not a measure); only the buttons can.
    monkeypatch.setattr(cuckoo_session, "ACTIVITY_SECONDS", 600.0)
    options = {**FAST_SESSION, "settle_seconds": 600.0, "quiet_seconds": 600.0}
    backend = await hub.backend(person, session_options=options)
    session = backend.new_session(agent.conversation_id)
    await session.load(agent.conversation_id)
    outgoing = session.prepare("Alfa")
    async with asyncio.timeout(60):
        await collect(session, outgoing)
    assert outgoing.finished
    assert agent_texts(session) == ["About Alfa", "Send the offer?"]
