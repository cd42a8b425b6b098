"""The bridge runs the schedules people ask its agent for: the reference hub, the reference
Talkie server (demo agent) and the bridge in-process. A person's request is confirmed (active),
the instruction is answered when it is due (the bridge's clock moved past it) in messages sent
for the schedule, a pause and a delete stop it, and a request made while the bridge was away
is confirmed when it is back."""

from __future__ import annotations

import asyncio
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest

from tests.bridge.conftest import Person, ServedBy, StartBridge, make_agent

pytestmark = pytest.mark.slow

TOMORROW = (date.today() + timedelta(days=1)).isoformat()
ONCE = {"repeat": "once", "date": TOMORROW, "time": "09:00", "timezone": "UTC"}
DAILY = {"repeat": "daily", "time": "07:30", "timezone": "Europe/Prague"}


async def ask(person: Person, conversation_id: str, instruction: str, cadence: Any) -> str:
    """The person asks for a schedule: its id."""
    answer = await person.http.post(
        f"/v1/client/conversations/{conversation_id}/schedules",
        json={"instruction": instruction, "cadence": cadence},
    )
    assert answer.status_code == 201, answer.text
    assert answer.json()["schedule"]["status"] == "pending"
    return str(answer.json()["schedule"]["id"])


async def schedule_of(person: Person, conversation_id: str, schedule_id: str) -> dict[str, Any]:
    listed = await person.http.get(f"/v1/client/conversations/{conversation_id}/schedules")
    assert listed.status_code == 200, listed.text
    found = [s for s in listed.json()["schedules"] if s["id"] == schedule_id]
    return dict(found[0]) if found else {}


async def until_status(person: Person, conversation_id: str, schedule_id: str, status: str) -> None:
    for _ in range(150):
        if (await schedule_of(person, conversation_id, schedule_id)).get("status") == status:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"{schedule_id} never became {status}")


async def until(predicate: Any) -> None:
    for _ in range(150):
        if predicate():
            return
        await asyncio.sleep(0.1)
    raise AssertionError("never")


async def test_a_schedule_is_confirmed_and_run_for_the_person(
    hub: str, owner: Person, start_bridge: StartBridge, served_by: ServedBy
) -> None:
    agent = await make_agent(hub, owner, schedules=True)
    running = await start_bridge(agent, **await served_by(agent))
    schedule_id = await ask(owner, agent.dm, "show me Alfa", ONCE)
    await until_status(owner, agent.dm, schedule_id, "active")
    assert any("confirmed" in line for line in running.lines), running.lines

    # Tomorrow comes (for the bridge): the instruction is answered, every message for it.
    schedules = running.bridge.schedules
    schedules.clock = lambda: datetime.now(UTC) + timedelta(days=2)
    schedules.wake()
    sent = await owner.wait_agent_messages(
        agent.dm,
        lambda found: (
            any("Alfa" in m["body"].get("text", "") for m in found)
            and all(m["status"] == "complete" for m in found)
        ),
        timeout=30,
    )
    for message in sent:
        assert message["schedule"] == {"id": schedule_id, "title": "show me Alfa"}
    ran = await schedule_of(owner, agent.dm, schedule_id)
    assert ran["last_run_at"] is not None
    assert any("schedule “show me Alfa”" in line and "answered" in line for line in running.lines)
    # The hub's clock is still before the run (it says the same time again): not run twice.
    assert not schedules._due(schedules.clock())


async def test_a_pause_and_a_delete_stop_it(
    hub: str, owner: Person, start_bridge: StartBridge
) -> None:
    agent = await make_agent(hub, owner, schedules=True)
    running = await start_bridge(agent)
    schedules = running.bridge.schedules
    schedule_id = await ask(owner, agent.dm, "What meetings do I have today?", DAILY)
    await until_status(owner, agent.dm, schedule_id, "active")
    await until(lambda: schedule_id in schedules.running)

    path = f"/v1/client/conversations/{agent.dm}/schedules/{schedule_id}"
    before = schedules.running[schedule_id]
    paused = await owner.http.patch(path, json={"paused": True})
    assert paused.status_code == 200, paused.text
    await until(lambda: schedule_id not in schedules.running)
    # A run that was due as the pause came: the hub refuses it, and nothing is sent.
    await schedules._run(before)
    assert any("is not run" in line for line in running.lines), running.lines
    assert await owner.agent_messages(agent.dm) == []
    resumed = await owner.http.patch(path, json={"paused": False})
    assert resumed.status_code == 200, resumed.text
    await until(lambda: schedule_id in schedules.running)
    # A changed instruction is pending again, and confirmed again.
    changed = await owner.http.patch(path, json={"instruction": "show me Alfa"})
    assert changed.json()["schedule"]["status"] == "pending"
    await until_status(owner, agent.dm, schedule_id, "active")
    await until(lambda: schedules.running[schedule_id].instruction == "show me Alfa")

    deleted = await owner.http.delete(path)
    assert deleted.status_code == 204, deleted.text
    await until(lambda: schedule_id not in schedules.running)
    assert any("deleted" in line for line in running.lines), running.lines


async def test_a_request_made_while_away_is_confirmed_at_the_start(
    hub: str, owner: Person, start_bridge: StartBridge
) -> None:
    agent = await make_agent(hub, owner, schedules=True)
    first = await start_bridge(agent)
    await owner.say(agent.dm, "show me Alfa")  # the bridge learns the conversation
    await owner.wait_agent_messages(agent.dm, lambda found: bool(found), timeout=30)
    await first.stop()
    schedule_id = await ask(owner, agent.dm, "show me Alfa", DAILY)
    second = await start_bridge(agent)
    await until_status(owner, agent.dm, schedule_id, "active")
    await until(lambda: schedule_id in second.bridge.schedules.running)
