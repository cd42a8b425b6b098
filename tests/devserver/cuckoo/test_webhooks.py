"""Webhook bindings: signed POSTs to a small receiver on 127.0.0.1, retries, redirects and
timeouts as failures, unreachable after an unbroken run of failures, giving up."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from talkie_tui.devserver.common import clock
from talkie_tui.devserver.common.server import serve_in_thread
from talkie_tui.devserver.cuckoo import webhooks
from tests.devserver.cuckoo.wire import bearer, dev, error_of, make_agent, person_send

# End to end with a receiver and waits for retries: seconds in all.
pytestmark = pytest.mark.slow

RETRIES = (0.1, 0.1, 0.1, 0.1, 0.1, 0.1)


@dataclass
class Receiver:
    """A webhook receiver: what it got, and the statuses it answers with (then 204). `log`
    (which receivers may share) keeps the order of arrivals and answers: ("got", name, event
    id) and ("answered", name, event id)."""

    url: str = ""
    name: str = "receiver"
    answers: list[int] = field(default_factory=list)
    delay: float = 0.0
    got: list[tuple[dict[str, str], bytes]] = field(default_factory=list)
    log: list[tuple[str, str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def wait_for(self, count: int, timeout: float = 5.0) -> None:
        deadline = time.monotonic() + timeout
        while len(self.got) < count:
            assert time.monotonic() < deadline, f"only {len(self.got)} deliveries"
            time.sleep(0.02)


@contextmanager
def receiving() -> Iterator[Receiver]:
    """A receiver on 127.0.0.1 for as long as the block runs."""
    state = Receiver()

    async def hook(request: Request) -> Response:
        body = await request.body()
        event_id = request.headers["x-cuckoo-event-id"]
        with state.lock:
            state.got.append((dict(request.headers), body))
            state.log.append(("got", state.name, event_id))
            status = state.answers.pop(0) if state.answers else 204
        if state.delay:
            await asyncio.sleep(state.delay)
        state.log.append(("answered", state.name, event_id))
        headers = {"Location": "https://example.com/"} if status in (301, 302, 307) else {}
        return Response(status_code=status, headers=headers)

    def make_app() -> Starlette:
        return Starlette(routes=[Route("/hook", hook, methods=["POST"])])

    with serve_in_thread(make_app, "127.0.0.1", 0, stop_streams=lambda app: None) as url:
        state.url = url + "/hook"
        yield state


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with receiving() as state:
        yield state


@pytest.fixture
def retry_delays(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The delay of each retry the hub scheduled after a failed post (what it chose from
    `webhook_retry_seconds`, not a time measured between posts)."""
    delays: list[float] = []

    class Clock:
        def __getattr__(self, name: str) -> Any:
            return getattr(clock, name)

        def later(self, seconds: float, start: datetime | None = None) -> datetime:
            if start is None:  # a retry's due time (a lease is reckoned from a given now)
                delays.append(seconds)
            return clock.later(seconds, start)

    monkeypatch.setattr(webhooks, "clock", Clock())
    return delays


def verify(headers: dict[str, str], body: bytes, secret: str) -> bool:
    key = hashlib.sha256(secret.encode()).digest()
    signed = headers["x-cuckoo-timestamp"].encode() + b"." + body
    expected = "sha256=" + hmac.new(key, signed, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, headers["x-cuckoo-signature"])


