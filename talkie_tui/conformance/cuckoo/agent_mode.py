"""`talkie conformance agent [--webhook] -- COMMAND ARGS…`: check a Cuckoo agent backend as a
person would, against a reference hub of talkie's own.

The hub runs in a temporary folder; an agent, its binding and a conversation are made; COMMAND
runs with `CUCKOO_HUB` (the relay in front of the hub) and `CUCKOO_SECRET` in its environment,
the convention of the hub's SDK examples. Each check says why it matters to a person.
"""

from __future__ import annotations

import asyncio
import functools
import socket
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from talkie_tui.protocol.client import make_http_client

from ..http import fetch
from ..local_server import serve_local
from ..output import Reporter
from ..report import CheckFailed, CheckSkipped
from ..suite import Check, Registry, Started, Suite, Target
from ..wire import Answer
from .agent_harness import AgentProcess, AgentRelay, ReferenceHub
from .hub import Hub, Party, Throwaway, make_throwaway

if TYPE_CHECKING:
    from ..runner import Selection

__all__ = ["AGENT_CHECKS", "AgentSession", "agent_suite", "run_agent_conformance"]

SPEC = "cuckoo-agent.md"
ANSWER_WAIT = 20.0
CONNECT_WAIT = 20.0  # the agent's process starts, then opens its socket
ACK_WAIT = 5.0  # acks come right after the work; joins and stops take none
QUIET = 3.0  # how long a second answer to a redelivered event is waited for
POLL = 0.25


@dataclass
class AgentSession:
    """The hub, the relay the agent talks through, the agent's process and the chat."""

    hub: Hub
    relay: AgentRelay
    process: AgentProcess
    chat: Throwaway
    answered: dict[str, str] = field(default_factory=dict)  # person's message id -> event id
    replies: dict[str, str] = field(default_factory=dict)  # person's message id -> reply id
    mute: bool = False  # the agent answered nothing: the checks that need an answer skip
    webhook_url: str = ""  # with --webhook: where the agent takes the hub's posts
    # Why no check can reach the agent (it never connected or listened), once one found out:
    # the checks after it skip with this reason instead of failing for the same cause.
    unreached: str | None = None
    newcomer: Throwaway | None = None  # a second person's chat, once one joined

    def alive(self) -> None:
        """Fail when the agent process has exited."""
        gone = self.process.exited
        if gone:
            raise CheckFailed(gone)

    async def messages(self, chat: Throwaway | None = None) -> list[dict[str, Any]]:
        """The conversation as the person sees it, newest first."""
        chat = chat or self.chat
        path = f"/v1/client/conversations/{chat.conversation_id}/messages"
        data = await self.hub.ok("GET", path, chat.person, "the person's history")
        return list(data["messages"])

    async def replies_after(
        self, message_id: str, chat: Throwaway | None = None
    ) -> list[dict[str, Any]]:
        """The agent's messages newer than the person's message `message_id`."""
        newer = []
        for message in await self.messages(chat):
            if message["id"] == message_id:
                break
            if (message.get("sender") or {}).get("kind") == "agent":
                newer.append(message)
        return newer

    async def answer_to(
        self, message_id: str, chat: Throwaway | None = None, *, complete: bool = True
    ) -> dict[str, Any]:
        """Wait for the agent's (complete) answer to a person's message."""
        self.unless_mute()
        deadline = time.monotonic() + ANSWER_WAIT
        while time.monotonic() < deadline:
            self.alive()
            replies = await self.replies_after(message_id, chat)
            done = [m for m in replies if not complete or m.get("status") == "complete"]
            if done:
                return done[-1]
            await asyncio.sleep(POLL)
        raise CheckFailed(f"no answer from the agent within {ANSWER_WAIT:g} s")

    async def count_replies(self) -> int:
        """How many messages the agent has sent in the conversation."""
        return sum((m.get("sender") or {}).get("kind") == "agent" for m in await self.messages())

    async def hub_request_to(self, url: str, body: bytes, headers: dict[str, str]) -> Answer:
        """POST `body` to `url` (the agent's webhook) and return the raw answer."""
        return await fetch(self.hub.http, "POST", url, origin=url, headers=headers, content=body)

    def unless_mute(self) -> None:
        """Skip a check that needs an answer when the agent answered nothing."""
        if self.mute:
            raise CheckSkipped("the agent answered no message (see answers)")

    async def event_of(self, message_id: str) -> str:
        """The id of the message.created event that carried a person's message."""
        deadline = time.monotonic() + ACK_WAIT
        while time.monotonic() < deadline:
            for event in self.relay.events("message.created"):
                if ((event.get("data") or {}).get("message") or {}).get("id") == message_id:
                    return str(event["id"])
            await asyncio.sleep(POLL)
        raise CheckFailed(
            "the hub pushed no event for the person's message (is the agent connected?)"
        )

    async def acked(self, event_id: str, times: int = 1) -> bool:
        """True once the agent acknowledged `event_id` `times` times (within the wait)."""
        deadline = time.monotonic() + ACK_WAIT
        while time.monotonic() < deadline:
            if self.relay.acks[event_id] >= times:
                return True
            self.alive()
            await asyncio.sleep(POLL)
        return False


