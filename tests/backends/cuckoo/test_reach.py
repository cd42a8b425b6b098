"""Reaching agents through the Cuckoo backend, against the reference hub on 127.0.0.1 and the
independent test agent: a pairing code resolved then accepted (the agent hears the code's
payload), the catalogue with its starters, and contacts — pinned first, archived out of the
list, muted, blocked (the conversation says so), reported and removed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from talkie_tui.backends.cuckoo.backend import CuckooBackend, HubThread
from talkie_tui.backends.cuckoo.reach import clean_code
from talkie_tui.backends.parts.reach import Complaint
from tests.backends.cuckoo.conftest import Hub


async def mgmt(hub: Hub, owner: str, method: str, path: str, body: dict[str, Any]) -> Any:
    async with httpx.AsyncClient(base_url=hub.url, timeout=10) as http:
        answer = await http.request(method, path, json=body, headers={"X-Dev-User": owner})
    assert answer.status_code in (200, 201), answer.text
    return answer.json()


async def hub_threads(backend: CuckooBackend) -> list[HubThread]:
    threads = await backend.threads()
    assert all(isinstance(thread, HubThread) for thread in threads)
    return [thread for thread in threads if isinstance(thread, HubThread)]


def test_a_code_is_cleaned_of_what_a_person_types_around_it() -> None:
    assert clean_code("  ABCD-efgh 23 ") == "abcdefgh23"


async def test_a_code_adds_the_agent_after_it_is_resolved(hub: Hub) -> None:
    owner = await hub.person()
    agent = await hub.agent(owner, name="Shop Helper")
    minted = await mgmt(
        hub,
        owner.user_id,
        "POST",
        f"/v1/mgmt/agents/{agent.id}/pair-tokens",
        {"label": "counter", "payload": {"customer_ref": "SBI-8812"}},
    )
    code = minted["code"]
    person = await hub.person()
    backend = await hub.backend(person)
    typed = f" {code[:5].upper()}-{code[5:]} "  # as read aloud, or printed in groups
    resolved = await backend.reach.resolve_code(typed)
    assert (resolved.agent.id, resolved.agent.name) == (agent.id, "Shop Helper")
    assert resolved.pair_token is not None and resolved.pair_token.label == "counter"
    assert await hub_threads(backend) == []  # resolving adds nothing
    accepted = await backend.reach.accept_code(typed)
    assert accepted.new is True
    joined = await agent.peer.wait_event(
        lambda e: (
            e["type"] == "conversation.joined"
            and e["data"]["conversation"]["id"] == accepted.conversation.id
        )
    )
    assert joined["data"]["pair_token"] == {
        "id": minted["pair_token"]["id"],
        "payload": {"customer_ref": "SBI-8812"},
    }
    assert [t.id for t in await hub_threads(backend)] == [accepted.conversation.id]


async def test_the_catalogue_adds_an_agent_whose_starters_open_the_conversation(
    hub: Hub,
) -> None:
    owner = await hub.person()
    made = await mgmt(
        hub,
        owner.user_id,
        "POST",
        "/v1/mgmt/agents",
        {
            "handle": "trains-" + owner.user_id[-6:],
            "display_name": "Train Times",
            "description": "When the trains go",
            "starters": ["Next train to Brno?", "Delays today"],
            "listed": True,
        },
    )
    agent_id = made["agent"]["id"]
    person = await hub.person()
    backend = await hub.backend(person)
    (entry,) = [e for e in await backend.reach.catalogue() if e.id == agent_id]
    assert (entry.name, entry.description) == ("Train Times", "When the trains go")
    assert entry.starters == ("Next train to Brno?", "Delays today")
    assert entry.in_contacts is False
    added = await backend.reach.add(agent_id)
    assert added.new is True
    (entry,) = [e for e in await backend.reach.catalogue() if e.id == agent_id]
    assert entry.in_contacts is True  # the catalogue says the person has it already
    conversation_id = added.conversation.id
    opening = await backend.reach.opening(conversation_id)
    assert opening.agent is not None and opening.agent.id == agent_id
    assert opening.starters == ("Next train to Brno?", "Delays today")
    assert opening.blocked is False
    await backend.client.send(conversation_id, "Next train to Brno?")
    assert (await backend.reach.opening(conversation_id)).starters == ()  # said: no more


async def test_contacts_are_pinned_archived_muted_blocked_reported_and_removed(
    hub: Hub,
) -> None:
    person = await hub.person()
    first = await hub.agent(person, name="First")
    second = await hub.agent(person, name="Second")
    backend = await hub.backend(person)
    reach = backend.reach
    newest_first = [t.id for t in await hub_threads(backend)]
    assert set(newest_first) == {first.conversation_id, second.conversation_id}
    last = newest_first[-1]
    last_agent = first.id if last == first.conversation_id else second.id
    await reach.pin(last_agent, True)
    threads = await hub_threads(backend)
    assert threads[0].id == last and threads[0].pinned
    await reach.archive(last_agent, True)
    assert [t.id for t in await hub_threads(backend)] == [newest_first[0]]
    archived = await reach.archived_threads(await backend.all_threads())
    assert [(t.id, t.archived) for t in archived] == [(last, True)]
    await reach.archive(last_agent, False)
    until = datetime.now(UTC) + timedelta(hours=8)
    muted = await reach.mute(first.id, until)
    assert muted.muted() and muted.muted_until is not None
    assert abs((muted.muted_until - until).total_seconds()) < 1
    shown = {t.id: t for t in await hub_threads(backend)}
    assert shown[first.conversation_id].muted and not shown[second.conversation_id].muted
    assert not (await reach.mute(first.id, None)).muted()
    sent = await second.peer.send(second.conversation_id, "cheap watches!")
    message_id = sent["message"]["id"]
    await reach.report(second.id, Complaint("spam", "sells watches", message_id))
    await reach.block(second.id, True)
    opening = await reach.opening(second.conversation_id)
    assert opening.blocked and opening.starters == ()
    shown = {t.id: t for t in await hub_threads(backend)}
    assert shown[second.conversation_id].blocked
    left = await second.peer.wait_event(lambda e: e["type"] == "conversation.left")
    assert left["data"]["reason"] == "user_blocked"
    await reach.block(second.id, False)
    await reach.remove(second.id)
    assert [t.id for t in await hub_threads(backend)] == [first.conversation_id]
    assert await reach.contact(second.id) is None
