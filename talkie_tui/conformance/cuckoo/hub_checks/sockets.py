"""The hub checks of the agent's socket: pushes, acknowledgements, redelivery, one socket per
agent, the frame cap, pings, and a backlog of more than one lease."""

from __future__ import annotations

import time
import uuid
from typing import Any

from talkie_tui.conformance.cuckoo.hub import Party, Throwaway, message_event
from talkie_tui.conformance.cuckoo.hub_checks import limits
from talkie_tui.conformance.cuckoo.hub_checks.base import SPEC, HubSession, check_with_agent
from talkie_tui.conformance.cuckoo.hub_checks.catch_up import all_events
from talkie_tui.conformance.raw_socket import CLOSE, PING, PONG, Frame
from talkie_tui.conformance.report import CheckFailed, CheckSkipped, show


@check_with_agent("socket-push", section="The socket; Events")
async def socket_push(session: HubSession, made: Throwaway) -> None:
    """What was sent while the agent was away is pushed on connect, in the event envelope."""
    text = f"hello {uuid.uuid4().hex[:8]}"
    await made.say(session.hub, text)
    async with session.hub.agent_socket(made.secret) as socket:
        event = await socket.wait_for(message_event(made.conversation_id, text), "message.created")
        await socket.ack(str(event.get("id")))
    missing = [
        name for name in ("id", "type", "created_at", "agent_id", "data") if name not in event
    ]
    if missing or not str(event.get("id", "")).startswith("evt_"):
        raise CheckFailed(
            f'the event lacks {", ".join(missing) or "an evt_ id"}; {SPEC}: "Every event has the '
            'same envelope. { "id": "evt_…", "type", "created_at", "agent_id", "data" }"'
        )
    if event["agent_id"] != made.agent_id:
        raise CheckFailed(f"the event's agent_id is {show(event['agent_id'])}, not the agent's")


@check_with_agent("ack", section="Acknowledging")
async def ack(session: HubSession, made: Throwaway) -> None:
    """An acknowledged event is not pushed again after a reconnect; an unacknowledged one is."""
    await made.say(session.hub, "first")
    await made.say(session.hub, "second")
    async with session.hub.agent_socket(made.secret) as socket:
        first = await socket.wait_for(
            message_event(made.conversation_id, "first"), "the first message"
        )
        await socket.wait_for(message_event(made.conversation_id, "second"), "the second message")
        await socket.ack(str(first["id"]))
        await socket.quiet(lambda frame: False, 0.5)  # the ack is on its way before the close
    async with session.hub.agent_socket(made.secret) as socket:
        again = await socket.quiet(message_event(made.conversation_id), limits.QUIET + 3)
    if again is None:
        raise CheckFailed(
            f'the unacknowledged event was not pushed on reconnect; {SPEC}: "events start arriving '
            'as JSON text frames straight away, including anything you missed while away"'
        )
    if again.get("id") == first["id"]:
        raise CheckFailed(
            "the acknowledged event came again after a reconnect; "
            f'{SPEC}: "Acknowledge it once you have handled it. {{ "ack": "evt_..." }}"'
        )


@check_with_agent("redelivery", section="Acknowledging", timeout=limits.LEASE + 30.0, slow=True)
async def redelivery(session: HubSession, made: Throwaway) -> None:
    """An event not acknowledged within 30 s is sent again on the same socket."""
    text = f"redeliver {uuid.uuid4().hex[:8]}"
    async with session.hub.agent_socket(made.secret) as socket:
        await made.say(session.hub, text)
        first = await socket.wait_for(message_event(made.conversation_id, text), "the message")
        # The hub's sweeper may come a little after the lease.
        wait = limits.LEASE + max(5.0, limits.LEASE / 2)
        again = await socket.quiet(lambda f: f.get("id") == first["id"], wait)
        if again is not None:
            await socket.ack(str(again["id"]))
    if again is None:
        raise CheckFailed(
            f'the unacknowledged event was not sent again within {wait:g} s; {SPEC}: "An '
            'event that is not acknowledged within 30 seconds becomes due again and is sent again"'
        )


@check_with_agent("one-socket", section="The socket")
async def one_socket(session: HubSession, made: Throwaway) -> None:
    """A second socket of the same agent closes the first with 4001."""
    hub = session.hub
    rule = (
        f'{SPEC}: "Only one socket wins per agent. When a second connects, the older one is '
        'closed with code 4001."'
    )
    async with hub.agent_socket(made.secret) as older, hub.agent_socket(made.secret):
        try:
            code = await older.closed(wait=5.0)
        except CheckFailed as failure:
            raise CheckFailed(f"{failure} after a second socket connected; {rule}") from None
    if code != 4001:
        raise CheckFailed(f"the older socket closed with {code}; {rule}")


@check_with_agent("replaced-binding", section="The socket")
async def replaced_binding(session: HubSession, made: Throwaway) -> None:
    """Replacing the binding closes the open socket with 4002."""
    hub = session.hub
    async with hub.agent_socket(made.secret) as socket:
        await hub.ok(
            "POST",
            f"/v1/mgmt/agents/{made.agent_id}/binding",
            made.owner,
            "replacing the binding",
            json_body={"mode": "socket"},
        )
        try:
            code = await socket.closed(wait=5.0)
        except CheckFailed:
            code = None
    if code != 4002:
        what = f"closed with {code}" if code else "stayed open"
        raise CheckFailed(
            f"after the binding was replaced the socket {what}; "
            f'{SPEC}: "A binding that is revoked or replaced closes with 4002."'
        )


