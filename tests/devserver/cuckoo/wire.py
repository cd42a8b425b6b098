"""Raw HTTP and WebSocket steps of the hub tests, written with httpx and websockets only."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect

from talkie_tui.devserver.cuckoo.ids import new_id


def dev(user_id: str) -> dict[str, str]:
    """Headers of a dev-mode person."""
    return {"X-Dev-User": user_id}


def bearer(token: str) -> dict[str, str]:
    """An Authorization header."""
    return {"Authorization": f"Bearer {token}"}


def error_of(response: httpx.Response) -> dict[str, Any]:
    """The error envelope of a response (checking it has a request id)."""
    error: dict[str, Any] = response.json()["error"]
    assert error["request_id"]
    return error


@dataclass
class Agent:
    """An agent made through the management API, with its owner's DM and binding secret."""

    url: str
    owner: str
    id: str
    handle: str
    conversation_id: str
    secret: str

    @property
    def headers(self) -> dict[str, str]:
        """The backend's credential."""
        return bearer(self.secret)

    def get(self, http: httpx.Client, path: str, **kwargs: Any) -> httpx.Response:
        """GET on /v1/agent as this agent."""
        return http.get(f"{self.url}/v1/agent{path}", headers=self.headers, **kwargs)

    def post(
        self, http: httpx.Client, path: str, body: Any = None, **kwargs: Any
    ) -> httpx.Response:
        """POST JSON on /v1/agent as this agent."""
        return http.post(f"{self.url}/v1/agent{path}", headers=self.headers, json=body, **kwargs)

    def send(self, http: httpx.Client, **body: Any) -> httpx.Response:
        """Send into the owner's DM."""
        return self.post(http, f"/conversations/{self.conversation_id}/messages", body)

    def events(self, http: httpx.Client, since: str | None = None) -> list[dict[str, Any]]:
        """Every event so far (oldest first)."""
        params = {"since": since} if since else {}
        response = self.get(http, "/events", params=params)
        assert response.status_code == 200, response.text
        events: list[dict[str, Any]] = response.json()["events"]
        return events

    def socket(self, **kwargs: Any) -> Any:
        """A websockets connection to the agent socket (an async context manager)."""
        ws_url = self.url.replace("http://", "ws://") + "/v1/agent/socket"
        return connect(ws_url, additional_headers=self.headers, **kwargs)


def make_agent(
    http: httpx.Client,
    url: str,
    *,
    owner: str | None = None,
    mode: str = "socket",
    webhook_url: str | None = None,
    handle: str | None = None,
    schedules: bool = False,
) -> Agent:
    """Create an agent (its owner's DM opens; `schedules`: it runs schedules) and give it a
    binding."""
    owner = owner or new_id("usr")
    handle = handle or "bot-" + new_id("agt")[-8:]
    made: dict[str, Any] = {
        "handle": handle,
        "display_name": "Test Bot",
        "description": "for tests",
    }
    if schedules:
        made["supports_schedules"] = True
    response = http.post(f"{url}/v1/mgmt/agents", headers=dev(owner), json=made)
    assert response.status_code == 201, response.text
    agent = response.json()["agent"]
    binding: dict[str, Any] = {"mode": mode}
    if webhook_url is not None:
        binding["webhook_url"] = webhook_url
    response = http.post(
        f"{url}/v1/mgmt/agents/{agent['id']}/binding", headers=dev(owner), json=binding
    )
    assert response.status_code == 201, response.text
    return Agent(
        url=url,
        owner=owner,
        id=agent["id"],
        handle=handle,
        conversation_id=dm_with(http, url, owner, agent["id"]),
        secret=response.json()["secret"],
    )


def dm_with(http: httpx.Client, url: str, person: str, agent_id: str) -> str:
    """The id of a person's DM with an agent, as the person's conversation list shows it."""
    response = http.get(f"{url}/v1/client/conversations", headers=dev(person))
    assert response.status_code == 200, response.text
    for conversation in response.json()["conversations"]:
        if any(p["id"] == agent_id for p in conversation["participants"]):
            conversation_id: str = conversation["id"]
            return conversation_id
    raise AssertionError(f"{person} has no DM with {agent_id}")


def person_send(
    http: httpx.Client, url: str, user: str, conversation_id: str, **body: Any
) -> httpx.Response:
    """A person's POST …/messages."""
    return http.post(
        f"{url}/v1/client/conversations/{conversation_id}/messages", headers=dev(user), json=body
    )


async def next_frame(socket: ClientConnection, timeout: float = 5.0) -> dict[str, Any]:
    """The next JSON frame of a socket."""
    import asyncio

    text = await asyncio.wait_for(socket.recv(), timeout)
    frame: dict[str, Any] = json.loads(text)
    return frame


async def frame_where(
    socket: ClientConnection, key: str, value: Any, timeout: float = 5.0
) -> dict[str, Any]:
    """The next frame whose `key` is `value` (earlier ones are skipped)."""
    import asyncio

    async def find() -> dict[str, Any]:
        while True:
            frame = await next_frame(socket, timeout)
            if frame.get(key) == value:
                return frame

    return await asyncio.wait_for(find(), timeout)


def sign_in(
    http: httpx.Client, url: str, codes: dict[str, str], email: str, device: str = "laptop"
) -> dict[str, Any]:
    """Sign in by e-mail code (the code read from `codes`): the verify answer."""
    assert http.post(f"{url}/v1/auth/email/start", json={"email": email}).status_code == 204
    response = http.post(
        f"{url}/v1/auth/email/verify",
        json={"email": email, "code": codes[email.lower()], "device_name": device},
    )
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer
