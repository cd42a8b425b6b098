"""What the hub checks share: the session they act in, their registry, the error envelope,
and the agent's steps (a stream, an append, an upload) several checks take."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from talkie_tui.conformance.cuckoo.hub import Hub, Party, Throwaway, make_throwaway
from talkie_tui.conformance.http import error_object
from talkie_tui.conformance.report import CheckFailed, show
from talkie_tui.conformance.suite import Registry
from talkie_tui.conformance.wire import Answer

SPEC = "cuckoo-agent.md"


@dataclass
class HubSession:
    """The hub, the owner and person the checks act as, and the throwaway agents made."""

    hub: Hub
    owner: Party
    person: Party
    made: list[Throwaway] = field(default_factory=list)

    @property
    def dev(self) -> bool:
        """A development hub: anyone may be a fresh person (`X-Dev-User`)."""
        return "X-Dev-User" in self.person.headers

    async def throwaway(self) -> Throwaway:
        """A new agent with a socket binding and a conversation with the person."""
        made = await make_throwaway(self.hub, self.owner, self.person)
        self.made.append(made)
        return made

    async def agent_sends(
        self,
        *,
        json_body: object = None,
        content: bytes | None = None,
        content_type: str | None = None,
    ) -> Answer:
        """The raw answer to a new throwaway agent's send (a body the checks may make odd)."""
        made = await self.throwaway()
        return await self.hub.request(
            "POST",
            messages_path(made.conversation_id),
            made.agent,
            json_body=json_body,
            content=content,
            headers=None if content_type is None else {"Content-Type": content_type},
        )


REGISTRY: Registry[HubSession] = Registry()


def check(
    name: str, *, section: str, timeout: float = 30.0, slow: bool = False
) -> Callable[[Callable[[HubSession], Awaitable[None]]], Callable[[HubSession], Awaitable[None]]]:
    """Register a hub check under `name`; the package orders them."""
    return REGISTRY.check(name, section=f"{SPEC} {section}", timeout=timeout, slow=slow)


def check_with_agent(
    name: str, *, section: str, timeout: float = 30.0, slow: bool = False
) -> Callable[
    [Callable[[HubSession, Throwaway], Awaitable[None]]], Callable[[HubSession], Awaitable[None]]
]:
    """Register a hub check that acts through a throwaway agent of its own (made first)."""

    def register(
        function: Callable[[HubSession, Throwaway], Awaitable[None]],
    ) -> Callable[[HubSession], Awaitable[None]]:
        @functools.wraps(function)
        async def checked(session: HubSession) -> None:
            await function(session, await session.throwaway())

        return check(name, section=section, timeout=timeout, slow=slow)(checked)

    return register


ENVELOPE_RULE = (
    f'{SPEC}: "Every failure has the same envelope. {{ "error": {{ "code", "message", "field", '
    '"request_id" }} }}"'
)


def expect_error(answer: Answer, status: int, code: str | None, what: str) -> dict[str, Any]:
    """Require this status, the error envelope, and (when given) this code."""
    if answer.status in (400, 413) and status not in (400, 413):
        raise CheckFailed(
            f'{what}: expected HTTP {status}, got {answer.describe()}; {SPEC}: "There is no 400 '
            'and no 413"'
        )
    error = error_object(answer, status, what, ENVELOPE_RULE)
    if code is not None and error["code"] != code:
        raise CheckFailed(f"{what}: error.code is {show(error['code'])}, not {show(code)}")
    return dict(error)


def messages_path(conversation_id: str) -> str:
    """The agent's path to a conversation's messages."""
    return f"/v1/agent/conversations/{conversation_id}/messages"


async def start_stream(hub: Hub, made: Throwaway) -> str:
    """The agent starts an empty stream; its message id."""
    started = await hub.ok(
        "POST",
        messages_path(made.conversation_id),
        made.agent,
        "starting a stream",
        json_body={"stream": True},
    )
    return str(started["message"]["id"])


async def append_text(hub: Hub, made: Throwaway, message_id: str, text: str) -> Answer:
    """The agent appends to its stream; the raw answer."""
    path = f"/v1/agent/messages/{message_id}/append"
    return await hub.request("POST", path, made.agent, json_body={"text": text})


PNG = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f"
    b"\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00"
    b"\x00IEND\xaeB`\x82"
)


async def upload(session: HubSession, made: Throwaway, content: bytes, name: str) -> Answer:
    """The agent uploads `content` as raw bytes named `name`; the raw answer."""
    return await session.hub.request(
        "POST",
        "/v1/agent/media",
        made.agent,
        content=content,
        params={"name": name},
        headers={"Content-Type": "application/octet-stream"},
    )


async def upload_png(session: HubSession, made: Throwaway) -> str:
    """A tiny PNG uploaded by the agent; its media id."""
    answer = await upload(session, made, PNG + uuid.uuid4().bytes, "dot.png")
    data = answer.json()
    if answer.status not in (200, 201) or not isinstance(data, dict):
        raise CheckFailed(f"uploading a PNG answered {answer.describe()}")
    return str(data["media"]["id"])