def test_events_are_posted_signed(cuckoo_hub: Callable[..., str], receiver: Receiver) -> None:
    url = cuckoo_hub(webhook_retry_seconds=RETRIES)
    with httpx.Client() as http:
        before = int(time.time())
        agent = make_agent(http, url, mode="webhook", webhook_url=receiver.url)
        receiver.wait_for(1)
        after = time.time()
        headers, body = receiver.got[0]
        assert verify(headers, body, agent.secret)
        assert headers["x-cuckoo-event"] == "conversation.joined"
        assert headers["x-cuckoo-event-id"].startswith("evt_")
        assert before <= int(headers["x-cuckoo-timestamp"]) <= after  # stamped when posted
        assert headers["user-agent"] == "cuckoo-hub/1"
        assert httpx.Response(200, content=body).json()["id"] == headers["x-cuckoo-event-id"]
        sent = person_send(http, url, agent.owner, agent.conversation_id, text="hi").json()[
            "message"
        ]
        receiver.wait_for(2)
        headers, body = receiver.got[1]
        assert headers["x-cuckoo-event"] == "message.created" and verify(
            headers, body, agent.secret
        )
        time.sleep(0.2)
        page = http.get(
            f"{url}/v1/client/conversations/{agent.conversation_id}/messages",
            headers=dev(agent.owner),
        ).json()
        assert page["messages"][0]["id"] == sent["id"]
        assert page["messages"][0]["delivery_status"] == "delivered"
        # The catch-up route shows every event, delivered or not.
        events = http.get(f"{url}/v1/agent/events", headers=bearer(agent.secret)).json()["events"]
        assert [e["type"] for e in events] == ["conversation.joined", "message.created"]


@pytest.mark.parametrize("failure", [500, 302])
def test_a_failure_is_retried_on_schedule(
    cuckoo_hub: Callable[..., str], receiver: Receiver, failure: int, retry_delays: list[float]
) -> None:
    # The first retry comes after the first delay of the schedule, not a later one (which
    # would not come within wait_for's 5 s).
    url = cuckoo_hub(webhook_retry_seconds=(0.3, 60, 60, 60, 60, 3600))
    receiver.answers = [failure]
    with httpx.Client() as http:
        make_agent(http, url, mode="webhook", webhook_url=receiver.url)
        receiver.wait_for(2)
    (first, _), (again, _) = receiver.got[:2]
    assert first["x-cuckoo-event-id"] == again["x-cuckoo-event-id"]
    assert retry_delays == [0.3]
    time.sleep(0.5)
    assert len(receiver.got) == 2  # the 204 ended it


def test_a_slow_failing_receiver_holds_back_no_other_post(
    cuckoo_hub: Callable[..., str], receiver: Receiver, retry_delays: list[float]
) -> None:
    """Each event has its own schedule from its own first post, and a binding whose posts are
    slow to fail holds back neither its next event nor another binding's. Checked by the order
    of arrivals and answers, not by the clock."""
    url = cuckoo_hub(webhook_retry_seconds=(0.3, 60, 60, 60, 60, 3600))
    with receiving() as slow, httpx.Client() as http:
        slow.name, slow.delay, slow.answers = "slow", 2.0, [500, 500]
        receiver.log = slow.log  # one order for both
        agent = make_agent(http, url, mode="webhook", webhook_url=slow.url)
        slow.wait_for(1)  # the join: answered 500 after two seconds
        join = slow.got[0][0]["x-cuckoo-event-id"]
        person_send(http, url, agent.owner, agent.conversation_id, text="behind the join")
        slow.wait_for(2)
        make_agent(http, url, mode="webhook", webhook_url=receiver.url)
        receiver.wait_for(1)
        slow.wait_for(4, timeout=10)
        log = list(slow.log)
        joined_answered = log.index(("answered", "slow", join))
        # The next event of the slow binding was posted while the join was still in flight,
        other = slow.got[1][0]["x-cuckoo-event-id"]
        assert other != join and log.index(("got", "slow", other)) < joined_answered, log
        # and so was the other binding's first event.
        assert log.index(next(e for e in log if e[1] == "receiver")) < joined_answered, log
        posts: dict[str, int] = {}
        for headers, _ in slow.got:
            posts[headers["x-cuckoo-event-id"]] = posts.get(headers["x-cuckoo-event-id"], 0) + 1
        assert sorted(posts.values()) == [2, 2]
        # Each event's first retry waited the first delay: not a later delay of the schedule
        # because another event of the binding failed first.
        assert retry_delays == [0.3, 0.3]