_REGISTRY: Registry[AgentSession] = Registry()
AGENT_CHECKS: list[Check[AgentSession]] = _REGISTRY.checks


def agent_check(
    name: str,
    *,
    section: str,
    why: str,
    timeout: float = 45.0,
    registry: Registry[AgentSession] = _REGISTRY,
) -> Callable[
    [Callable[[AgentSession], Awaitable[None]]], Callable[[AgentSession], Awaitable[None]]
]:
    """Register an agent check; its failure ends with why it matters to a person."""

    def register(
        function: Callable[[AgentSession], Awaitable[None]],
    ) -> Callable[[AgentSession], Awaitable[None]]:
        @functools.wraps(function)
        async def checked(session: AgentSession) -> None:
            if session.unreached is not None:
                raise CheckSkipped(session.unreached)
            try:
                session.alive()
                await function(session)
            except CheckFailed as failure:
                raise CheckFailed(f"{failure} — why it matters: {why}") from None

        registry.check(name, section=f"{SPEC} {section}", timeout=timeout)(checked)
        return checked

    return register


@agent_check(
    "connects",
    section="The socket",
    why="until the backend holds its socket, everything a person sends waits unanswered.",
)
async def connects(session: AgentSession) -> None:
    """The agent opens its socket with the binding secret."""
    deadline = time.monotonic() + CONNECT_WAIT
    while session.relay.connections == 0:
        session.alive()
        if time.monotonic() > deadline:
            session.unreached = "the agent never opened its socket (see connects)"
            raise CheckFailed(
                f"the agent did not open $CUCKOO_HUB/v1/agent/socket within "
                f'{CONNECT_WAIT:g} s; {SPEC}: "Connect to wss://<hub>/v1/agent/socket with the '
                'binding secret in an Authorization header"'
            )
        await asyncio.sleep(POLL)


@agent_check(
    "answers",
    section="Events; Sending a message",
    why="a person who writes and gets no answer believes the agent is broken.",
)
async def answers(session: AgentSession) -> None:
    """A person's message is answered."""
    said = await session.chat.say(session.hub, "Hello! This is a conformance check by talkie.")
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


@agent_check(
    "acks",
    section="Acknowledging",
    why="an event left unacknowledged comes again every 30 seconds, and the hub soon tells "
    "people the agent is away.",
)
async def acks(session: AgentSession) -> None:
    """The event of an answered message is acknowledged."""
    _, event_id = await _first_answered(session)
    if not await session.acked(event_id):
        raise CheckFailed(
            f'the event {event_id} was answered but never acknowledged; {SPEC}: "Each event you '
            'receive carries an id. Acknowledge it once you have handled it."'
        )


@agent_check(
    "acks-after-work",
    section="Acknowledging",
    why="an agent that acknowledges on receipt and then crashes mid-reply loses the person's "
    "message for good; acknowledged after the work, the hub sends it again.",
)
async def acks_after_work(session: AgentSession) -> None:
    """The event is acknowledged after its answer is complete, not on receipt."""
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


@agent_check(
    "redelivery",
    section="Acknowledging",
    why="after a network blip the hub sends a message again, and the person must not get the "
    "same answer twice.",
)
async def redelivery(session: AgentSession) -> None:
    """The same event delivered again is acknowledged and not answered a second time."""
    message_id, event_id = await _first_answered(session)
    before = len(await session.replies_after(message_id))
    acked = session.relay.acks[event_id]
    await session.relay.redeliver(event_id)
    await asyncio.sleep(QUIET)
    session.alive()
    after = len(await session.replies_after(message_id))
    rule = (
        f'{SPEC}: "delivery is at least once and your handlers must tolerate seeing the same '
        'event twice"'
    )
    if after > before:
        raise CheckFailed(f"the agent answered the redelivered event {event_id} again; {rule}")
    if acked and session.relay.acks[event_id] <= acked:
        raise CheckFailed(f"the redelivered event {event_id} was not acknowledged again; {rule}")


