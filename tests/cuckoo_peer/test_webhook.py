"""The webhook transport: signed posts to a receiver on 127.0.0.1, retried after a failure."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime
from typing import Any

import httpx
import pytest

from talkie_tui.devserver.common import clock
from talkie_tui.devserver.cuckoo import webhooks
from tests.cuckoo_peer.agent import (
    AgentBackend,
    Delivery,
    SocketRefused,
    WebhookReceiver,
    verify_webhook,
    webhook_signature,
)
from tests.cuckoo_peer.conftest import handle, open_conversation

STARTED = int(time.time())  # the reference hub runs on this machine's clock


def test_the_receiver_checks_what_it_should() -> None:
    """The peer's own check, before trusting it with the hub's posts."""
    now = str(int(time.time()))
    body = b'{"id":"evt_x"}'
    good = webhook_signature("bnd_sec_abc", now, body)
    assert good.startswith("sha256=") and len(good) == 7 + 64
    assert verify_webhook("bnd_sec_abc", now, body, good)
    assert not verify_webhook("bnd_sec_abd", now, body, good)  # another secret
    assert not verify_webhook("bnd_sec_abc", now, body + b" ", good)  # another body
    assert not verify_webhook("bnd_sec_abc", str(int(now) + 1), body, good)  # another time
    # Keyed with SHA-256(secret), not the secret: a signature keyed with the raw secret fails.
    import hashlib
    import hmac

    raw = hmac.new(b"bnd_sec_abc", now.encode() + b"." + body, hashlib.sha256).hexdigest()
    assert not verify_webhook("bnd_sec_abc", now, body, f"sha256={raw}")
    old = str(int(time.time()) - 3600)
    assert not verify_webhook("bnd_sec_abc", old, body, webhook_signature("bnd_sec_abc", old, body))


async def _hooked_chat(hub: str, people: Any, receiver: WebhookReceiver) -> tuple[Any, ...]:
    owner, person = people(), people()
    agent = await owner.create_agent(handle(), "Hooked")
    _binding, secret = await owner.bind(agent["id"], "webhook", receiver.url)
    receiver.secret = secret
    conversation_id = await open_conversation(person, owner, agent["id"])
    return agent, person, conversation_id


def _delivered(receiver: WebhookReceiver, message_id: str) -> Any:
    for d in list(receiver.deliveries):
        if d.status == 204 and d.event.get("data", {}).get("message", {}).get("id") == message_id:
            return d
    return None


def _check_headers(delivery: Delivery, agent_id: str) -> None:
    assert delivery.valid
    assert delivery.headers["x-cuckoo-event"] == delivery.event["type"]
    assert delivery.headers["x-cuckoo-event-id"] == delivery.event["id"]
    assert delivery.headers["x-cuckoo-timestamp"].isdigit()
    assert STARTED <= int(delivery.headers["x-cuckoo-timestamp"]) <= time.time()  # stamped now
    assert delivery.headers["x-cuckoo-signature"].startswith("sha256=")
    assert delivery.event["agent_id"] == agent_id


async def test_webhook_delivery_is_signed_and_the_receiver_answers(
    hub: str, people: Any, receivers: Any
) -> None:
    replies: list[str] = []

    async def answer(event: dict[str, Any]) -> None:
        """The work before the 2xx: reply over HTTP with the binding secret."""
        if event["type"] != "message.created":
            return
        message = event["data"]["message"]
        async with httpx.AsyncClient(
            base_url=hub, headers={"Authorization": f"Bearer {receiver.secret}"}, trust_env=False
        ) as http:
            sent = await http.post(
                f"/v1/agent/conversations/{event['data']['conversation']['id']}/messages",
                json={"text": f"hooked: {message['body']['text']}", "reply_to": message["id"]},
            )
            assert sent.status_code == 201, sent.text
            replies.append(sent.json()["message"]["id"])

    receiver = receivers(handler=answer)
    agent, person, conversation_id = await _hooked_chat(hub, people, receiver)
    sent = await person.say(conversation_id, "via the hook")
    ok = await receiver.wait_until(lambda: _delivered(receiver, sent["id"]), timeout=15)
    assert ok.event["data"]["message"]["body"]["text"] == "via the hook"
    assert ok.event["data"]["conversation"]["id"] == conversation_id
    assert all(d.valid for d in receiver.deliveries), receiver.deliveries
    for d in receiver.deliveries:
        _check_headers(d, agent["id"])
    joined = [d for d in receiver.deliveries if d.event.get("type") == "conversation.joined"]
    assert any(d.event["data"]["conversation"]["id"] == conversation_id for d in joined)

    page = await person.history(conversation_id)
    hooked = [m for m in page["messages"] if m["body"].get("text") == "hooked: via the hook"]
    assert len(hooked) == 1 and hooked[0]["reply_to"]["id"] == sent["id"]
    assert len(replies) == 1
    # The agent's own reply is never posted back to it.
    await asyncio.sleep(0.5)
    senders = [
        d.event["data"]["message"]["sender"]["kind"]
        for d in receiver.deliveries
        if d.event.get("type") == "message.created"
    ]
    assert senders == ["user"], senders


async def test_a_failed_webhook_delivery_is_retried_after_about_a_second(
    hub: str, people: Any, receivers: Any
) -> None:
    receiver = receivers(fail_first=1)
    agent, person, conversation_id = await _hooked_chat(hub, people, receiver)
    # The joins fail once too; let their retries land so the message starts on a calm binding.
    await receiver.wait_until(
        lambda: sum(1 for d in receiver.deliveries if d.status == 204) >= 2, timeout=15
    )
    sent = await person.say(conversation_id, "retry me")
    ok = await receiver.wait_until(lambda: _delivered(receiver, sent["id"]), timeout=20)
    attempts = receiver.for_event(ok.event["id"])
    assert [d.status for d in attempts] == [500, 204], [(d.status, d.valid) for d in attempts]
    assert 0.8 <= attempts[1].at - attempts[0].at < 3.0  # the first retry comes after 1 s
    for d in attempts:
        _check_headers(d, agent["id"])
    assert attempts[0].event == attempts[1].event  # the same event again
    assert ok.event["id"] in receiver.handled
    await asyncio.sleep(2)  # answered: no more posts of it
    assert len(receiver.for_event(ok.event["id"])) == 2
    joins = [d for d in receiver.deliveries if d.event.get("type") == "conversation.joined"]
    for event_id in {d.event["id"] for d in joins}:
        # Their timing is the racing case below; here only that each failed once, then landed.
        assert [d.status for d in receiver.for_event(event_id)] == [500, 204]


async def test_every_event_gets_its_first_retry_after_about_a_second(
    hub: str, people: Any, receivers: Any
) -> None:
    """The message is made while the joins are failing (slowly); it still starts its own count."""
    slow = 0.8
    receiver = receivers(fail_first=1, slow_first=slow)
    _agent, person, conversation_id = await _hooked_chat(hub, people, receiver)
    sent = await person.say(conversation_id, "right behind the joins")
    await receiver.wait_until(lambda: _delivered(receiver, sent["id"]), timeout=20)
    attempts = [
        d
        for d in receiver.deliveries
        if d.event.get("data", {}).get("message", {}).get("id") == sent["id"]
    ]
    timeline = [(round(d.at - attempts[0].at, 2), d.status) for d in attempts]
    assert [d.status for d in attempts] == [500, 204], timeline
    # The first post is answered after `slow` seconds; the retry is due 1 s after that.
    assert attempts[1].at - attempts[0].at < slow + 3.0, timeline


async def test_a_redirect_is_not_followed(hub: str, people: Any, receivers: Any) -> None:
    receiver = receivers(redirect=True)
    await _hooked_chat(hub, people, receiver)
    await receiver.wait_until(lambda: len(receiver.deliveries) >= 2, timeout=10)
    await asyncio.sleep(1.5)  # a retry at 1 s must go to the hook again, not elsewhere
    assert receiver.elsewhere == []
    assert all(d.status == 307 for d in receiver.deliveries)


@pytest.mark.hub(unreachable_after=2.0)
async def test_a_failing_webhook_marks_the_agent_unreachable_until_a_success(
    hub: str, people: Any, receivers: Any
) -> None:
    receiver = receivers(fail_first=1000)
    agent, person, conversation_id = await _hooked_chat(hub, people, receiver)

    async def status() -> str | None:
        for conversation in await person.conversations():
            if conversation["id"] == conversation_id:
                for participant in conversation["participants"]:
                    if participant["id"] == agent["id"]:
                        return participant.get("status")
        raise AssertionError("no such conversation")

    await person.say(conversation_id, "are you there?")
    await receiver.wait_until(lambda: len(receiver.deliveries) >= 3)
    assert await status() != "unreachable"  # failing, but not for long enough yet
    await asyncio.sleep(2.5)
    await person.say(conversation_id, "hello?")  # still failing, now past the threshold
    await receiver.wait_until(lambda: len(receiver.deliveries) >= 4)
    await asyncio.sleep(0.3)
    assert await status() == "unreachable"

    receiver.fail_first = 0
    sent = await person.say(conversation_id, "back?")
    await receiver.wait_until(lambda: _delivered(receiver, sent["id"]))
    await asyncio.sleep(0.3)
    assert await status() != "unreachable"


async def test_a_webhook_binding_refuses_the_socket(hub: str, people: Any, receivers: Any) -> None:
    owner = people()
    agent = await owner.create_agent(handle(), "Hooked")
    receiver = receivers()
    _binding, secret = await owner.bind(agent["id"], "webhook", receiver.url)
    backend = AgentBackend(hub, secret)
    try:
        await backend.connect()
    except SocketRefused as refused:
        assert refused.status == 403
        assert refused.error.get("code") == "binding_not_socket", refused.body
    else:
        raise AssertionError("the socket opened on a webhook binding")
    finally:
        await backend.close()


async def test_switching_a_socket_binding_to_webhook(
    hub: str, people: Any, receivers: Any, backends: Any
) -> None:
    """Replacing the binding with a webhook one: the open socket gets 4002, its secret is dead,
    and events now go to the hook."""
    owner, person = people(), people()
    agent = await owner.create_agent(handle(), "Switcher")
    _binding, socket_secret = await owner.bind(agent["id"], "socket")
    conversation_id = await open_conversation(person, owner, agent["id"])
    live = backends(socket_secret, reconnect=True)
    await live.connect()
    receiver = receivers()
    _binding, hook_secret = await owner.bind(agent["id"], "webhook", receiver.url)
    receiver.secret = hook_secret
    await live.wait_until(lambda: live.final == 4002, timeout=30)
    old = backends(socket_secret)
    try:
        await old.connect()
    except SocketRefused as refused:
        assert refused.status in (401, 403), refused
    else:
        raise AssertionError("an old secret opened the socket")
    sent = await person.say(conversation_id, "to the hook now")
    await receiver.wait_until(lambda: _delivered(receiver, sent["id"]), timeout=10)
    assert all(d.valid for d in receiver.deliveries)


@pytest.mark.hub(webhook_timeout=1.0)
async def test_a_slow_answer_counts_as_a_failure(hub: str, people: Any, receivers: Any) -> None:
    receiver = receivers(slow_first=2.0)
    _agent, person, conversation_id = await _hooked_chat(hub, people, receiver)
    await receiver.wait_until(lambda: len(receiver.handled) >= 2, timeout=15)
    sent = await person.say(conversation_id, "take your time")
    ok = await receiver.wait_until(
        lambda: (
            len(
                [
                    d
                    for d in receiver.deliveries
                    if d.event.get("data", {}).get("message", {}).get("id") == sent["id"]
                ]
            )
            >= 2
        ),
        timeout=15,
    )
    assert ok


async def test_a_webhook_backend_can_fill_a_gap_over_http(
    hub: str, people: Any, receivers: Any
) -> None:
    receiver = receivers()
    agent, person, conversation_id = await _hooked_chat(hub, people, receiver)
    sent = await person.say(conversation_id, "fill me in")
    ok = await receiver.wait_until(lambda: _delivered(receiver, sent["id"]), timeout=10)
    async with httpx.AsyncClient(
        base_url=hub, headers={"Authorization": f"Bearer {receiver.secret}"}, trust_env=False
    ) as http:
        answer = await http.get("/v1/agent/events")
    assert answer.status_code == 200, answer.text
    events = answer.json()["events"]
    assert events[-1] == ok.event
    assert all(e["agent_id"] == agent["id"] for e in events)


@pytest.mark.hub(give_up_seconds=3.0)
async def test_the_hub_gives_up_after_the_deadline(hub: str, people: Any, receivers: Any) -> None:
    receiver = receivers(fail_first=1000)
    await _hooked_chat(hub, people, receiver)
    await receiver.wait_until(lambda: len(receiver.deliveries) >= 1)
    await asyncio.sleep(9)  # attempts at 0 s and 1 s; the next (at 6 s) is past the deadline
    assert receiver.deliveries
    attempts: dict[str, int] = {}
    for d in receiver.deliveries:
        assert d.valid and d.event, d
        attempts[d.event["id"]] = attempts.get(d.event["id"], 0) + 1
    # Given up: no event had the third attempt the 9 s would have brought (counted, not timed).
    assert len(attempts) <= 2 and all(count <= 2 for count in attempts.values()), attempts


async def test_the_second_retry_comes_about_five_seconds_after_the_first(
    hub: str, people: Any, receivers: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    delays: list[float] = []  # each retry's delay, as the hub scheduled it (not a measured gap)

    class Clock:
        def __getattr__(self, name: str) -> Any:
            return getattr(clock, name)

        def later(self, seconds: float, start: datetime | None = None) -> datetime:
            if start is None:  # a retry's due time (a lease is reckoned from a given now)
                delays.append(seconds)
            return clock.later(seconds, start)

    receiver = receivers()
    _agent, person, conversation_id = await _hooked_chat(hub, people, receiver)
    await receiver.wait_until(lambda: len(receiver.handled) >= 2, timeout=10)  # the joins
    receiver.fail_first = 2  # from now on, on a calm binding
    monkeypatch.setattr(webhooks, "clock", Clock())
    sent = await person.say(conversation_id, "third time lucky")
    ok = await receiver.wait_until(lambda: _delivered(receiver, sent["id"]), timeout=20)
    tries = receiver.for_event(ok.event["id"])
    assert [d.status for d in tries] == [500, 500, 204]
    assert delays == [1.0, 5.0]  # the schedule's first two delays, in order
    # Each post carries the time it was sent, so a receiver that rejects stale
    # timestamps still accepts a retry.
    stamps = [int(d.headers["x-cuckoo-timestamp"]) for d in tries]
    assert stamps == sorted(stamps) and stamps[2] > stamps[0], stamps
