"""Fixtures of the Cuckoo backend tests: the reference hub (dev mode, codes caught), a person
signed in by the e-mail code, and an agent answered by the independent test agent
(`tests/cuckoo_peer/agent.py`), all on 127.0.0.1."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from talkie_tui.backends.cuckoo import sign_in
from talkie_tui.backends.cuckoo.backend import CuckooBackend, connect
from tests.cuckoo_peer.agent import AgentBackend, Handler

# Short timings for what the tests wait on (the spec's are 30 s and more).
FAST_HUB: dict[str, Any] = {
    "stream_sweep_interval": 0.05,
    "code_rate": (1000.0, 1000),
    "agent_send_rate": (1000.0, 1000),
    "person_send_rate": (1000.0, 1000),
}
FAST_SESSION: dict[str, Any] = {"quiet_seconds": 8.0, "poll_seconds": 1.0, "ready_seconds": 5.0}


@dataclass
class Hub:
    """A reference hub and the sign-in codes it "mailed" (address -> latest code)."""

    url: str
    codes: dict[str, str] = field(default_factory=dict)
    agents: list[AgentBackend] = field(default_factory=list)
    backends: list[CuckooBackend] = field(default_factory=list)

    async def person(self, email: str | None = None) -> sign_in.SignedIn:
        """A person signed in by the e-mail code flow."""
        email = email or f"p{os.urandom(4).hex()}@example.com"
        await sign_in.start(self.url, email)
        return await sign_in.verify(self.url, email, self.codes[email], device_name="test")

    async def agent(
        self,
        person: sign_in.SignedIn,
        handler: Handler | None = None,
        *,
        name: str = "Echo Bot",
        connect: bool = True,
        schedules: bool = False,
    ) -> Agent:
        """An agent owned by `person` (its DM with them opens), answered by the test agent
        (`schedules`: it declares `supports_schedules`)."""
        headers = {"X-Dev-User": person.user_id}
        async with httpx.AsyncClient(base_url=self.url, headers=headers, timeout=10) as http:
            about: dict[str, Any] = {"handle": "bot-" + os.urandom(4).hex(), "display_name": name}
            if schedules:
                about["supports_schedules"] = True
            made = await http.post("/v1/mgmt/agents", json=about)
            assert made.status_code == 201, made.text
            agent_id = made.json()["agent"]["id"]
            bound = await http.post(f"/v1/mgmt/agents/{agent_id}/binding", json={"mode": "socket"})
            assert bound.status_code == 201, bound.text
            listed = await http.get("/v1/client/conversations")
        conversation_id = next(
            c["id"]
            for c in listed.json()["conversations"]
            if any(p["id"] == agent_id for p in c["participants"])
        )
        backend = AgentBackend(self.url, bound.json()["secret"], handler=handler)
        self.agents.append(backend)
        if connect:
            await backend.connect()
        return Agent(agent_id, conversation_id, backend)

    async def backend(self, person: sign_in.SignedIn, **options: Any) -> CuckooBackend:
        """The backend under test, signed in as `person`."""
        options.setdefault("session_options", FAST_SESSION)
        backend = await connect(self.url, tokens=person.tokens(), **options)
        self.backends.append(backend)
        return backend


@dataclass
class Agent:
    id: str
    conversation_id: str
    peer: AgentBackend


@pytest.fixture
async def hub(cuckoo_hub: Callable[..., str]) -> AsyncIterator[Hub]:
    codes: dict[str, str] = {}
    url = cuckoo_hub(code_sink=lambda email, code: codes.__setitem__(email, code), **FAST_HUB)
    made = Hub(url, codes)
    yield made
    for backend in made.backends:
        await backend.aclose()
    for agent in made.agents:
        await agent.close()


def person_text(event: dict[str, Any]) -> str | None:
    """The text of a person's message event (None for anything else)."""
    if event["type"] != "message.created":
        return None
    message = event["data"]["message"]
    if message["sender"]["kind"] != "user":
        return None
    return str(message["body"].get("text", ""))


def on_message(
    answer: Callable[[AgentBackend, dict[str, Any], str], Awaitable[None]],
) -> Handler:
    """A handler calling `answer(peer, event, text)` for each message of a person."""

    async def handle(peer: AgentBackend, event: dict[str, Any]) -> None:
        text = person_text(event)
        if text is not None:
            await answer(peer, event, text)

    return handle
