"""Schedules on the hub, as `notes/cuckoo.md` says: a person asks (pending, the agent hears
`schedule.requested`), the agent confirms by PATCH, a send for it names it; a pause refuses
the agent's sends (`409 schedule_paused`) until the person resumes it (the agent may not:
`403 paused_by_person`); a delete refuses them as deleted; the limits; `schedule.changed` on
the person's socket. The agent is plain HTTP here (`wire.py`)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect

from tests.devserver.cuckoo.wire import Agent, dev, error_of, frame_where, make_agent

DAILY = {"repeat": "daily", "time": "08:00", "timezone": "Europe/Prague"}


@pytest.fixture
def agent(http: httpx.Client, hub_url: str) -> Agent:
    return make_agent(http, hub_url, schedules=True)


def schedules_path(agent: Agent) -> str:
    return f"{agent.url}/v1/client/conversations/{agent.conversation_id}/schedules"


def ask(http: httpx.Client, agent: Agent, **body: Any) -> httpx.Response:
    """The person's POST …/schedules."""
    body = {"instruction": "Send me the news", "cadence": DAILY, **body}
    return http.post(schedules_path(agent), headers=dev(agent.owner), json=body)


def person_patch(http: httpx.Client, agent: Agent, sid: str, **body: Any) -> httpx.Response:
    return http.patch(f"{schedules_path(agent)}/{sid}", headers=dev(agent.owner), json=body)


def agent_patch(http: httpx.Client, agent: Agent, sid: str, **body: Any) -> httpx.Response:
    path = f"{agent.url}/v1/agent/conversations/{agent.conversation_id}/schedules/{sid}"
    return http.patch(path, headers=agent.headers, json=body)


def of_type(agent: Agent, http: httpx.Client, event_type: str) -> list[dict[str, Any]]:
    return [e for e in agent.events(http) if e["type"] == event_type]


def test_asked_confirmed_and_sent_for(agent: Agent, http: httpx.Client) -> None:
    asked = ask(http, agent, instruction="Send me the news of the day\nwith the weather")
    assert asked.status_code == 201, asked.text
    schedule = asked.json()["schedule"]
    assert schedule["status"] == "pending" and schedule["created_by"] == "user"
    assert schedule["title"] == "Send me the news of the day"
    assert schedule["cadence"] == DAILY and schedule["next_run_at"].endswith("Z")
    [requested] = of_type(agent, http, "schedule.requested")
    assert requested["data"]["schedule"]["id"] == schedule["id"]
    assert requested["data"]["conversation"]["id"] == agent.conversation_id
    assert {p["kind"] for p in requested["data"]["participants"]} == {"user", "agent"}
    confirmed = agent_patch(http, agent, schedule["id"], status="active", title="Morning news")
    assert confirmed.status_code == 200, confirmed.text
    assert confirmed.json()["schedule"]["status"] == "active"
    sent = agent.send(http, text="Today: sunny", schedule_id=schedule["id"])
    assert sent.status_code == 201, sent.text
    assert sent.json()["message"]["schedule_id"] == schedule["id"]
    page = http.get(
        f"{agent.url}/v1/client/conversations/{agent.conversation_id}/messages",
        headers=dev(agent.owner),
    ).json()
    assert page["messages"][0]["schedule"] == {"id": schedule["id"], "title": "Morning news"}
    [listed] = http.get(schedules_path(agent), headers=dev(agent.owner)).json()["schedules"]
    assert listed["last_run_at"] is not None and listed["title"] == "Morning news"
    unknown = agent.send(http, text="x", schedule_id="sch_" + "0" * 26)
    assert unknown.status_code == 404 and error_of(unknown)["code"] == "schedule_not_found"


def test_a_pause_refuses_sends_until_the_person_resumes_and_a_delete_for_good(
    agent: Agent, http: httpx.Client
) -> None:
    sid = ask(http, agent).json()["schedule"]["id"]
    assert agent_patch(http, agent, sid, status="active").status_code == 200
    paused = person_patch(http, agent, sid, paused=True)
    assert paused.status_code == 200 and paused.json()["schedule"]["status"] == "paused"
    updates = of_type(agent, http, "schedule.updated")
    assert updates[-1]["data"]["schedule"]["status"] == "paused"
    refused = agent.send(http, text="Today: rain", schedule_id=sid)
    assert refused.status_code == 409 and error_of(refused)["code"] == "schedule_paused"
    resumed_by_agent = agent_patch(http, agent, sid, status="active")
    assert resumed_by_agent.status_code == 403
    assert error_of(resumed_by_agent)["code"] == "paused_by_person"
    resumed = person_patch(http, agent, sid, paused=False)
    assert resumed.json()["schedule"]["status"] == "active"  # confirmed before the pause
    assert agent.send(http, text="Today: rain", schedule_id=sid).status_code == 201
    changed = person_patch(http, agent, sid, instruction="Only the weather")
    assert changed.json()["schedule"]["status"] == "pending"  # the agent confirms it again
    deleted = http.delete(f"{schedules_path(agent)}/{sid}", headers=dev(agent.owner))
    assert deleted.status_code == 204
    [gone] = of_type(agent, http, "schedule.deleted")
    assert gone["data"]["schedule"]["id"] == sid
    refused = agent.send(http, text="Today: snow", schedule_id=sid)
    assert refused.status_code == 409 and error_of(refused)["code"] == "schedule_deleted"
    assert http.get(schedules_path(agent), headers=dev(agent.owner)).json()["schedules"] == []
    again = person_patch(http, agent, sid, paused=True)
    assert again.status_code == 404 and error_of(again)["code"] == "schedule_not_found"


