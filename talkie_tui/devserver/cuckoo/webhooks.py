"""Webhook delivery: each due event POSTed, signed, to the binding's URL; retried on a schedule.

The signature is `sha256=<hex HMAC-SHA256(SHA-256(secret), timestamp + "." + body)>`; the key is
the stored hash of the secret, so the hub never needs the secret itself. Answers must be 2xx
within the timeout; a redirect is a failure. Each event is retried on its own schedule, so
events of one agent may arrive out of order (a receiver fills gaps from `GET /v1/agent/events`).
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import hmac
import json
import logging
import time
from collections.abc import Callable

import httpx

from talkie_tui.core.waiting import wait_event
from talkie_tui.devserver.common import clock
from talkie_tui.devserver.common.sqlite import Row
from talkie_tui.devserver.cuckoo.addresses import resolved_problem
from talkie_tui.devserver.cuckoo.config import HubConfig
from talkie_tui.devserver.cuckoo.outbox import Outbox, envelope
from talkie_tui.devserver.cuckoo.storage import Storage

logger = logging.getLogger(__name__)
USER_AGENT = "cuckoo-hub/1"
IDLE_WAIT = 60.0
# Posts of one binding in flight at once.
PER_BINDING = 8


def signature(secret_hash_hex: str, timestamp: str, body: bytes) -> str:
    """The `X-Cuckoo-Signature` value for a body sent at `timestamp`."""
    key = bytes.fromhex(secret_hash_hex)
    digest = hmac.new(key, timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


class WebhookSender:
    """The task that posts due events of webhook bindings.

    Every event has a schedule of its own: its first post as soon as it is due, each retry
    counted from its own failed attempt. Up to `PER_BINDING` posts of one binding are in flight
    at once, and the dispatcher never waits for a post, so a slow or failing receiver holds back
    neither the binding's other events (beyond that cap) nor other bindings.
    """

    def __init__(
        self,
        storage: Storage,
        config: HubConfig,
        outbox: Outbox,
        delivered: Callable[[str], None],
    ) -> None:
        self.storage = storage
        self.config = config
        self.outbox = outbox
        self._delivered = delivered
        self._wake: asyncio.Event | None = None
        self._in_flight: dict[str, set[asyncio.Task[None]]] = {}

    def wake(self) -> None:
        """New events may be due."""
        if self._wake is not None:
            self._wake.set()

    async def run(self) -> None:
        """Deliver until cancelled."""
        self._wake = asyncio.Event()
        async with httpx.AsyncClient(
            follow_redirects=False,
            timeout=self.config.webhook_timeout,
            trust_env=False,
            # The cap is PER_BINDING: a pool limit would make one binding's posts wait for
            # another's (and count the wait against their timeout).
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=100),
        ) as client:
            try:
                while True:
                    self._wake.clear()
                    bindings = self.storage.webhook_bindings()
                    for binding in bindings:
                        self._start_due(client, binding)
                    await self._sleep(bindings)
            finally:
                tasks = [task for running in self._in_flight.values() for task in running]
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)

    def _start_due(self, client: httpx.AsyncClient, binding: Row) -> None:
        """Lease the binding's due events that fit under its cap and post each in a task."""
        agent_id = str(binding["agent_id"])
        running = self._in_flight.setdefault(agent_id, set())
        free = PER_BINDING - len(running)
        if free <= 0:
            return
        now = clock.now()
        # In flight: not due again before the request has surely timed out.
        lease = clock.iso(clock.later(self.config.webhook_timeout + 5.0, now))
        for event in self.storage.claim_due(agent_id, clock.iso(now), lease, free):
            task = asyncio.create_task(self._deliver(client, binding, event))
            running.add(task)
            task.add_done_callback(functools.partial(self._finished, agent_id))

    def _finished(self, agent_id: str, task: asyncio.Task[None]) -> None:
        running = self._in_flight.get(agent_id)
        if running is not None:
            running.discard(task)
            if not running:
                del self._in_flight[agent_id]
        if not task.cancelled() and task.exception() is not None:
            logger.error("webhook delivery failed", exc_info=task.exception())
        self.wake()  # a slot is free (and a retry may be due sooner than the dispatcher thinks)

    async def _sleep(self, bindings: list[Row]) -> None:
        assert self._wake is not None
        wait = IDLE_WAIT
        now = clock.now()
        for binding in bindings:
            if len(self._in_flight.get(binding["agent_id"], ())) >= PER_BINDING:
                continue  # nothing starts before one of its posts ends (which wakes us)
            due = self.storage.next_due(binding["agent_id"])
            if due is not None:
                wait = min(wait, max(0.0, (clock.parse_iso(due) - now).total_seconds()))
        await wait_event(self._wake, max(wait, 0.01))

    async def _deliver(self, client: httpx.AsyncClient, binding: Row, event: Row) -> None:
        """One attempt at one event: acknowledged, or due again after its own next delay."""
        agent_id = binding["agent_id"]
        error = await self._post(client, binding, event)
        if error is None:
            self.storage.ack(agent_id, event["id"], clock.iso(clock.now()))
            self.outbox.succeeded(agent_id)
            if event["type"] == "message.created" and event["message_id"]:
                self._delivered(event["message_id"])
            return
        logger.info("webhook to %s failed: %s", binding["webhook_url"], error)
        retry = self.config.webhook_retry_seconds
        # `attempts` counts this one (the first attempt is 1): its first retry waits retry[0].
        delay = retry[min(event["attempts"], len(retry)) - 1]
        self.storage.reschedule(event["id"], clock.iso(clock.later(delay)), error)
        self.outbox.failed(agent_id)

    async def _post(self, client: httpx.AsyncClient, binding: Row, event: Row) -> str | None:
        url = str(binding["webhook_url"])
        problem = await resolved_problem(url, self.config.dev)
        if problem is not None:
            return problem
        body = json.dumps(envelope(event), ensure_ascii=False).encode()
        timestamp = str(int(time.time()))
        headers = {
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            "X-Cuckoo-Event": event["type"],
            "X-Cuckoo-Event-Id": event["id"],
            "X-Cuckoo-Timestamp": timestamp,
            "X-Cuckoo-Signature": signature(str(binding["secret_hash"]), timestamp, body),
        }
        try:
            response = await client.post(url, content=body, headers=headers)
        except httpx.HTTPError as error:
            return f"{type(error).__name__}: {error}"
        if not 200 <= response.status_code < 300:
            return f"answered {response.status_code}"
        return None
