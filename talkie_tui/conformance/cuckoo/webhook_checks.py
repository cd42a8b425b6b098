"""The checks of an agent on a webhook binding: the hub posts each event to the agent's URL,
signed; talkie also posts there itself, signed well, badly, late, and twice."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from talkie_tui.conformance.cuckoo.agent_mode import AT_LEAST_ONCE, GREETING, SPEC, agent_check
from talkie_tui.conformance.cuckoo.agent_session import AgentSession
from talkie_tui.conformance.cuckoo.receiver import webhook_signature
from talkie_tui.conformance.report import CheckFailed, CheckSkipped
from talkie_tui.conformance.suite import Check, Registry
from talkie_tui.conformance.wire import Answer

__all__ = ["WEBHOOK_CHECKS"]

_REGISTRY: Registry[AgentSession] = Registry()
WEBHOOK_CHECKS: list[Check[AgentSession]] = _REGISTRY.checks
ANSWER_WITHIN = 10.0  # "Answer 2xx within 10 seconds."
LISTEN_WAIT = 20.0
STALE_SECONDS = 3600  # an hour: "far from now" by any tolerance
SIGNATURE_RULE = (
    f'{SPEC}: "The signature is HMAC-SHA256 over timestamp + "." + body. The key is the SHA-256 '
    'of your binding secret"'
)
STALE_RULE = f'{SPEC}: "Compare in constant time and reject a timestamp that is far from now."'


async def post_event(
    session: AgentSession, event: dict[str, Any], *, secret: str | None = None, age: int = 0
) -> Answer:
    """POST `event` to the agent's webhook as the hub does, signed with `secret` (default: the
    binding's), its timestamp `age` seconds old."""
    body = json.dumps(event).encode()
    timestamp = str(int(time.time()) - age)
    headers = {
        "Content-Type": "application/json",
        "X-Cuckoo-Event": str(event.get("type")),
        "X-Cuckoo-Event-Id": str(event.get("id")),
        "X-Cuckoo-Timestamp": timestamp,
        "X-Cuckoo-Signature": webhook_signature(secret or session.chat.secret, timestamp, body),
    }
    async with asyncio.timeout(ANSWER_WITHIN + 2):
        return await session.hub_request_to(session.webhook_url, body, headers)


def webhook_check(
    name: str, *, section: str
) -> Callable[
    [Callable[[AgentSession], Awaitable[None]]], Callable[[AgentSession], Awaitable[None]]
]:
    """Register a webhook-mode check (its docstring says why it matters to a person)."""
    return agent_check(name, section=section, registry=_REGISTRY)


async def _events(session: AgentSession, kind: str) -> list[dict[str, Any]]:
    data = await session.hub.ok("GET", "/v1/agent/events", session.chat.agent, "the agent's events")
    return [event for event in data.get("events", []) if event.get("type") == kind]


async def _a_message_event(session: AgentSession) -> dict[str, Any]:
    """The hub's latest message.created for the agent (to post again, changed)."""
    messages = await _events(session, "message.created")
    if not messages:
        raise CheckSkipped("no message.created to post again (see webhook-answers)")
    return messages[-1]


def _fresh(event: dict[str, Any]) -> dict[str, Any]:
    """A copy of a hub event under a new id (the agent has not seen it)."""
    return {**event, "id": f"evt_{uuid.uuid4().hex[:26]}"}


@webhook_check("webhook-listens", section="Webhook transport")
async def webhook_listens(session: AgentSession) -> None:
    """The agent listens at `CUCKOO_WEBHOOK_URL`.

    Why it matters: until the backend listens, the hub retries and soon tells people the agent
    is away.
    """

    async def listening() -> bool | None:
        try:
            await session.hub_request_to(
                session.webhook_url, b"{}", {"Content-Type": "application/json"}
            )
        except CheckFailed:
            return None
        return True

    if await session.until(listening, LISTEN_WAIT) is None:
        session.unreached = "nothing listens at the agent's webhook (see webhook-listens)"
        raise CheckFailed(
            f"nothing listens at {session.webhook_url} (the agent's PORT) after {LISTEN_WAIT:g} s"
        )


@webhook_check("webhook-answers", section="Webhook transport; Sending a message")
async def webhook_answers(session: AgentSession) -> None:
    """A person's message, posted by the hub, is answered.

    Why it matters: a person who writes and gets no answer believes the agent is broken.
    """
    said = await session.chat.say(session.hub, GREETING)
    await session.answer_to(said["id"])
    events = [
        e
        for e in await _events(session, "message.created")
        if ((e.get("data") or {}).get("message") or {}).get("id") == said["id"]
    ]
    if events:
        session.answered[said["id"]] = str(events[0]["id"])


@webhook_check("webhook-good-signature", section="Webhook transport")
async def good_signature(session: AgentSession) -> None:
    """A well-signed, current delivery is answered 2xx within 10 s.

    Why it matters: the hub counts anything but a 2xx within 10 seconds as a failure and
    retries.
    """
    joins = await _events(session, "conversation.joined")
    if not joins:
        raise CheckSkipped("the hub made no conversation.joined to post again")
    began = time.monotonic()
    answer = await post_event(session, _fresh(joins[-1]))
    if not 200 <= answer.status < 300 or time.monotonic() - began > ANSWER_WITHIN:
        raise CheckFailed(
            f"a well-signed delivery answered {answer.describe()} after "
            f'{time.monotonic() - began:.1f} s; {SPEC}: "Answer 2xx within 10 seconds."'
        )


@webhook_check("webhook-bad-signature", section="Webhook transport")
async def bad_signature(session: AgentSession) -> None:
    """A delivery signed with another key is refused.

    Why it matters: anyone can post to the agent's address; without the check they could speak
    in a person's name.
    """
    message = await _a_message_event(session)
    before = await session.count_replies()
    answer = await post_event(session, _fresh(message), secret="bnd_sec_" + "x" * 52)
    if 200 <= answer.status < 300:
        raise CheckFailed(
            f"a delivery with a wrong signature answered {answer.describe()}; {SIGNATURE_RULE}"
        )
    if await session.replies_grow(before):
        raise CheckFailed(f"the agent answered a forged delivery; {SIGNATURE_RULE}")


@webhook_check("webhook-stale", section="Webhook transport")
async def stale(session: AgentSession) -> None:
    """A well-signed delivery with an old timestamp is refused.

    Why it matters: a delivery recorded and replayed later must not make the agent act again
    for a person.
    """
    message = await _a_message_event(session)
    answer = await post_event(session, _fresh(message), age=STALE_SECONDS)
    if 200 <= answer.status < 300:
        raise CheckFailed(
            f"a delivery timestamped an hour ago answered {answer.describe()}; {STALE_RULE}"
        )


@webhook_check("webhook-redelivery", section="Acknowledging; Delivery")
async def webhook_redelivery(session: AgentSession) -> None:
    """The same event posted again is answered 2xx and not answered a second time.

    Why it matters: after a failed delivery the hub posts a message again, and the person must
    not get the same answer twice.
    """
    if not session.answered:
        raise CheckSkipped("no message was answered (see webhook-answers)")
    event_id = next(iter(session.answered.values()))
    event = next(e for e in await _events(session, "message.created") if e["id"] == event_id)
    before = await session.count_replies()
    answer = await post_event(session, event)
    if not 200 <= answer.status < 300:
        raise CheckFailed(f"the redelivered event answered {answer.describe()}, not 2xx")
    if await session.replies_grow(before):
        raise CheckFailed(
            f"the agent answered the redelivered event {event_id} again; {AT_LEAST_ONCE}"
        )