@agent_check(
    "button-tap",
    section="Buttons",
    why="a button that does nothing when tapped is a broken promise to the person.",
)
async def button_tap(session: AgentSession) -> None:
    """A button the agent offered can be tapped, and the tap is answered."""
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
    path = f"/v1/client/conversations/{session.chat.conversation_id}/messages"
    tap = await session.hub.ok(
        "POST",
        path,
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


@agent_check(
    "joined",
    section="Events (conversation.joined)",
    why="every new person starts with a join, and an agent that stumbles on it never answers them.",
)
async def joined(session: AgentSession) -> None:
    """A second person joins: conversation.joined is acknowledged and their message answered."""
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
    join = await _event_about(session, "conversation.joined", chat)
    if not await session.acked(str(join["id"])):
        raise CheckFailed(
            f'conversation.joined was never acknowledged; {SPEC}: "There is no endpoint that '
            'lists conversations. Learn them from conversation.joined and keep your own list."'
        )
    said = await chat.say(session.hub, "Hi, I just joined.")
    await session.answer_to(said["id"], chat)


async def _event_about(session: AgentSession, kind: str, chat: Throwaway) -> dict[str, Any]:
    """The first event of `kind` pushed about `chat`'s conversation (within the wait)."""
    deadline = time.monotonic() + ACK_WAIT
    while time.monotonic() < deadline:
        for event in session.relay.events(kind):
            conversation = (event.get("data") or {}).get("conversation") or {}
            if conversation.get("id") == chat.conversation_id:
                return event
        await asyncio.sleep(POLL)
    raise CheckFailed(f"the hub pushed no {kind} (is the agent connected?)")


@agent_check(
    "left",
    section="Events (conversation.left)",
    why="a person who blocks an agent has said no; the agent must take it and keep serving "
    "everyone else.",
)
async def left(session: AgentSession) -> None:
    """A person blocks the agent: conversation.left is acknowledged and others are answered."""
    chat = session.newcomer
    if chat is None:
        raise CheckSkipped("no second person joined (see joined)")
    await session.hub.ok(
        "POST", f"/v1/client/agents/{chat.agent_id}/block", chat.person, "blocking the agent"
    )
    rule = f'{SPEC}: "conversation.left … Treat it as final and stop sending."'
    event = await _event_about(session, "conversation.left", chat)
    if not await session.acked(str(event["id"])):
        raise CheckFailed(f"conversation.left was never acknowledged; {rule}")
    session.alive()
    said = await session.chat.say(session.hub, "Are you still with me?")
    try:
        await session.answer_to(said["id"])
    except CheckFailed as failure:
        raise CheckFailed(
            f"after another person left, the next message was not answered ({failure}); {rule}"
        ) from None


@agent_check(
    "stop",
    section="Streaming (stop.requested, notes/cuckoo.md)",
    why="a person who presses stop expects the writing to stop, and their next message to be "
    "answered.",
    timeout=60.0,
)
async def stop(session: AgentSession) -> None:
    """stop.requested during a stream: the agent acks it, keeps running and answers on."""
    session.unless_mute()
    said = await session.chat.say(session.hub, "Please write a long, detailed answer.")
    deadline = time.monotonic() + ANSWER_WAIT
    streaming = None
    while streaming is None and time.monotonic() < deadline:
        session.alive()
        replies = await session.replies_after(said["id"])
        streaming = next((m for m in replies if m.get("status") == "streaming"), None)
        if streaming is None and any(m.get("status") == "complete" for m in replies):
            raise CheckSkipped("the agent answered without streaming, so there was nothing to stop")
        await asyncio.sleep(0.05)
    if streaming is None:
        raise CheckFailed(f"no answer from the agent within {ANSWER_WAIT:g} s")
    path = f"/v1/client/conversations/{session.chat.conversation_id}/stop"
    await session.hub.ok("POST", path, session.chat.person, "pressing stop", json_body={})
    deadline = time.monotonic() + ACK_WAIT
    stops: list[dict[str, Any]] = []
    while not stops and time.monotonic() < deadline:
        stops = session.relay.events("stop.requested")
        await asyncio.sleep(POLL)
    rule = (
        "notes/cuckoo.md: \"The person's POST …/stop finishes the reply where it stands (stopped "
        '+ truncated) and sends the agent stop.requested; later appends get 409 stopped"'
    )
    if not stops or not await session.acked(str(stops[-1]["id"])):
        raise CheckFailed(f"stop.requested was not acknowledged; {rule}")
    await asyncio.sleep(1.0)  # later appends are refused now: the agent must take it calmly
    session.alive()
    again = await session.chat.say(session.hub, "Thanks, that is enough.")
    try:
        await session.answer_to(again["id"])
    except CheckFailed as failure:
        raise CheckFailed(
            f"after the stop the next message was not answered ({failure}); {rule}"
        ) from None


@agent_check(
    "reconnect",
    section="The socket",
    why="connections drop, and an agent that does not come back goes silent for everyone.",
)
async def reconnect(session: AgentSession) -> None:
    """After its socket drops (not 4001/4002), the agent reconnects and answers again."""
    before = session.relay.connections
    await session.relay.drop()
    deadline = time.monotonic() + ANSWER_WAIT
    while session.relay.connections == before:
        gone = session.process.exited
        if gone:
            raise CheckFailed(f"{gone} when its socket dropped (1012), instead of reconnecting")
        if time.monotonic() > deadline:
            raise CheckFailed(
                f"the agent did not reconnect within {ANSWER_WAIT:g} s of a dropped socket "
                f'(close 1012); {SPEC}: 4001 and 4002 are final, "Neither is worth retrying" — '
                "other closes are"
            )
        await asyncio.sleep(POLL)
    said = await session.chat.say(session.hub, "Are you still there?")
    await session.answer_to(said["id"])


def agent_checks(webhook: bool) -> list[Check[AgentSession]]:
    """The checks of an agent on a socket binding, or (`webhook`) on a webhook binding."""
    if webhook:
        from .webhook_checks import WEBHOOK_CHECKS

        return WEBHOOK_CHECKS
    return AGENT_CHECKS


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@asynccontextmanager
async def _hub_for_agent(folder: Path, hub: str | None) -> AsyncIterator[str]:
    """The given development hub, or a reference hub of talkie's own in `folder`."""
    if hub is not None:
        yield hub
        return
    reference = ReferenceHub(folder)
    try:
        yield await reference.start()
    finally:
        await reference.stop()


def agent_suite(
    command: list[str], *, webhook: bool = False, hub: str | None = None
) -> Suite[AgentSession]:
    """The agent checks, started by running `command` against a hub of talkie's own (or the
    development hub at `hub`: each run makes an agent, binding and people of its own).

    With `webhook` the binding posts to `http://127.0.0.1:$PORT/webhook`: the agent gets `PORT`
    and `CUCKOO_WEBHOOK_URL` in its environment beside `CUCKOO_HUB` and `CUCKOO_SECRET`.
    """

    @asynccontextmanager
    async def start(target: Target) -> AsyncIterator[Started[AgentSession]]:
        del target
        with tempfile.TemporaryDirectory(prefix="talkie-conformance-") as folder:
            process = AgentProcess(command, Path(folder) / "agent.log")
            environment: dict[str, str] = {}
            webhook_url = ""
            if webhook:
                port = _free_port()
                webhook_url = f"http://127.0.0.1:{port}/webhook"
                environment |= {"PORT": str(port), "CUCKOO_WEBHOOK_URL": webhook_url}
            async with _hub_for_agent(Path(folder), hub) as base:
                relay = AgentRelay(base)
                try:
                    async with serve_local(relay.app()) as url, make_http_client() as http:
                        hub_api = Hub(base, http)
                        owner, person = Party.person(None), Party.person(None)
                        mode = "webhook" if webhook else "socket"
                        chat = await make_throwaway(
                            hub_api, owner, person, mode=mode, webhook_url=webhook_url or None
                        )
                        environment |= {"CUCKOO_HUB": url, "CUCKOO_SECRET": chat.secret}
                        await process.start(environment)
                        session = AgentSession(
                            hub_api, relay, process, chat, webhook_url=webhook_url
                        )
                        yield Started(session, "agent " + " ".join(command))
                        await process.stop()  # before the relay goes: the agent sees no outage
                finally:
                    await process.stop()

    return Suite("cuckoo agent", agent_checks(webhook), start)


async def run_agent_conformance(
    command: list[str],
    *,
    webhook: bool = False,
    selection: Selection | None = None,
    as_json: bool = False,
    junit: Path | None = None,
    reporter: Reporter | None = None,
    hub: str | None = None,
) -> int:
    """Run the agent checks on `command`; the exit status (0 when none failed)."""
    from ..runner import run_suite

    suite = agent_suite(command, webhook=webhook, hub=hub)
    reporter = reporter or Reporter(suite.protocol, as_json=as_json, junit=junit)
    return await run_suite(suite, Target("agent"), reporter, selection=selection)
