"""The hub as the checks drive it: raw HTTP as a person, an owner or an agent, a throwaway agent
with its binding and a conversation, and the agent's socket frame by frame."""

from __future__ import annotations

import asyncio
import json
import os
import time
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from talkie_tui.conformance.http import fetch
from talkie_tui.conformance.raw_socket import RawSocket, open_raw_socket
from talkie_tui.conformance.report import CheckFailed, show
from talkie_tui.conformance.sockets import close_code
from talkie_tui.conformance.wire import Answer
from talkie_tui.protocol.talkie.client import USER_AGENT

__all__ = ["AgentSocket", "Hub", "Party", "Throwaway", "dev_user"]

EVENT_WAIT = 10.0
AGENT_SOCKET = "/v1/agent/socket"
CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"


def dev_user() -> str:
    """A fresh `usr_…` id for the development hub's `X-Dev-User` header (26 Crockford chars)."""
    value = int.from_bytes(os.urandom(16), "big")
    return "usr_" + "".join(CROCKFORD[(value >> (5 * i)) & 31] for i in range(26))


@dataclass(frozen=True)
class Party:
    """Who a request is from: headers that say so (a person's session or dev id, a binding)."""

    name: str
    headers: Mapping[str, str]

    @classmethod
    def person(cls, token: str | None) -> Party:
        """A person signed in with `token`, or a fresh development user without one."""
        if token:
            return cls("person", {"Authorization": f"Bearer {token}"})
        return cls("person", {"X-Dev-User": dev_user()})

    @classmethod
    def agent(cls, secret: str) -> Party:
        """A running backend, by its binding secret."""
        return cls("agent", {"Authorization": f"Bearer {secret}"})


NOBODY = Party("nobody", {})


class Hub:
    """Raw requests to one hub."""

    def __init__(self, base: str, http: httpx.AsyncClient) -> None:
        self.base = base.rstrip("/")
        self.http = http

    async def request(
        self,
        method: str,
        path: str,
        party: Party = NOBODY,
        *,
        json_body: object = None,
        content: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        params: Mapping[str, str] | None = None,
    ) -> Answer:
        """Send a request as `party` and return the raw answer."""
        return await fetch(
            self.http,
            method,
            self.base + path,
            origin=self.base,
            headers={**party.headers, **(headers or {})},
            params=params,
            json_body=json_body,
            content=content,
        )

    async def ok(self, method: str, path: str, party: Party, what: str, **kwargs: Any) -> Any:
        """A request that must succeed (2xx): its JSON body."""
        answer = await self.request(method, path, party, **kwargs)
        if not 200 <= answer.status < 300:
            raise CheckFailed(f"{what}: {method} {path} answered {answer.describe()}")
        return answer.json()

    def socket_url(self, path: str) -> str:
        """`ws(s)://hub/path`."""
        return "ws" + self.base[4:] + path if self.base.startswith("http") else self.base + path

    def agent_socket(self, secret: str) -> AbstractAsyncContextManager[AgentSocket]:
        """The agent's socket, opened with the binding secret (a refusal fails the check)."""
        return self._socket(AGENT_SOCKET, {"Authorization": f"Bearer {secret}"})

    def raw_agent_socket(self, secret: str) -> AbstractAsyncContextManager[RawSocket]:
        """The agent's socket frame by frame, pings included (none is answered by itself)."""
        headers = {"Authorization": f"Bearer {secret}", "User-Agent": USER_AGENT}
        return open_raw_socket(self.socket_url(AGENT_SOCKET), headers)

    def person_socket(self, person: Party) -> AbstractAsyncContextManager[AgentSocket]:
        """A person's live updates (`/v1/client/socket`), as their app holds it."""
        return self._socket("/v1/client/socket", person.headers)

    @asynccontextmanager
    async def _socket(self, path: str, headers: Mapping[str, str]) -> AsyncIterator[AgentSocket]:
        try:
            connection = await connect(
                self.socket_url(path),
                additional_headers={**headers, "User-Agent": USER_AGENT},
                ping_interval=None,
                open_timeout=10,
            )
        except InvalidStatus as refused:
            body = refused.response.body.decode("utf-8", "replace")
            raise CheckFailed(
                f"GET {path} answered HTTP {refused.response.status_code} {show(body)}"
            ) from None
        except (OSError, TimeoutError) as error:
            raise CheckFailed(f"GET {path} did not open: {error}") from None
        socket = AgentSocket(connection)
        try:
            yield socket
        finally:
            await connection.close()