def test_the_limits(agent: Agent, http: httpx.Client, hub_url: str) -> None:
    long = ask(http, agent, instruction="x" * 501)
    assert long.status_code == 422 and error_of(long)["code"] == "invalid_instruction"
    assert ask(http, agent, instruction="x" * 500).status_code == 201
    for cadence in (
        {"repeat": "hourly", "time": "08:00"},
        {"repeat": "daily", "time": "25:00"},
        {"repeat": "weekly", "time": "08:00"},
        {"repeat": "once", "time": "08:00"},
        {"repeat": "daily", "time": "08:00", "timezone": "Mars/Olympus"},
        {"repeat": "daily", "time": "08:00", "every": 2},
    ):
        bad = ask(http, agent, cadence=cadence)
        assert bad.status_code == 422 and error_of(bad)["code"] == "invalid_cadence", cadence
    weekly = {"repeat": "weekly", "time": "07:30", "days": ["fri", "mon"], "timezone": "UTC"}
    sid = ask(http, agent, cadence=weekly).json()["schedule"]["id"]
    long_title = agent_patch(http, agent, sid, title="t" * 61)
    assert long_title.status_code == 422 and error_of(long_title)["code"] == "invalid_title"
    assert agent_patch(http, agent, sid, title="t" * 60).status_code == 200
    for n in range(8):
        assert ask(http, agent, instruction=f"job {n}").status_code == 201
    eleventh = ask(http, agent)
    assert eleventh.status_code == 409 and error_of(eleventh)["code"] == "too_many_schedules"
    unknown = ask(http, agent, title="mine")
    assert unknown.status_code == 422 and error_of(unknown)["code"] == "unknown_field"
    plain = make_agent(http, hub_url)
    refused = ask(http, plain)
    assert refused.status_code == 422 and error_of(refused)["code"] == "schedules_not_supported"


def test_an_agent_sets_one_up_and_declines_another(agent: Agent, http: httpx.Client) -> None:
    path = f"/conversations/{agent.conversation_id}/schedules"
    made = agent.post(
        http, path, {"title": "Weekly report", "instruction": "Sum up", "cadence": DAILY}
    )
    assert made.status_code == 201, made.text
    assert made.json()["schedule"]["status"] == "active"
    assert made.json()["schedule"]["created_by"] == "agent"
    sid = ask(http, agent).json()["schedule"]["id"]
    declined = http.delete(f"{agent.url}/v1/agent{path}/{sid}", headers=agent.headers)
    assert declined.status_code == 204
    listed = agent.get(http, path).json()["schedules"]
    assert [s["title"] for s in listed] == ["Weekly report"]
    assert not of_type(agent, http, "schedule.deleted")  # the agent's own delete: no event


async def test_the_persons_socket_hears_every_change(agent: Agent, http: httpx.Client) -> None:
    ws = agent.url.replace("http://", "ws://") + "/v1/client/socket"
    async with connect(ws, additional_headers=dev(agent.owner)) as socket:
        await frame_where(socket, "type", "ready")
        async with httpx.AsyncClient(timeout=10) as client:
            asked = await client.post(
                schedules_path(agent),
                headers=dev(agent.owner),
                json={"instruction": "Remind me", "cadence": DAILY},
            )
            sid = asked.json()["schedule"]["id"]
            changed = await frame_where(socket, "type", "schedule.changed")
            assert changed["data"]["schedule"]["status"] == "pending"
            assert changed["data"]["deleted"] is False
            assert changed["data"]["conversation_id"] == agent.conversation_id
            await client.patch(
                f"{agent.url}/v1/agent/conversations/{agent.conversation_id}/schedules/{sid}",
                headers=agent.headers,
                json={"status": "active"},
            )
            changed = await frame_where(socket, "type", "schedule.changed")
            assert changed["data"]["schedule"]["status"] == "active"
            await client.delete(f"{schedules_path(agent)}/{sid}", headers=dev(agent.owner))
            changed = await frame_where(socket, "type", "schedule.changed")
            assert changed["data"]["deleted"] is True


async def test_a_socket_agent_hears_the_request_and_sends_for_it(
    agent: Agent, http: httpx.Client
) -> None:
    """The round trip of an agent on the socket, written against the notes' ops: the
    request comes as an event, the send for a paused schedule is refused by `cid`."""
    async with agent.socket() as socket:
        await frame_where(socket, "type", "conversation.joined")
        sid = ask(http, agent).json()["schedule"]["id"]
        requested = await frame_where(socket, "type", "schedule.requested")
        assert requested["data"]["schedule"]["id"] == sid
        await socket.send(json.dumps({"ack": requested["id"]}))
        assert agent_patch(http, agent, sid, status="active").status_code == 200
        frame = {"op": "send", "cid": "c1", "conversation_id": agent.conversation_id}
        await socket.send(json.dumps({**frame, "text": "Today: fog", "schedule_id": sid}))
        sent = await frame_where(socket, "reply_to_cid", "c1")
        assert sent["ok"] is True and sent["message"]["schedule_id"] == sid
        assert person_patch(http, agent, sid, paused=True).status_code == 200
        await socket.send(json.dumps({**frame, "cid": "c2", "text": "x", "schedule_id": sid}))
        refused = await frame_where(socket, "reply_to_cid", "c2")
        assert refused["ok"] is False and refused["error"]["code"] == "schedule_paused"