def test_a_slow_answer_is_a_failure(cuckoo_hub: Callable[..., str], receiver: Receiver) -> None:
    url = cuckoo_hub(webhook_retry_seconds=RETRIES, webhook_timeout=0.2)
    receiver.delay = 0.5
    with httpx.Client() as http:
        make_agent(http, url, mode="webhook", webhook_url=receiver.url)
        receiver.wait_for(2, timeout=8)
    assert receiver.got[0][0]["x-cuckoo-event-id"] == receiver.got[1][0]["x-cuckoo-event-id"]


def test_unbroken_failures_make_the_agent_unreachable(
    cuckoo_hub: Callable[..., str], receiver: Receiver
) -> None:
    url = cuckoo_hub(webhook_retry_seconds=RETRIES, unreachable_after=0.4)
    receiver.answers = [500] * 12
    with httpx.Client() as http:
        agent = make_agent(http, url, mode="webhook", webhook_url=receiver.url)

        def status() -> str:
            conversation = http.get(
                f"{url}/v1/client/conversations/{agent.conversation_id}", headers=dev(agent.owner)
            ).json()["conversation"]
            return str(
                next(p["status"] for p in conversation["participants"] if p["kind"] == "agent")
            )

        assert status() == "connected"
        deadline = time.monotonic() + 5
        while status() != "unreachable":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        # A success clears it.
        deadline = time.monotonic() + 5
        while status() != "connected":
            assert time.monotonic() < deadline
            time.sleep(0.05)


def test_the_hub_gives_up(cuckoo_hub: Callable[..., str], receiver: Receiver) -> None:
    url = cuckoo_hub(webhook_retry_seconds=RETRIES, give_up_seconds=0.5, sweep_interval=0.05)
    receiver.answers = [500] * 1000
    with httpx.Client() as http:
        agent = make_agent(http, url, mode="webhook", webhook_url=receiver.url)
        sent = person_send(http, url, agent.owner, agent.conversation_id, text="hi").json()[
            "message"
        ]
        time.sleep(1.0)
        count = len(receiver.got)
        time.sleep(0.4)
        assert len(receiver.got) == count  # no more tries
        page = http.get(
            f"{url}/v1/client/conversations/{agent.conversation_id}/messages",
            headers=dev(agent.owner),
        ).json()
        assert (
            next(m for m in page["messages"] if m["id"] == sent["id"])["delivery_status"]
            == "failed"
        )


def test_loopback_webhooks_are_refused_outside_dev_mode(cuckoo_hub: Callable[..., str]) -> None:
    codes: dict[str, str] = {}
    url = cuckoo_hub(dev=False, code_sink=codes.__setitem__)
    with httpx.Client() as http:
        http.post(f"{url}/v1/auth/email/start", json={"email": "o@example.com"})
        token = http.post(
            f"{url}/v1/auth/email/verify",
            json={"email": "o@example.com", "code": codes["o@example.com"]},
        ).json()["token"]
        made = http.post(
            f"{url}/v1/mgmt/agents",
            headers=bearer(token),
            json={"handle": "prod-bot", "display_name": "P"},
        ).json()["agent"]
        for hook in (
            "https://127.0.0.1:9/hook",
            "https://192.168.1.2/hook",
            "http://hooks.example.com/x",
        ):
            response = http.post(
                f"{url}/v1/mgmt/agents/{made['id']}/binding",
                headers=bearer(token),
                json={"mode": "webhook", "webhook_url": hook},
            )
            assert response.status_code == 422, hook
            assert error_of(response)["code"] == "invalid_webhook_url"


def test_a_webhook_binding_refuses_the_socket_but_serves_http(
    cuckoo_hub: Callable[..., str], receiver: Receiver
) -> None:
    url = cuckoo_hub()
    with httpx.Client() as http:
        agent = make_agent(http, url, mode="webhook", webhook_url=receiver.url)
        assert agent.send(http, text="from a webhook agent").status_code == 201
        assert agent.get(http, "/me").json()["agent"]["id"] == agent.id
