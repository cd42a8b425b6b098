"""The checks of a Cuckoo agent backend on a socket binding, as a person would find its faults:
each says, when it fails, why that matters to a person."""

from __future__ import annotations

import asyncio
import functools
import inspect
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from talkie_tui.conformance.cuckoo.agent_session import (
    ACK_WAIT,
    ANSWER_WAIT,
    CONNECT_WAIT,
    QUIET,
    AgentSession,
)
from talkie_tui.conformance.cuckoo.hub import Party, Throwaway
from talkie_tui.conformance.report import CheckFailed, CheckSkipped
from talkie_tui.conformance.suite import Check, Registry

__all__ = ["AGENT_CHECKS", "AT_LEAST_ONCE", "GREETING", "SPEC", "agent_check"]

SPEC = "cuckoo-agent.md"
AT_LEAST_ONCE = (
    f'{SPEC}: "delivery is at least once and your handlers must tolerate seeing the same event '
    'twice"'
)
GREETING = "Hello! This is a conformance check by talkie."

_REGISTRY: Registry[AgentSession] = Registry()
AGENT_CHECKS: list[Check[AgentSession]] = _REGISTRY.checks


WHY = "Why it matters: "


def agent_check(
    name: str,
    *,
    section: str,
    timeout: float = 45.0,
    registry: Registry[AgentSession] = _REGISTRY,
) -> Callable[
    [Callable[[AgentSession], Awaitable[None]]], Callable[[AgentSession], Awaitable[None]]
]:
    """Register an agent check; its failure ends with why it matters to a person, which its
    docstring says in a paragraph that starts `Why it matters: `."""

    def register(
        function: Callable[[AgentSession], Awaitable[None]],
    ) -> Callable[[AgentSession], Awaitable[None]]:
        _, found, paragraph = inspect.cleandoc(function.__doc__ or "").partition(WHY)
        if not found and function.__doc__ is not None:  # None: docstrings stripped (-OO)
            raise ValueError(f"the docstring of the check {name} does not say {WHY!r}")
        why = " ".join(paragraph.split())

        @functools.wraps(function)
        async def checked(session: AgentSession) -> None:
            if session.unreached is not None:
                raise CheckSkipped(session.unreached)
            try:
                session.alive()
                await function(session)
            except CheckFailed as failure:
                raise CheckFailed(
                    f"{failure} — why it matters: {why}" if why else str(failure)
                ) from None

        registry.check(name, section=f"{SPEC} {section}", timeout=timeout)(checked)
        return checked

    return register


@agent_check("connects", section="The socket")
async def connects(session: AgentSession) -> None:
    """The agent opens its socket with the binding secret.

    Why it matters: until the backend holds its socket, everything a person sends waits
    unanswered.
    """

    async def connected() -> bool | None:
        return session.relay.connections > 0 or None

    if await session.until(connected, CONNECT_WAIT) is None:
        session.unreached = "the agent never opened its socket (see connects)"
        raise CheckFailed(
            f"the agent did not open $CUCKOO_HUB/v1/agent/socket within "
            f'{CONNECT_WAIT:g} s; {SPEC}: "Connect to wss://<hub>/v1/agent/socket with the '
            'binding secret in an Authorization header"'
        )


@agent_check("answers", section="Events; Sending a message")
async def answers(session: AgentSession) -> None:
    """A person's message is answered.

    Why it matters: a person who writes and gets no answer believes the agent is broken.
    """
    said = await session.chat.say(session.hub, GREETING)
    try:
        reply = await session.answer_to(said["id"])
    except CheckFailed:
        session.mute = session.process.exited is None
        raise
    session.replies[said["id"]] = str(reply["id"])
    session.answered[said["id"]] = await session.event_of(said["id"])


async def _first_answered(session: AgentSession) -> tuple[str, str]:
    if not session.answered:
        raise CheckSkipped("no message was answered (see answers)")
    return next(iter(session.answered.items()))


@agent_check("acks", section="Acknowledging")
async def acks(session: AgentSession) -> None:
    """The event of an answered message is acknowledged.

    Why it matters: an event left unacknowledged comes again every 30 seconds, and the hub soon
    tells people the agent is away.
    """
    _, event_id = await _first_answered(session)
    if not await session.acked(event_id):
        raise CheckFailed(
            f'the event {event_id} was answered but never acknowledged; {SPEC}: "Each event you '
            'receive carries an id. Acknowledge it once you have handled it."'
        )


