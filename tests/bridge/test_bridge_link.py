"""The bridge's hold on the agent socket: reconnecting after a drop (and filling the gap), and
what it does not retry (4001, a webhook binding)."""

from __future__ import annotations

import asyncio

import pytest
from websockets.asyncio.client import connect

from talkie_tui.bridge.hub import LinkEnded
from tests.bridge.conftest import Agent, Person, StartBridge

pytestmark = pytest.mark.slow


async def test_a_dropped_socket_is_opened_again_and_nothing_is_missed(
    agent: Agent, owner: Person, start_bridge: StartBridge
) -> None:
    running = await start_bridge(agent)
    await owner.say(agent.dm, "talkie-test:echo before the drop")
    await owner.wait_agent_messages(
        agent.dm, lambda found: len(found) == 1 and found[0]["status"] == "complete"
    )
    ws = running.bridge.link._ws
    assert ws is not None
    await ws.close()  # the line drops (a normal close: not one of the final codes)
    await owner.say(agent.dm, "talkie-test:echo after the drop")
    found = await owner.wait_agent_messages(
        agent.dm, lambda found: len(found) == 2 and found[1]["status"] == "complete"
    )
    assert [m["body"]["text"] for m in found] == ["before the drop", "after the drop"]
    await asyncio.sleep(0.5)
    assert len(await owner.agent_messages(agent.dm)) == 2
    assert any("connected again" in line for line in running.warnings), running.warnings
    assert not running.task.done()


async def test_another_backend_taking_the_socket_ends_the_bridge_with_4001(
    agent: Agent, start_bridge: StartBridge
) -> None:
    running = await start_bridge(agent)
    url = agent.hub.replace("http://", "ws://") + "/v1/agent/socket"
    async with connect(
        url, additional_headers={"Authorization": f"Bearer {agent.secret}"}, proxy=None
    ):
        ended = await running.ended(timeout=10)
    assert isinstance(ended, LinkEnded)
    assert "(4001)" in ended.message and "Another backend" in ended.message


async def test_a_webhook_binding_is_refused_before_the_upgrade(
    agent: Agent, start_bridge: StartBridge
) -> None:
    answer = await agent.owner.http.post(
        f"/v1/mgmt/agents/{agent.id}/binding",
        json={"mode": "webhook", "webhook_url": "http://127.0.0.1:9/hook"},
    )
    assert answer.status_code in (200, 201), answer.text
    agent.secret = answer.json()["secret"]
    with pytest.raises(LinkEnded) as refused:
        await start_bridge(agent)
    assert "binding_not_socket" in refused.value.message and "HTTP 403" in refused.value.message
