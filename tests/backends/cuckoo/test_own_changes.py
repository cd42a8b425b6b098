"""The backend's schedules and the person's own changes against the reference hub: a
conversation's schedules asked for, followed as the hub pushes their changes (the agent's
confirmation among them), paused, resumed and deleted; a message sent for one names it in the
conversation; the name changed; a message hidden and the conversation cleared for the person."""

from __future__ import annotations

import asyncio

import pytest

from talkie_tui.backends.cuckoo import account
from talkie_tui.backends.cuckoo.schedules import ConversationSchedules
from talkie_tui.backends.parts.schedules import Cadence
from talkie_tui.core.errors import ConflictError, ServerError
from tests.backends.cuckoo.conftest import Hub

pytestmark = pytest.mark.slow

DAILY = Cadence(repeat="daily", time="08:00", timezone="Europe/Prague")


async def test_schedules_asked_for_followed_paused_and_deleted(hub: Hub) -> None:
    person = await hub.person()
    agent = await hub.agent(person, schedules=True)
    backend = await hub.backend(person)
    schedules = ConversationSchedules(backend, agent.conversation_id)
    assert await schedules.supported() is True
    assert await schedules.load() == []
    changes = schedules.changes()
    coming = asyncio.ensure_future(anext(changes))  # listening from now on
    await asyncio.sleep(0)
    assert await backend.feed.wait_ready(10)
    made = await schedules.create("  Send me the news  ", DAILY)
    assert made.pending and made.instruction == "Send me the news"
    assert made.cadence == DAILY and made.next_run_at is not None
    first = await asyncio.wait_for(coming, 10)
    assert first.schedule.id == made.id
    path = f"/v1/agent/conversations/{agent.conversation_id}/schedules/{made.id}"
    confirmed = await agent.peer.http.patch(path, json={"status": "active", "title": "News"})
    assert confirmed.status_code == 200, confirmed.text
    while (push := await asyncio.wait_for(anext(changes), 10)).schedule.status != "active":
        pass
    assert push.schedule.title == "News"
    [shown] = schedules.items
    assert shown.status == "active" and shown.title == "News"
    paused = await schedules.set_paused(made.id, True)
    assert paused.paused
    refused = await agent.peer.post_message(agent.conversation_id, text="x", schedule_id=made.id)
    assert refused.status_code == 409
    assert (await schedules.set_paused(made.id, False)).status == "active"
    session = backend.new_session(agent.conversation_id)
    await session.load(agent.conversation_id)
    sent = await agent.peer.post_message(agent.conversation_id, text="Sunny", schedule_id=made.id)
    assert sent.status_code == 201
    await session.load(agent.conversation_id)
    assert session.conversation.turns[-1].schedule == "News"
    await schedules.delete(made.id)
    assert schedules.items == [] and await schedules.load() == []
    await changes.aclose()


async def test_a_plain_agent_runs_no_schedules_and_the_hub_says_so(hub: Hub) -> None:
    person = await hub.person()
    agent = await hub.agent(person)
    backend = await hub.backend(person)
    schedules = ConversationSchedules(backend, agent.conversation_id)
    assert await schedules.supported() is False
    with pytest.raises(ServerError) as refused:
        await schedules.create("Remind me", DAILY)
    assert refused.value.code == "schedules_not_supported"


async def test_eleven_schedules_are_one_too_many(hub: Hub) -> None:
    person = await hub.person()
    agent = await hub.agent(person, schedules=True)
    backend = await hub.backend(person)
    schedules = ConversationSchedules(backend, agent.conversation_id)
    for n in range(10):
        await schedules.create(f"job {n}", DAILY)
    with pytest.raises(ConflictError) as refused:
        await schedules.create("one more", DAILY)
    assert refused.value.code == "too_many_schedules"


async def test_my_name_and_what_i_hide(hub: Hub) -> None:
    person = await hub.person()
    agent = await hub.agent(person)
    backend = await hub.backend(person)
    renamed = await account.rename(backend, "  Ana   Nováková ")
    assert renamed.name == "Ana Nováková" and backend.user == renamed
    for text in ("one", "two", "three"):
        await agent.peer.post_message(agent.conversation_id, text=text)
    session = backend.new_session(agent.conversation_id)
    await session.load(agent.conversation_id)
    two = next(t for t in session.conversation.turns if t.text == "two")
    await account.hide_for_me(backend, session, two)
    assert [t.text for t in session.conversation.turns] == ["one", "three"]
    await session.load(agent.conversation_id)
    assert [t.text for t in session.conversation.turns] == ["one", "three"]
    await account.clear_for_me(backend, session)
    assert session.conversation.turns == []
    await session.load(agent.conversation_id)
    assert session.conversation.turns == []
