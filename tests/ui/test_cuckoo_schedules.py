"""A conversation's schedules in the real app against the reference hub, the agent being the
independent test agent, which confirms what it is asked for: the panel (palette: Schedules)
asks for one with an instruction and a cadence, shows it waiting and then confirmed, pauses it
(the agent's send for it is refused), resumes it (the message sent for it names it in the
transcript), and deletes it after asking."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, OptionList

from talkie_tui.ui.app import TalkieApp
from talkie_tui.ui.screens.schedules import NewScheduleScreen, SchedulesScreen
from tests.backends.cuckoo.conftest import Hub, hub
from tests.cuckoo_peer.agent import AgentBackend
from tests.ui.flows import screen_text, screen_up, until
from tests.ui.test_cuckoo_hub_own import app_on, confirm, run_command, shown

pytestmark = pytest.mark.slow

__all__ = ["hub"]  # the reference hub fixture, shared with the hub backend tests


SIZE = (120, 36)


async def confirms(peer: AgentBackend, event: dict[str, Any]) -> None:
    """The agent confirms every schedule it is asked for, naming it."""
    if event["type"] != "schedule.requested":
        return
    data = event["data"]
    answer = await peer.http.patch(
        f"/v1/agent/conversations/{data['conversation']['id']}/schedules/{data['schedule']['id']}",
        json={"status": "active", "title": "Morning news"},
    )
    assert answer.status_code == 200, answer.text


def panel_text(app: TalkieApp) -> str:
    return " ".join(str(o.prompt) for o in app.screen.query_one(OptionList).options)


async def test_a_schedule_asked_confirmed_paused_resumed_and_deleted(
    hub: Hub, tmp_path: Path
) -> None:
    person = await hub.person()
    agent = await hub.agent(person, confirms, schedules=True)
    await agent.peer.post_message(agent.conversation_id, text="Hello, I run schedules.")
    app = await app_on(hub, person, agent, tmp_path)

    async def send_for(schedule_id: str) -> int:
        sent = await agent.peer.post_message(
            agent.conversation_id, text="Today: sunny", schedule_id=schedule_id
        )
        return sent.status_code

    async with app.run_test(size=SIZE) as pilot:
        chat = await shown(app, pilot, "I run schedules")
        await run_command(app, pilot, "schedules", "Schedules")
        await until(pilot, lambda: isinstance(app.screen, SchedulesScreen))
        panel = app.screen
        assert isinstance(panel, SchedulesScreen)
        await until(pilot, lambda: "No schedules yet" in panel.status_text)
        assert not panel.query_one(OptionList).display  # no empty list under the words
        await pilot.press("n")
        await until(pilot, lambda: screen_up(app, NewScheduleScreen))
        await pilot.press(*"Send me the news", "enter")
        cadence = app.screen.query_one("#schedule-cadence", Input)
        assert cadence.has_focus
        cadence.value = ""
        await pilot.press(*"every day", "enter")  # not a cadence: it says how to write one
        await until(pilot, lambda: "Write when it runs as" in screen_text(app))
        assert isinstance(app.screen, NewScheduleScreen)
        cadence.value = ""
        await pilot.press(*"weekdays 07:30", "enter")
        await until(pilot, lambda: app.screen is panel)
        await until(pilot, lambda: "Morning news" in panel_text(app), timeout=15)
        assert "weekdays at 07:30" in panel_text(app)
        assert "waiting for the agent" not in panel_text(app)  # confirmed, pushed here
        [schedule] = panel.schedules.items
        assert schedule.status == "active" and schedule.next_run_at is not None
        svg = Path(os.environ.get("TALKIE_SCHEDULES_SVG", str(tmp_path / "schedules.svg")))
        svg.write_text(app.export_screenshot(), encoding="utf-8")
        await pilot.press("p")
        await until(pilot, lambda: "paused" in panel_text(app))
        assert await send_for(schedule.id) == 409  # paused: the agent's send is refused
        await pilot.press("p")
        await until(pilot, lambda: "paused" not in panel_text(app))
        assert await send_for(schedule.id) == 201
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is chat)
        await until(pilot, lambda: "For the schedule “Morning news”" in screen_text(app), 15)
        await run_command(app, pilot, "schedules", "Schedules")
        await until(pilot, lambda: isinstance(app.screen, SchedulesScreen))
        await until(pilot, lambda: "Morning news" in panel_text(app))
        await pilot.press("d")
        await confirm(app, pilot, "Delete the schedule “Morning news”?")
        panel = app.screen
        assert isinstance(panel, SchedulesScreen)
        await until(pilot, lambda: "No schedules yet" in panel.status_text)
        assert not panel.query_one(OptionList).display
        assert await send_for(schedule.id) == 409  # deleted
    requested = {
        e["id"]: e["data"]["schedule"]["instruction"]
        for e in agent.peer.received
        if e.get("type") == "schedule.requested"
    }
    assert list(requested.values()) == ["Send me the news"]  # asked for once