@dataclass
class AgentSocket:
    """One hub socket (an agent's, or a person's): JSON frames, in the order they came."""

    connection: ClientConnection
    frames: list[dict[str, Any]] = field(default_factory=list)
    close_code: int | None = None

    async def _next(self, wait: float) -> dict[str, Any] | None:
        try:
            async with asyncio.timeout(wait):
                text = await self.connection.recv()
        except TimeoutError:
            return None
        except ConnectionClosed as closed:
            self.close_code = closed.rcvd.code if closed.rcvd is not None else None
            raise CheckFailed(f"the hub closed the socket (code {self.close_code})") from None
        frame = json.loads(text)
        if isinstance(frame, dict):
            self.frames.append(frame)
            return frame
        return None

    async def wait_for(
        self, wanted: Callable[[dict[str, Any]], bool], what: str, wait: float = EVENT_WAIT
    ) -> dict[str, Any]:
        """The next frame for which `wanted` is true (other frames are kept, not answered)."""
        deadline = time.monotonic() + wait
        while (left := deadline - time.monotonic()) > 0:
            frame = await self._next(left)
            if frame is not None and wanted(frame):
                return frame
        raise CheckFailed(f"no {what} on the socket within {wait:g} s")

    async def quiet(
        self, wanted: Callable[[dict[str, Any]], bool], wait: float
    ) -> dict[str, Any] | None:
        """The first frame for which `wanted` is true within `wait` seconds, else None."""
        deadline = time.monotonic() + wait
        while (left := deadline - time.monotonic()) > 0:
            frame = await self._next(left)
            if frame is not None and wanted(frame):
                return frame
        return None

    async def send(self, frame: Mapping[str, Any]) -> None:
        """Send one frame."""
        await self.connection.send(json.dumps(frame))

    async def ack(self, event_id: str) -> None:
        """Acknowledge an event."""
        await self.send({"ack": event_id})

    async def closed(self, wait: float = EVENT_WAIT) -> int | None:
        """The close code once the hub closes this socket."""
        return await close_code(self.connection, wait)


def message_event(
    conversation_id: str, text: str | None = None
) -> Callable[[dict[str, Any]], bool]:
    """A predicate: a `message.created` event of this conversation (with this text)."""

    def wanted(frame: dict[str, Any]) -> bool:
        data = frame.get("data")
        if frame.get("type") != "message.created" or not isinstance(data, dict):
            return False
        conversation = data.get("conversation") or {}
        body = (data.get("message") or {}).get("body") or {}
        return conversation.get("id") == conversation_id and (
            text is None or body.get("text") == text
        )

    return wanted


@dataclass
class Throwaway:
    """An agent made for the checks: its owner, binding secret and a person's conversation."""

    owner: Party
    person: Party
    agent_id: str
    secret: str
    conversation_id: str

    @property
    def agent(self) -> Party:
        """The agent's side of the HTTP API."""
        return Party.agent(self.secret)

    @property
    def person_messages(self) -> str:
        """The person's path to the conversation's messages."""
        return f"/v1/client/conversations/{self.conversation_id}/messages"

    async def say(self, hub: Hub, text: str, **fields: Any) -> dict[str, Any]:
        """The person sends `text`; the message the hub stored."""
        data = await hub.ok(
            "POST",
            self.person_messages,
            self.person,
            "the person's message",
            json_body={"text": text, "idempotency_key": uuid.uuid4().hex, **fields},
        )
        return dict(data["message"])

    async def person_sends(self, hub: Hub, body: dict[str, Any]) -> Answer:
        """The person sends `body` under a fresh idempotency key; the raw answer."""
        body = {**body, "idempotency_key": uuid.uuid4().hex}
        return await hub.request("POST", self.person_messages, self.person, json_body=body)


async def make_throwaway(
    hub: Hub, owner: Party, person: Party, *, mode: str = "socket", webhook_url: str | None = None
) -> Throwaway:
    """Create an agent, its binding and a conversation of `person` with it (via a code)."""
    handle = f"conformance-{uuid.uuid4().hex[:12]}"
    made = await hub.ok(
        "POST",
        "/v1/mgmt/agents",
        owner,
        "creating a throwaway agent",
        json_body={"handle": handle, "display_name": "Conformance Agent"},
    )
    agent_id = str((made.get("agent") or made)["id"])
    binding: dict[str, Any] = {"mode": mode}
    if webhook_url is not None:
        binding["webhook_url"] = webhook_url
    bound = await hub.ok(
        "POST", f"/v1/mgmt/agents/{agent_id}/binding", owner, "binding the agent", json_body=binding
    )
    minted = await hub.ok(
        "POST", f"/v1/mgmt/agents/{agent_id}/pair-tokens", owner, "a pairing code", json_body={}
    )
    accepted = await hub.ok(
        "POST", f"/v1/client/pair/{minted['code']}/accept", person, "accepting the code"
    )
    return Throwaway(
        owner, person, agent_id, str(bound["secret"]), str(accepted["conversation"]["id"])
    )