@agent_check("acks-after-work", section="Acknowledging")
async def acks_after_work(session: AgentSession) -> None:
    """The event is acknowledged after its answer is complete, not on receipt.

    Why it matters: an agent that acknowledges on receipt and then crashes mid-reply loses the
    person's message for good; acknowledged after the work, the hub sends it again.
    """
    message_id, event_id = await _first_answered(session)
    acked_at = session.relay.first_ack.get(event_id)
    if acked_at is None:
        raise CheckSkipped(f"the event {event_id} was never acknowledged (see acks)")
    completed_at = session.relay.completed.get(session.replies.get(message_id, ""))
    if completed_at is None:
        raise CheckSkipped("the answer was not completed through the relay (see answers)")
    if acked_at < completed_at:
        raise CheckFailed(
            f"the event {event_id} was acknowledged {completed_at - acked_at:.2f} s before its "
            f'answer was complete; {SPEC}: "Acknowledge after the work is done, not on receipt. '
            'That way a crash mid-reply replays the message rather than losing it."'
        )


@agent_check("redelivery", section="Acknowledging")
async def redelivery(session: AgentSession) -> None:
    """The same event delivered again is acknowledged and not answered a second time.

    Why it matters: after a network blip the hub sends a message again, and the person must not
    get the same answer twice.
    """
    message_id, event_id = await _first_answered(session)
    before = len(await session.replies_after(message_id))
    acked = session.relay.acks[event_id]
    await session.relay.redeliver(event_id)
    await asyncio.sleep(QUIET)
    session.alive()
    after = len(await session.replies_after(message_id))
    if after > before:
        raise CheckFailed(
            f"the agent answered the redelivered event {event_id} again; {AT_LEAST_ONCE}"
        )
    if acked and session.relay.acks[event_id] <= acked:
        raise CheckFailed(
            f"the redelivered event {event_id} was not acknowledged again; {AT_LEAST_ONCE}"
        )


@agent_check("button-tap", section="Buttons")
async def button_tap(session: AgentSession) -> None:
    """A button the agent offered can be tapped, and the tap is answered.

    Why it matters: a button that does nothing when tapped is a broken promise to the person.
    """
    offered = None
    for message in await session.messages():
        rows = (message.get("body") or {}).get("buttons") or []
        buttons = [b for row in rows for b in row if isinstance(b, dict) and b.get("id")]
        if (message.get("sender") or {}).get("kind") == "agent" and buttons:
            offered = (message, buttons[0])
            break
    if offered is None:
        raise CheckSkipped("the agent offered no button with an id to tap")
    source, button = offered
    tap = await session.hub.ok(
        "POST",
        session.chat.person_messages,
        session.chat.person,
        "tapping the agent's button",
        json_body={
            "action": {"button_id": button["id"], "source_message_id": source["id"]},
            "idempotency_key": uuid.uuid4().hex,
        },
    )
    try:
        await session.answer_to(tap["message"]["id"])
    except CheckFailed as failure:
        raise CheckFailed(
            f'the tap of {button.get("label")!r} was not answered ({failure}); {SPEC}: "An id '
            'button sends you a tap … A tap arrives as a message.created from the person"'
        ) from None


@agent_check("joined", section="Events (conversation.joined)")
async def joined(session: AgentSession) -> None:
    """A second person joins: conversation.joined is acknowledged and their message answered.

    Why it matters: every new person starts with a join, and an agent that stumbles on it never
    answers them.
    """
    newcomer = Party.person(None)
    path = f"/v1/mgmt/agents/{session.chat.agent_id}/pair-tokens"
    minted = await session.hub.ok("POST", path, session.chat.owner, "a pairing code", json_body={})
    accepted = await session.hub.ok(
        "POST", f"/v1/client/pair/{minted['code']}/accept", newcomer, "joining by the code"
    )
    chat = Throwaway(
        session.chat.owner,
        newcomer,
        session.chat.agent_id,
        session.chat.secret,
        str(accepted["conversation"]["id"]),
    )
    session.newcomer = chat
    join = await session.pushed("conversation.joined", _about(chat), "conversation.joined")
    if not await session.acked(str(join["id"])):
        raise CheckFailed(
            f'conversation.joined was never acknowledged; {SPEC}: "There is no endpoint that '
            'lists conversations. Learn them from conversation.joined and keep your own list."'
        )
    said = await chat.say(session.hub, "Hi, I just joined.")
    await session.answer_to(said["id"], chat)


