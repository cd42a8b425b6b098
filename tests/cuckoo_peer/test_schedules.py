"""Schedules, round trip, with an agent written from the notes' schedule ops alone: the agent
declares `supports_schedules`; a person asks for a schedule and the agent hears
`schedule.requested` and confirms it (`PATCH {"status": "active", "title"}`); the agent runs
the timer (the hub only keeps and enforces schedules), so when its clock reaches `next_run_at`
it answers the instruction with a send carrying `schedule_id`, and the person sees the message
with the schedule's title; a person's pause refuses such sends (`409 schedule_paused`, and the
agent may not resume it: `403 paused_by_person`), a delete refuses them for good
(`409 schedule_deleted`)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

from tests.cuckoo_peer.agent import AgentBackend
from tests.cuckoo_peer.person import error_of

TITLE = "Morning news"
TOMORROW = (date.today() + timedelta(days=1)).isoformat()


class ScheduleAgent:
    """The agent's side of schedules: confirms what it is asked for, keeps what runs, and
    sends for each schedule that is due by its clock."""

    def __init__(self) -> None:
        self.running: dict[str, dict[str, Any]] = {}

    async def __call__(self, backend: AgentBackend, event: dict[str, Any]) -> None:
        kind, data = event["type"], event["data"]
        if not kind.startswith("schedule."):
            return
        schedule = data["schedule"]
        if kind == "schedule.deleted" or schedule["status"] == "paused":
            self.running.pop(schedule["id"], None)
            return
        if schedule["status"] == "pending":
            path = f"/v1/agent/conversations/{data['conversation']['id']}/schedules"
            confirmed = await backend.http.patch(
                f"{path}/{schedule['id']}", json={"status": "active", "title": TITLE}
            )
            assert confirmed.status_code == 200, confirmed.text
            schedule = confirmed.json()["schedule"]
        self.running[schedule["id"]] = schedule

    async def run_due(self, backend: AgentBackend, now: datetime) -> list[dict[str, Any]]:
        """Answer every schedule due by `now` over the socket: the hub's replies."""
        replies = []
        for schedule in list(self.running.values()):
            due = schedule["next_run_at"]
            if due is None or datetime.fromisoformat(due.replace("Z", "+00:00")) > now:
                continue
            replies.append(
                await backend.send(
                    schedule["conversation_id"],
                    f"Today's news ({schedule['instruction']}): sunny.",
                    schedule_id=schedule["id"],
                    idempotency_key=f"{schedule['id']}@{due}",
                )
            )
        return replies


async def test_a_schedule_asked_confirmed_run_paused_and_deleted(chat_with: Any) -> None:
    agent = ScheduleAgent()
    chat = await chat_with(agent, schedules=True)
    person, backend = chat.person, chat.backend
    assert backend is not None
    feed = await person.socket()
    path = f"/v1/client/conversations/{chat.conversation_id}/schedules"

    # Asked for: pending, then confirmed by the agent, named, active.
    cadence = {"repeat": "once", "date": TOMORROW, "time": "08:00", "timezone": "UTC"}
    body = {"instruction": "Send me the news", "cadence": cadence}
    asked = await person.http.post(path, json=body)
    assert asked.status_code == 201, asked.text
    schedule_id = asked.json()["schedule"]["id"]
    assert asked.json()["schedule"]["status"] == "pending"
    await backend.wait_until(lambda: schedule_id in agent.running)
    changed = await feed.wait_frame(
        lambda f: f["type"] == "schedule.changed" and f["data"]["schedule"]["status"] == "active"
    )
    assert changed["data"]["schedule"]["title"] == TITLE

    # Tomorrow, for the agent: it sends for the schedule, and the person sees which one.
    nothing = await agent.run_due(backend, datetime.now(UTC))
    assert nothing == []
    [sent] = await agent.run_due(backend, datetime.now(UTC) + timedelta(days=2))
    assert sent["ok"], sent
    page = await person.history(chat.conversation_id)
    shown = next(m for m in page["messages"] if m["id"] == sent["message"]["id"])
    assert shown["schedule"] == {"id": schedule_id, "title": TITLE}
    listed = (await person.http.get(path)).json()["schedules"]
    assert listed[0]["last_run_at"] is not None

    # Paused by the person: the agent hears it, a send for it is refused, and only the
    # person may resume it.
    paused = await person.http.patch(f"{path}/{schedule_id}", json={"paused": True})
    assert paused.status_code == 200, paused.text
    await backend.wait_until(lambda: schedule_id not in agent.running)
    refused = await backend.post_message(
        chat.conversation_id, text="Still sunny.", schedule_id=schedule_id
    )
    assert refused.status_code == 409 and error_of(refused)["code"] == "schedule_paused"
    resume = await backend.http.patch(
        f"/v1/agent/conversations/{chat.conversation_id}/schedules/{schedule_id}",
        json={"status": "active"},
    )
    assert resume.status_code == 403 and error_of(resume)["code"] == "paused_by_person"

    # Deleted: the agent hears `schedule.deleted`, and a send for it is refused for good.
    deleted = await person.http.delete(f"{path}/{schedule_id}")
    assert deleted.status_code == 204, deleted.text
    await backend.wait_event(lambda e: e["type"] == "schedule.deleted")
    over_socket = await backend.send(chat.conversation_id, "Sunny.", schedule_id=schedule_id)
    assert not over_socket["ok"] and over_socket["error"]["code"] == "schedule_deleted"
    gone = await backend.post_message(chat.conversation_id, text="Sunny.", schedule_id=schedule_id)
    assert gone.status_code == 409 and error_of(gone)["code"] == "schedule_deleted"
    await feed.close()
