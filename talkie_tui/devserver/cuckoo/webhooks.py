"""Webhook delivery: each due event POSTed, signed, to the binding's URL; retried on a schedule.

The signature is `sha256=<hex HMAC-SHA256(SHA-256(secret), timestamp + "." + body)>`; the key is
the stored hash of the secret, so the hub never needs the secret itself. Answers must be 2xx
within the timeout; a redirect is a failure. Events of one agent go out in order.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import logging
import time
from typing import TYPE_CHECKING

import httpx

from ..common import clock
from ..common.sqlite import Row
from .addresses import resolved_problem
from .outbox import envelope

if TYPE_CHECKING:
    from .services import Hub

logger = logging.getLogger(__name__)
USER_AGENT = "cuckoo-hub/1"
IDLE_WAIT = 60.0


def signature(secret_hash_hex: str, timestamp: str, body: bytes) -> str:
    """The `X-Cuckoo-Signature` value for a body sent at `timestamp`."""
    key = bytes.fromhex(secret_hash_hex)
    digest = hmac.new(key, timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


class WebhookSender:
    """The task that posts due events of webhook bindings."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self._wake: asyncio.Event | None = None

    def wake(self) -> None:
        """New events may be due."""
        if self._wake is not None:
            self._wake.set()

    async def run(self) -> None:
        """Deliver until cancelled."""
        self._wake = asyncio.Event()
        async with httpx.AsyncClient(
            follow_redirects=False, timeout=self.hub.config.webhook_timeout, trust_env=False
        ) as client:
            while True:
                self._wake.clear()
                bindings = self.hub.storage.webhook_bindings()
                await asyncio.gather(*(self._deliver(client, b) for b in bindings))
                await self._sleep(bindings)

    async def _sleep(self, bindings: list[Row]) -> None:
        assert self._wake is not None
        wait = IDLE_WAIT
        now = clock.now()
        for binding in bindings:
            due = self.hub.storage.next_due(binding["agent_id"])
            if due is not None:
                wait = min(wait, max(0.0, (clock.parse_iso(due) - now).total_seconds()))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), max(wait, 0.01))

    async def _deliver(self, client: httpx.AsyncClient, binding: Row) -> None:
        config = self.hub.config
        now = clock.now()
        # In flight: not due again before the request has surely timed out.
        lease = clock.iso(clock.later(config.webhook_timeout + 5.0, now))
        events = self.hub.storage.claim_due(binding["agent_id"], clock.iso(now), lease, 100)
        for index, event in enumerate(events):
            error = await self._post(client, binding, event)
            if error is None:
                self.hub.storage.ack(binding["agent_id"], event["id"], clock.iso(clock.now()))
                self.hub.outbox.succeeded(binding["agent_id"])
                if event["type"] == "message.created" and event["message_id"]:
                    self.hub.chat.delivery_changed(event["message_id"])
                continue
            logger.info("webhook to %s failed: %s", binding["webhook_url"], error)
            retry = config.webhook_retry_seconds
            delay = retry[min(event["attempts"], len(retry)) - 1]
            due = clock.iso(clock.later(delay))
            for waiting in events[index:]:
                self.hub.storage.reschedule(waiting["id"], due, error)
            self.hub.outbox.failed(binding["agent_id"])
            return

    async def _post(self, client: httpx.AsyncClient, binding: Row, event: Row) -> str | None:
        url = str(binding["webhook_url"])
        problem = await resolved_problem(url, self.hub.config.dev)
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
