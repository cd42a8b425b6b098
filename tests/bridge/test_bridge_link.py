"""The bridge's hold on the agent socket: reconnecting after a drop (and filling the gap), and
what it does not retry (4001, a webhook binding)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path

import pytest
from websockets.asyncio.client import connect

from talkie_tui.protocol.cuckoo.agent_client import LinkEnded
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


async def test_a_stream_the_hub_finished_early_goes_on_in_a_new_message(
    cuckoo_hub: Callable[..., str], devserver: Callable[..., str], tmp_path: Path
) -> None:
    """The hub finishes a quiet stream (here after 0.1 s; 30 s by the spec): the rest of the
    answer comes in a new message instead of being dropped, and the run is not stopped."""
    from talkie_tui import backends
    from talkie_tui.bridge.cuckoo import CuckooBridge
    from talkie_tui.bridge.state import BridgeState
    from talkie_tui.core.tokens import StaticToken
    from talkie_tui.devserver.talkie.testmode import SLOW_TEXT
    from tests.bridge.conftest import FAST, make_agent
    from tests.helpers import TEST_TOKEN

    hub = cuckoo_hub(**{**FAST, "stream_idle_seconds": 0.1})
    talkie = devserver(test_mode=True, dev_token=TEST_TOKEN, slow_seconds=2.0)
    owner = Person(hub)
    agent = await make_agent(hub, owner)
    backend = await backends.connect(talkie, protocol="talkie", tokens=StaticToken(TEST_TOKEN))
    state = BridgeState(tmp_path / "b.sqlite3")
    warnings: list[str] = []
    bridge = CuckooBridge(
        backend=backend,
        hub_url=hub + "/",
        secret=agent.secret,
        open_state=lambda _agent: state,
        say=lambda _line: None,
        warn=warnings.append,
    )
    task = asyncio.ensure_future(bridge.run())
    try:
        await asyncio.wait_for(bridge.ready.wait(), 10)
        await owner.say(agent.dm, "talkie-test:slow")
        try:
            found = await owner.wait_agent_messages(
                agent.dm,
                lambda found: (
                    len(found) >= 2
                    and all(m["status"] == "complete" for m in found)
                    and "".join(m["body"].get("text", "") for m in found) == SLOW_TEXT
                ),
                timeout=20,
            )
        except AssertionError as error:
            raise AssertionError(f"{error} warnings={warnings}") from None
        assert found[0]["truncated"]
        assert any("goes on in a new message" in line for line in warnings), warnings
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await backend.aclose()
        await owner.aclose()
        state.close()


async def test_a_quiet_conversation_lets_its_worker_go_and_gets_a_new_one(
    agent: Agent, owner: Person, start_bridge: StartBridge, monkeypatch: pytest.MonkeyPatch
) -> None:
    from talkie_tui.bridge import cuckoo

    monkeypatch.setattr(cuckoo, "WORKER_IDLE", 0.2)
    running = await start_bridge(agent)
    await owner.say(agent.dm, "talkie-test:echo first")
    await owner.wait_agent_messages(agent.dm, lambda found: len(found) == 1)
    deadline = asyncio.get_running_loop().time() + 5
    while running.bridge._workers:
        assert asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.05)
    await owner.say(agent.dm, "talkie-test:echo second")
    found = await owner.wait_agent_messages(
        agent.dm, lambda found: len(found) == 2 and found[1]["status"] == "complete"
    )
    assert found[1]["body"]["text"] == "second"
