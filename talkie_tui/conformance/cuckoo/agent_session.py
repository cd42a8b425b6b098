"""What the agent checks act on: the hub as the person sees it, the relay the agent talks
through, and the agent's process; and the waits for what the agent does in its own time."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from talkie_tui.conformance.cuckoo.agent_harness import AgentProcess, AgentRelay
from talkie_tui.conformance.cuckoo.hub import Hub, Throwaway
from talkie_tui.conformance.http import fetch
from talkie_tui.conformance.polling import poll
from talkie_tui.conformance.report import CheckFailed, CheckSkipped
from talkie_tui.conformance.wire import Answer

__all__ = ["ACK_WAIT", "ANSWER_WAIT", "CONNECT_WAIT", "POLL", "QUIET", "AgentSession"]

ANSWER_WAIT = 20.0
CONNECT_WAIT = 20.0  # the agent's process starts, then opens its socket
ACK_WAIT = 5.0  # acks come right after the work; joins and stops take none
QUIET = 3.0  # how long a second answer to a redelivered event is waited for
POLL = 0.25

Event = dict[str, Any]
T = TypeVar("T")


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

    def unless_mute(self) -> None:
        """Skip a check that needs an answer when the agent answered nothing."""
        if self.mute:
            raise CheckSkipped("the agent answered no message (see answers)")

    async def messages(self, chat: Throwaway | None = None) -> list[dict[str, Any]]:
        """The conversation as the person sees it, newest first."""
        chat = chat or self.chat
        data = await self.hub.ok("GET", chat.person_messages, chat.person, "the person's history")
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

    async def count_replies(self) -> int:
        """How many messages the agent has sent in the conversation."""
        return sum((m.get("sender") or {}).get("kind") == "agent" for m in await self.messages())

    async def replies_grow(self, before: int) -> bool:
        """True when, after a quiet while, the agent has sent more than `before` messages."""
        await asyncio.sleep(QUIET)
        self.alive()
        return await self.count_replies() > before

    async def hub_request_to(self, url: str, body: bytes, headers: dict[str, str]) -> Answer:
        """POST `body` to `url` (the agent's webhook) and return the raw answer."""
        return await fetch(self.hub.http, "POST", url, origin=url, headers=headers, content=body)

    async def until(
        self, probe: Callable[[], Awaitable[T | None]], wait: float, *, every: float = POLL
    ) -> T | None:
        """`probe()`'s first answer that is not None within `wait` s, else None; fails as soon
        as the agent's process has exited."""

        async def asked() -> T | None:
            self.alive()
            return await probe()

        return await poll(asked, wait, every)

    async def answer_to(
        self, message_id: str, chat: Throwaway | None = None, *, complete: bool = True
    ) -> dict[str, Any]:
        """Wait for the agent's (complete) answer to a person's message."""
        self.unless_mute()

        async def answer() -> dict[str, Any] | None:
            replies = await self.replies_after(message_id, chat)
            done = [m for m in replies if not complete or m.get("status") == "complete"]
            return done[-1] if done else None

        found = await self.until(answer, ANSWER_WAIT)
        if found is None:
            raise CheckFailed(f"no answer from the agent within {ANSWER_WAIT:g} s")
        return found

    async def answers_on(self, text: str, after: str, rule: str) -> None:
        """The person says `text`; fail, naming what came `after` and the rule, unanswered."""
        said = await self.chat.say(self.hub, text)
        try:
            await self.answer_to(said["id"])
        except CheckFailed as failure:
            raise CheckFailed(
                f"after {after} the next message was not answered ({failure}); {rule}"
            ) from None

    async def pushed(self, kind: str, about: Callable[[Event], bool], what: str) -> Event:
        """The first event of `kind` the hub pushed to the agent for which `about` is true."""

        async def first() -> Event | None:
            return next((e for e in self.relay.events(kind) if about(e)), None)

        event = await self.until(first, ACK_WAIT)
        if event is None:
            raise CheckFailed(f"the hub pushed no {what} (is the agent connected?)")
        return event

    async def event_of(self, message_id: str) -> str:
        """The id of the message.created event that carried a person's message."""

        def carries(event: Event) -> bool:
            return ((event.get("data") or {}).get("message") or {}).get("id") == message_id

        event = await self.pushed("message.created", carries, "event for the person's message")
        return str(event["id"])

    async def acked(self, event_id: str, times: int = 1) -> bool:
        """True once the agent acknowledged `event_id` `times` times (within the wait)."""

        async def enough() -> bool | None:
            return self.relay.acks[event_id] >= times or None

        return await self.until(enough, ACK_WAIT) is not None