def _about(chat: Throwaway) -> Callable[[dict[str, Any]], bool]:
    """A predicate: an event about `chat`'s conversation."""

    def about(event: dict[str, Any]) -> bool:
        conversation = (event.get("data") or {}).get("conversation") or {}
        return bool(conversation.get("id") == chat.conversation_id)

    return about


@agent_check("left", section="Events (conversation.left)")
async def left(session: AgentSession) -> None:
    """A person blocks the agent: conversation.left is acknowledged and others are answered.

    Why it matters: a person who blocks an agent has said no; the agent must take it and keep
    serving everyone else.
    """
    chat = session.newcomer
    if chat is None:
        raise CheckSkipped("no second person joined (see joined)")
    await session.hub.ok(
        "POST", f"/v1/client/agents/{chat.agent_id}/block", chat.person, "blocking the agent"
    )
    rule = f'{SPEC}: "conversation.left … Treat it as final and stop sending."'
    event = await session.pushed("conversation.left", _about(chat), "conversation.left")
    if not await session.acked(str(event["id"])):
        raise CheckFailed(f"conversation.left was never acknowledged; {rule}")
    session.alive()
    await session.answers_on("Are you still with me?", "another person left,", rule)


@agent_check("stop", section="Streaming (stop.requested, notes/cuckoo.md)", timeout=60.0)
async def stop(session: AgentSession) -> None:
    """stop.requested during a stream: the agent acks it, keeps running and answers on.

    Why it matters: a person who presses stop expects the writing to stop, and their next
    message to be answered.
    """
    session.unless_mute()
    said = await session.chat.say(session.hub, "Please write a long, detailed answer.")

    async def streaming() -> dict[str, Any] | None:
        replies = await session.replies_after(said["id"])
        found = next((m for m in replies if m.get("status") == "streaming"), None)
        if found is None and any(m.get("status") == "complete" for m in replies):
            raise CheckSkipped("the agent answered without streaming, so there was nothing to stop")
        return found

    if await session.until(streaming, ANSWER_WAIT, every=0.05) is None:
        raise CheckFailed(f"no answer from the agent within {ANSWER_WAIT:g} s")
    path = f"/v1/client/conversations/{session.chat.conversation_id}/stop"
    await session.hub.ok("POST", path, session.chat.person, "pressing stop", json_body={})

    async def stops() -> list[dict[str, Any]] | None:
        return session.relay.events("stop.requested") or None

    requested = await session.until(stops, ACK_WAIT)
    rule = (
        "notes/cuckoo.md: \"The person's POST …/stop finishes the reply where it stands (stopped "
        '+ truncated) and sends the agent stop.requested; later appends get 409 stopped"'
    )
    if not requested or not await session.acked(str(requested[-1]["id"])):
        raise CheckFailed(f"stop.requested was not acknowledged; {rule}")
    await asyncio.sleep(1.0)  # later appends are refused now: the agent must take it calmly
    session.alive()
    await session.answers_on("Thanks, that is enough.", "the stop", rule)


@agent_check("reconnect", section="The socket")
async def reconnect(session: AgentSession) -> None:
    """After its socket drops (not 4001/4002), the agent reconnects and answers again.

    Why it matters: connections drop, and an agent that does not come back goes silent for
    everyone.
    """
    before = session.relay.connections
    await session.relay.drop()

    async def reconnected() -> bool | None:
        return session.relay.connections > before or None

    try:
        back = await session.until(reconnected, ANSWER_WAIT)
    except CheckFailed as gone:
        raise CheckFailed(
            f"{gone} when its socket dropped (1012), instead of reconnecting"
        ) from None
    if back is None:
        raise CheckFailed(
            f"the agent did not reconnect within {ANSWER_WAIT:g} s of a dropped socket "
            f'(close 1012); {SPEC}: 4001 and 4002 are final, "Neither is worth retrying" — '
            "other closes are"
        )
    said = await session.chat.say(session.hub, "Are you still there?")
    await session.answer_to(said["id"])
