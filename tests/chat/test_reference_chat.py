"""The chat layer against the reference server: live runs and loaded history look the same,
a cut stream is recovered from the thread, and nothing is ever decided without a person."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from talkie_tui.backends.base import Recovered
from talkie_tui.backends.talkie.reducer import conversation_from_history
from talkie_tui.backends.talkie.session import TalkieSession
from talkie_tui.chat.turns import ActionPart, CardPart, Turn
from talkie_tui.devserver.talkie.testmode import SLOW_TEXT
from talkie_tui.protocol.talkie.events import StreamTruncated
from tests.helpers import TEST_TOKEN
from tests.protocol.conftest import Connect
from tests.stub_server import CuttingProxy

FAST: dict[str, Any] = {
    "test_mode": True,
    "dev_token": TEST_TOKEN,
    "demo_delay": 0.0,
    "slow_seconds": 1.5,
}


def summary(turn: Turn) -> tuple[str, str, list[str], list[str]]:
    """What a person sees of a turn: role, text, cards and actions (tool status is live only)."""
    cards = [p.card.fallback_text for p in turn.parts if isinstance(p, CardPart)]
    actions = [p.action.id for p in turn.parts if isinstance(p, ActionPart)]
    return turn.role, turn.text, cards, actions


async def send(session: TalkieSession, text: str) -> list[Any]:
    return [update async for update in session.send(session.prepare(text))]


async def test_a_live_thread_and_its_loaded_history_show_the_same_turns(
    devserver: Callable[..., str], connect: Connect
) -> None:
    """DESIGN "live and history render through one path": the same roles, texts, cards and
    actions, whether the answers streamed in or the thread was loaded later (§9)."""
    session = TalkieSession(await connect(devserver(**FAST)))
    for text in ("talkie-test:echo Dobrý den", "talkie-test:card", "talkie-test:action"):
        await send(session, text)
    live = session.conversation

    loaded = conversation_from_history(await session.client.thread(session.thread_id or ""))

    assert [summary(turn) for turn in loaded.turns] == [summary(turn) for turn in live.turns]
    assert [turn.role for turn in live.turns] == ["user", "assistant"] * 3
    assert any(summary(turn)[2] for turn in live.turns)  # a card was compared
    assert any(summary(turn)[3] for turn in live.turns)  # and an action


async def test_no_action_is_decided_without_a_person(
    devserver: Callable[..., str], connect: Connect
) -> None:
    """§8: proposing, showing and reloading an action never decides it."""
    session = TalkieSession(await connect(devserver(**FAST)))
    await send(session, "talkie-test:action")
    await session.load(session.thread_id or "")

    (action_id,) = session.conversation.actions
    assert (await session.client.action(action_id)).status == "pending"


async def test_a_cut_stream_is_recovered_from_the_thread(
    devserver: Callable[..., str], connect: Connect
) -> None:
    """§5 "disconnect is not cancel": the connection of a slow run is cut mid-answer; the
    server finishes the run, and the session shows the whole answer from the thread."""
    server = devserver(**FAST)
    async with CuttingProxy(server) as proxy:
        client = await connect(proxy.origin)
        session = TalkieSession(client, sleep=lambda delay: asyncio.sleep(delay / 4))

        updates = await send(session, "talkie-test:slow")

    assert proxy.cuts == 1
    assert any(isinstance(update.event, StreamTruncated) for update in updates)
    assert updates[-1].event == Recovered(complete=True)
    user, answer = session.conversation.turns
    assert (user.text, answer.text, answer.state) == ("talkie-test:slow", SLOW_TEXT, "done")
