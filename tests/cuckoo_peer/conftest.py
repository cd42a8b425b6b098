"""Fixtures of the independent-peer tests: a hub in dev mode, people, agents and their chats."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import pytest

from tests.cuckoo_peer.agent import AgentBackend, Handler, WebhookReceiver
from tests.cuckoo_peer.person import Person

# Short timings through the fixture's overrides (the spec's defaults are 30 s lease and so on).
LEASE = 2.0  # seconds before an unacknowledged event is due again (30 by the spec)
FAST: dict[str, Any] = {
    "lease_seconds": LEASE,
    "sweep_interval": 0.2,
    "ping_interval": 1.0,  # the 4002 check may ride on the heartbeat
    "pong_timeout": 5.0,
}


@dataclass
class Chat:
    """A person in a conversation with an agent whose backend the test drives."""

    hub: str
    owner: Person
    person: Person
    agent: dict[str, Any]
    secret: str
    conversation_id: str
    backend: AgentBackend | None = None


def handle() -> str:
    return "peer-" + os.urandom(5).hex()


async def open_conversation(person: Person, owner: Person, agent_id: str) -> str:
    """Bring the person and the agent into one conversation (a pairing code from the owner)."""
    minted = await owner.http.post(f"/v1/mgmt/agents/{agent_id}/pair-tokens", json={})
    assert minted.status_code in (200, 201), minted.text
    code = _find_code(minted.json())
    accepted = await person.http.post(f"/v1/client/pair/{code}/accept")
    assert accepted.status_code in (200, 201), accepted.text
    return str(accepted.json()["conversation"]["id"])


def _find_code(body: dict[str, Any]) -> str:
    for key in ("code", "token"):
        value = body.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, dict):
            return _find_code(value)
    raise AssertionError(f"no pairing code in {body}")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "hub(**overrides): more HubConfig overrides for `hub`")


@pytest.fixture
def hub(cuckoo_hub: Callable[..., str], request: pytest.FixtureRequest) -> str:
    marker = request.node.get_closest_marker("hub")
    return cuckoo_hub(**{**FAST, **(marker.kwargs if marker else {})})


@pytest.fixture
async def people(hub: str) -> AsyncIterator[Callable[[], Person]]:
    made: list[Person] = []

    def make() -> Person:
        made.append(Person(hub))
        return made[-1]

    yield make
    for person in made:
        await person.aclose()


@pytest.fixture
async def backends(hub: str) -> AsyncIterator[Callable[..., AgentBackend]]:
    made: list[AgentBackend] = []

    def make(secret: str, **options: Any) -> AgentBackend:
        made.append(AgentBackend(hub, secret, **options))
        return made[-1]

    yield make
    for backend in made:
        await backend.close()


@pytest.fixture
def receivers() -> Any:
    made: list[WebhookReceiver] = []

    def make(**options: Any) -> WebhookReceiver:
        made.append(WebhookReceiver(**options))
        made[-1].start()
        return made[-1]

    yield make
    for receiver in made:
        receiver.stop()


@pytest.fixture
def chat_with(
    hub: str, people: Callable[[], Person], backends: Callable[..., AgentBackend]
) -> Callable[..., Any]:
    """`await chat_with(handler=…, ack=…, connect=True, schedules=False)`: a person, an agent
    (running schedules if `schedules`), a chat."""

    async def make(
        handler: Handler | None = None,
        *,
        connect: bool = True,
        schedules: bool = False,
        **options: Any,
    ) -> Chat:
        owner = people()
        person = people()
        agent = await owner.create_agent(handle(), "Peer Agent", supports_schedules=schedules)
        _binding, secret = await owner.bind(agent["id"], "socket")
        conversation_id = await open_conversation(person, owner, agent["id"])
        backend = backends(secret, handler=handler, **options)
        if connect:
            await backend.connect()
        return Chat(hub, owner, person, agent, secret, conversation_id, backend)

    return make
