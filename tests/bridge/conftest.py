"""Fixtures of the bridge tests: a dev-mode Cuckoo hub, the reference Talkie server (test mode,
demo agent), people on the hub (plain httpx with the dev header, the client socket with
websockets), and `talkie bridge cuckoo` running in-process in the test's event loop."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import ClientConnection, connect

from talkie_tui import backends
from talkie_tui.bridge.cuckoo import FLUSH_INTERVAL, CuckooBridge
from talkie_tui.bridge.greeting import Greeting
from talkie_tui.bridge.state import BridgeState
from talkie_tui.core.tokens import StaticToken
from talkie_tui.devserver.cuckoo.ids import new_id
from tests.helpers import TEST_TOKEN

FAST: dict[str, Any] = {
    "lease_seconds": 2.0,
    "ping_interval": 1.0,
    "pong_timeout": 5.0,
    "stream_sweep_interval": 0.05,
    "person_send_rate": (50.0, 200),
}


class Feed:
    """A person's client socket: every frame kept for the test to look through."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.frames: list[dict[str, Any]] = []
        self._changed = asyncio.Event()
        self._reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        with contextlib.suppress(Exception):
            async for raw in self.ws:
                self.frames.append(json.loads(raw))
                self._changed.set()

    async def wait(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 15.0
    ) -> dict[str, Any]:
        async def find() -> dict[str, Any]:
            seen = 0
            while True:
                for frame in self.frames[seen:]:
                    if predicate(frame):
                        return frame
                seen = len(self.frames)
                self._changed.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._changed.wait(), 0.5)

        return await asyncio.wait_for(find(), timeout)

    async def close(self) -> None:
        await self.ws.close()
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader


@dataclass
class Person:
    """A person on the hub, signed in by the dev header."""

    hub: str
    id: str = field(default_factory=lambda: new_id("usr"))
    http: httpx.AsyncClient = field(init=False)

    def __post_init__(self) -> None:
        self.http = httpx.AsyncClient(
            base_url=self.hub, headers={"X-Dev-User": self.id}, timeout=15.0, trust_env=False
        )

    async def say(self, conversation_id: str, text: str) -> dict[str, Any]:
        answer = await self.http.post(
            f"/v1/client/conversations/{conversation_id}/messages", json={"text": text}
        )
        assert answer.status_code == 201, answer.text
        return dict(answer.json()["message"])

    async def tap(self, conversation_id: str, message_id: str, button_id: str) -> dict[str, Any]:
        answer = await self.http.post(
            f"/v1/client/conversations/{conversation_id}/messages",
            json={"action": {"button_id": button_id, "source_message_id": message_id}},
        )
        assert answer.status_code == 201, answer.text
        return dict(answer.json()["message"])

    async def messages(self, conversation_id: str) -> list[dict[str, Any]]:
        """The conversation's messages, oldest first."""
        answer = await self.http.get(
            f"/v1/client/conversations/{conversation_id}/messages", params={"limit": 100}
        )
        assert answer.status_code == 200, answer.text
        return list(reversed(answer.json()["messages"]))

    async def agent_messages(self, conversation_id: str) -> list[dict[str, Any]]:
        return [m for m in await self.messages(conversation_id) if m["sender"]["kind"] == "agent"]

    async def wait_agent_messages(
        self,
        conversation_id: str,
        predicate: Callable[[list[dict[str, Any]]], bool],
        timeout: float = 15.0,
    ) -> list[dict[str, Any]]:
        """Poll the history until the agent's messages satisfy `predicate`."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            found = await self.agent_messages(conversation_id)
            if predicate(found):
                return found
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"agent messages never matched: {found}")
            await asyncio.sleep(0.1)

    async def feed(self) -> Feed:
        url = "ws://" + self.hub.removeprefix("http://") + "/v1/client/socket"
        ws = await connect(
            url, additional_headers={"X-Dev-User": self.id}, ping_interval=None, proxy=None
        )
        return Feed(ws)

    async def aclose(self) -> None:
        await self.http.aclose()


@dataclass
class Agent:
    """An agent on the hub with a socket binding and its owner's DM."""

    hub: str
    owner: Person
    id: str
    secret: str
    dm: str

    async def rebind(self, webhook_url: str | None = None) -> str:
        """Replace the binding (the old secret's socket is closed with 4002): a socket one, or
        a webhook one posting to `webhook_url`."""
        mode = (
            {"mode": "webhook", "webhook_url": webhook_url} if webhook_url else {"mode": "socket"}
        )
        answer = await self.owner.http.post(f"/v1/mgmt/agents/{self.id}/binding", json=mode)
        assert answer.status_code in (200, 201), answer.text
        self.secret = str(answer.json()["secret"])
        return self.secret

    async def bind_webhook(self) -> tuple[str, int]:
        """Make the binding a webhook one, posting to a free port of 127.0.0.1: the address
        for the bridge's `webhook`."""
        with socket.create_server(("127.0.0.1", 0)) as probe:
            port = int(probe.getsockname()[1])
        await self.rebind(webhook_url=f"http://127.0.0.1:{port}/cuckoo")
        return "127.0.0.1", port

    async def pair(self, person: Person) -> str:
        """Bring `person` into a conversation with the agent (a pairing code); its id."""
        minted = await self.owner.http.post(f"/v1/mgmt/agents/{self.id}/pair-tokens", json={})
        assert minted.status_code == 201, minted.text
        code = minted.json()["code"]
        accepted = await person.http.post(f"/v1/client/pair/{code}/accept")
        assert accepted.status_code in (200, 201), accepted.text
        return str(accepted.json()["conversation"]["id"])


async def make_agent(hub: str, owner: Person, *, schedules: bool = False) -> Agent:
    """An agent of `owner`'s with a socket binding (running schedules if `schedules`)."""
    handle = "crm-" + new_id("agt")[-8:]
    fields = {"handle": handle, "display_name": "Demo CRM", "supports_schedules": schedules}
    made = await owner.http.post("/v1/mgmt/agents", json=fields)
    assert made.status_code == 201, made.text
    agent_id = made.json()["agent"]["id"]
    bound = await owner.http.post(f"/v1/mgmt/agents/{agent_id}/binding", json={"mode": "socket"})
    assert bound.status_code == 201, bound.text
    conversations = await owner.http.get("/v1/client/conversations")
    dm = next(
        c["id"]
        for c in conversations.json()["conversations"]
        if any(p["id"] == agent_id for p in c["participants"])
    )
    return Agent(hub, owner, agent_id, str(bound.json()["secret"]), dm)


@dataclass
class RunningBridge:
    """A bridge running in a task of the test's loop, with the lines it printed."""

    bridge: CuckooBridge
    task: asyncio.Task[None]
    lines: list[str]
    warnings: list[str]

    async def stop(self) -> BaseException | None:
        """Cancel it (a kill: nothing more is acknowledged); the exception it ended with."""
        self.task.cancel()
        try:
            await asyncio.wait_for(self.task, 15)
        except asyncio.CancelledError:
            return None
        except BaseException as error:
            return error
        return None

    async def ended(self, timeout: float = 10.0) -> BaseException | None:
        """Wait for it to end by itself; the exception it ended with."""
        try:
            await asyncio.wait_for(asyncio.shield(self.task), timeout)
        except asyncio.CancelledError:
            return None
        except TimeoutError:
            raise
        except BaseException as error:
            return error
        return None


@pytest.fixture
def hub_options() -> dict[str, Any]:
    """HubConfig settings of the `hub` beyond FAST (a test parametrizes it)."""
    return {}


@pytest.fixture
def hub(cuckoo_hub: Callable[..., str], hub_options: dict[str, Any]) -> str:
    return cuckoo_hub(**{**FAST, **hub_options})


@pytest.fixture
async def owner(hub: str) -> AsyncIterator[Person]:
    person = Person(hub)
    yield person
    await person.aclose()


@pytest.fixture
async def agent(hub: str, owner: Person) -> Agent:
    return await make_agent(hub, owner)


StartBridge = Callable[..., Awaitable[RunningBridge]]
ServedBy = Callable[[Agent], Awaitable[dict[str, Any]]]


@pytest.fixture(params=["socket", "webhook"])
def served_by(request: pytest.FixtureRequest) -> ServedBy:
    """How the bridge takes the agent's events, a test run once each way: the socket binding
    the agent was made with, or a webhook binding; `await served_by(agent)` is the options
    of `start_bridge` for it."""

    async def options(agent: Agent) -> dict[str, Any]:
        if request.param == "socket":
            return {}
        return {"webhook": await agent.bind_webhook()}

    return options


@pytest.fixture
async def start_bridge(server_url: str, hub: str, tmp_path: Path) -> AsyncIterator[StartBridge]:
    """`await start_bridge(agent, allow=(), before_ack=None, server=None, webhook=None)`: a
    bridge serving the agent from the Talkie server (`server_url` unless `server` names
    another), once it is connected to the hub or listens on `webhook` (its state file kept per
    agent)."""
    running: list[RunningBridge] = []
    states: list[BridgeState] = []

    async def start(
        agent: Agent,
        *,
        allow: tuple[str, ...] = (),
        before_ack: Callable[[dict[str, Any]], Awaitable[None]] | None = None,
        wait_ready: bool = True,
        flush_interval: float = FLUSH_INTERVAL,
        server: str | None = None,
        webhook: tuple[str, int] | None = None,
        webhook_retry: float = 30.0,
        greeting: Greeting | None = None,
    ) -> RunningBridge:
        backend = await backends.connect(
            server or server_url, protocol="talkie", tokens=StaticToken(TEST_TOKEN)
        )
        lines: list[str] = []
        warnings: list[str] = []

        def open_state(agent_id: str) -> BridgeState:
            state = BridgeState(tmp_path / f"bridge-{agent_id}.sqlite3")
            states.append(state)
            return state

        bridge = CuckooBridge(
            backend=backend,
            hub_url=hub + "/",
            secret=agent.secret,
            open_state=open_state,
            allow=allow,
            say=lines.append,
            warn=warnings.append,
            flush_interval=flush_interval,
            backoff=(0.1, 0.2, 0.5),
            before_ack=before_ack,
            webhook=webhook,
            webhook_retry=webhook_retry,
            greeting=greeting,
        )

        async def run() -> None:
            try:
                await bridge.run()
            finally:
                await backend.aclose()

        task = asyncio.ensure_future(run())
        handle = RunningBridge(bridge, task, lines, warnings)
        running.append(handle)
        if wait_ready:
            ready = asyncio.ensure_future(bridge.ready.wait())
            await asyncio.wait({ready, task}, timeout=10, return_when=asyncio.FIRST_COMPLETED)
            if task.done():
                ready.cancel()
                task.result()
            assert bridge.ready.is_set(), (lines, warnings)
        return handle

    yield start
    for handle in running:
        await handle.stop()
    for state in states:
        state.close()