@check_with_agent("frame-cap", section="The socket")
async def frame_cap(session: HubSession, made: Throwaway) -> None:
    """A socket frame over 64 KiB is not taken: the hub closes the socket."""
    async with session.hub.agent_socket(made.secret) as socket:
        frame = {
            "op": "send",
            "cid": "big",
            "conversation_id": made.conversation_id,
            "text": "x" * (limits.FRAME_CAP + 1024),
        }
        await socket.send(frame)
        try:
            code = await socket.closed(wait=5.0)
        except CheckFailed:
            code = None
    if code is None:
        raise CheckFailed(
            f"a frame of {limits.FRAME_CAP // 1024 + 1} KiB left the socket open; "
            f'{SPEC}: "Frames are capped at 64 KiB."'
        )


PING_RULE = f'{SPEC}: "The server pings every 30 seconds and expects an answer within 15."'


def _closed(frame: Frame) -> str:
    """How the hub ended the socket, for a reason."""
    return f"code {frame.close_code}" if frame.close_code is not None else "no close code"


@check_with_agent(
    "socket-pings",
    section="The socket",
    timeout=2 * (limits.PING_INTERVAL + limits.PING_SLACK) + 15.0,
    slow=True,
)
async def socket_pings(session: HubSession, made: Throwaway) -> None:
    """The hub pings the agent's socket every 30 s, and an answered ping keeps it open."""
    wait = limits.PING_INTERVAL + limits.PING_SLACK
    async with session.hub.raw_agent_socket(made.secret) as socket:
        for since in ("connecting", "answering the first ping"):
            ping = await socket.next_of({PING}, wait)
            if ping is None:
                raise CheckFailed(f"no ping came within {wait:g} s of {since}; {PING_RULE}")
            if ping.opcode == CLOSE:
                raise CheckFailed(
                    f"the hub closed the socket ({_closed(ping)}) within {wait:g} s of {since}, "
                    f"before a ping; {PING_RULE}"
                )
            await socket.send(PONG, ping.payload)


@check_with_agent(
    "socket-ping-timeout",
    section="The socket",
    timeout=limits.PING_INTERVAL + limits.PONG_WAIT + limits.PING_SLACK + 15.0,
    slow=True,
)
async def socket_ping_timeout(session: HubSession, made: Throwaway) -> None:
    """A socket that never answers the hub's pings is closed within 30 + 15 s."""
    wait = limits.PING_INTERVAL + limits.PONG_WAIT + limits.PING_SLACK
    deadline = time.monotonic() + wait
    pings = 0
    async with session.hub.raw_agent_socket(made.secret) as socket:
        while (left := deadline - time.monotonic()) > 0:
            frame = await socket.next_of({PING}, left)
            if frame is None:
                break
            if frame.opcode == PING:
                pings += 1
            elif pings:
                return  # closed, its pings unanswered
            else:
                raise CheckFailed(
                    f"the hub closed the socket ({_closed(frame)}) before any ping; {PING_RULE}"
                )
    if pings == 0:
        raise CheckFailed(
            f"no ping came within {wait:g} s, and the socket stayed open; {PING_RULE}"
        )
    unanswered = "1 ping" if pings == 1 else f"{pings} pings"
    raise CheckFailed(
        f"the socket stayed open for {wait:g} s though {unanswered} went unanswered; {PING_RULE}"
    )


async def _crowd(session: HubSession, made: Throwaway, count: int) -> None:
    """At least `count` events due for `made`'s agent: on a development hub, fresh people join
    and each sends a burst (one person may not send that many at once)."""
    if not session.dev:
        raise CheckSkipped(
            f"needs {count} events, more than one person may send at once: a development hub"
        )
    sent = 0
    while sent < count:
        chat = await make_joined(session, made)
        sent += 1  # the join is an event
        for _ in range(min(limits.PERSON_BURST, count - sent)):
            await chat.say(session.hub, f"crowd {sent}")
            sent += 1


async def make_joined(session: HubSession, made: Throwaway) -> Throwaway:
    """A fresh development person joins `made`'s agent by a code; their chat."""
    person = Party.person(None)
    minted = await session.hub.ok(
        "POST", f"/v1/mgmt/agents/{made.agent_id}/pair-tokens", made.owner, "a code", json_body={}
    )
    accepted = await session.hub.ok(
        "POST", f"/v1/client/pair/{minted['code']}/accept", person, "accepting the code"
    )
    conversation = str(accepted["conversation"]["id"])
    return Throwaway(made.owner, person, made.agent_id, made.secret, conversation)


@check_with_agent("push-backlog", section="The socket; Acknowledging", timeout=60.0)
async def push_backlog(session: HubSession, made: Throwaway) -> None:
    """More than one lease (100) of missed events all arrive on connect, unacknowledged."""
    await _crowd(session, made, limits.LEASE_BATCH + 3)
    expected = await all_events(session, made)
    pushed: list[str] = []

    def new_event(frame: dict[str, Any]) -> bool:
        fresh = "type" in frame and str(frame.get("id")) not in pushed
        if fresh:
            pushed.append(str(frame.get("id")))
        return fresh

    async with session.hub.agent_socket(made.secret) as socket:
        while len(pushed) < len(expected):
            if await socket.quiet(new_event, limits.QUIET + 3) is None:
                break
        for event_id in pushed:
            await socket.ack(event_id)
    # The order is the catch-up checks' rule; here, that nothing missed is held back.
    if set(pushed) != set(expected):
        raise CheckFailed(
            f"{len(expected)} events were due and {len(pushed)} were pushed on connect; "
            f'{SPEC}: "events start '
            'arriving … straight away, including anything you missed while away" … "The hub '
            'leases up to 100 events at a time."'
        )
