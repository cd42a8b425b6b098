"""A credential that ends takes its open socket with it: by the time the request that ended it
has answered, the socket's close frame (4002) is out, and nothing sent later reaches it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from tests.devserver.cuckoo.wire import (
    Agent,
    bearer,
    dev,
    make_agent,
    next_frame,
    person_send,
    sign_in,
)

SIGNED_OUT = 4002


def client_socket(url: str, token: str) -> Any:
    """A person's client socket with a bearer token (an async context manager)."""
    ws_url = url.replace("http://", "ws://") + "/v1/client/socket"
    return connect(ws_url, additional_headers=bearer(token))


async def frames_until_closed(socket: ClientConnection) -> tuple[list[dict[str, Any]], int]:
    """Every frame the socket still delivers, and the close code it ends with."""
    frames = []
    while True:
        try:
            text = await asyncio.wait_for(socket.recv(), 5)
        except ConnectionClosed as closed:
            assert closed.rcvd is not None, "dropped without a close frame"
            return frames, closed.rcvd.code
        frames.append(json.loads(text))


class Person:
    """A person signed in on two devices, with a DM to send into."""

    def __init__(self, http: httpx.Client, url: str, codes: dict[str, str]) -> None:
        self.http, self.url = http, url
        self.laptop = sign_in(http, url, codes, "p@example.com", "laptop")
        self.phone = sign_in(http, url, codes, "p@example.com", "phone")
        self.user_id = self.laptop["user"]["id"]
        self.agent: Agent = make_agent(http, url, owner=self.user_id)

    def say(self, text: str) -> None:
        """Send into the DM from the phone (the laptop's socket would be told)."""
        sent = person_send(self.http, self.url, self.user_id, self.agent.conversation_id, text=text)
        assert sent.is_success, sent.text


async def _after_ending(person: Person, end: Callable[[], httpx.Response]) -> None:
    async with client_socket(person.url, person.laptop["token"]) as socket:
        assert (await next_frame(socket))["type"] == "ready"
        person.say("before")
        assert (await next_frame(socket))["type"] == "message.created"
        ended = end()
        assert ended.status_code == 204, ended.text
        person.say("after")
        frames, code = await frames_until_closed(socket)
    assert frames == [] and code == SIGNED_OUT
    me = person.http.get(f"{person.url}/v1/client/me", headers=bearer(person.laptop["token"]))
    assert me.status_code == 401


@pytest.fixture
def person(signed_in: tuple[str, dict[str, str]]) -> Any:
    url, codes = signed_in
    with httpx.Client(timeout=10) as http:
        yield Person(http, url, codes)


async def test_logout_closes_the_device_socket(person: Person) -> None:
    token = person.laptop["token"]
    await _after_ending(
        person, lambda: person.http.post(f"{person.url}/v1/auth/logout", headers=bearer(token))
    )


async def test_signing_out_a_device_closes_its_socket(person: Person) -> None:
    path = f"{person.url}/v1/client/devices/{person.laptop['session']['id']}"
    await _after_ending(
        person, lambda: person.http.delete(path, headers=bearer(person.phone["token"]))
    )


async def test_signing_out_every_other_device_closes_their_sockets(person: Person) -> None:
    path = f"{person.url}/v1/client/devices"
    await _after_ending(
        person, lambda: person.http.delete(path, headers=bearer(person.phone["token"]))
    )


async def test_a_device_signed_out_past_ten_closes_its_socket(
    person: Person, signed_in: tuple[str, dict[str, str]]
) -> None:
    _, codes = signed_in

    def nine_more() -> httpx.Response:
        for n in range(9):  # the laptop is the longest unused of eleven
            sign_in(person.http, person.url, codes, "p@example.com", f"tablet {n}")
        return httpx.Response(204)

    await _after_ending(person, nine_more)


async def test_an_api_key_never_opens_a_socket_and_a_revoked_one_is_refused(
    person: Person,
) -> None:
    made = person.http.post(
        f"{person.url}/v1/client/api-keys", headers=dev(person.user_id), json={"name": "ci"}
    )
    key, key_id = made.json()["key"], made.json()["api_key"]["id"]
    with pytest.raises(InvalidStatus) as refused:
        async with client_socket(person.url, key):
            pass
    assert refused.value.response.status_code == 403
    revoked = person.http.delete(
        f"{person.url}/v1/client/api-keys/{key_id}", headers=dev(person.user_id)
    )
    assert revoked.status_code == 204
    with pytest.raises(InvalidStatus) as refused:
        async with client_socket(person.url, key):
            pass
    assert refused.value.response.status_code == 401
    mgmt = person.http.get(f"{person.url}/v1/mgmt/agents", headers=bearer(key))
    assert mgmt.status_code == 401


async def test_a_revoked_binding_closes_the_agent_socket(person: Person) -> None:
    agent = person.agent
    async with agent.socket() as socket:
        joined = await next_frame(socket)
        await socket.send(json.dumps({"ack": joined["id"]}))
        revoked = person.http.delete(
            f"{person.url}/v1/mgmt/agents/{agent.id}/binding", headers=dev(person.user_id)
        )
        assert revoked.status_code == 204
        person.say("after")
        frames, code = await frames_until_closed(socket)
    assert frames == [] and code == SIGNED_OUT


async def test_a_socket_past_its_session_gets_nothing_more(cuckoo_hub: Callable[..., str]) -> None:
    codes: dict[str, str] = {}
    url = cuckoo_hub(
        code_sink=lambda email, code: codes.__setitem__(email, code), session_seconds=3
    )
    with httpx.Client(timeout=10) as http:
        laptop = sign_in(http, url, codes, "e@example.com")
        agent = make_agent(http, url, owner=laptop["user"]["id"])
        async with client_socket(url, laptop["token"]) as socket:
            assert (await next_frame(socket))["type"] == "ready"
            while http.get(f"{url}/v1/client/me", headers=bearer(laptop["token"])).is_success:
                await asyncio.sleep(0.1)  # until the session has expired
            shown = agent.post(
                http, f"/conversations/{agent.conversation_id}/activity", {"state": "working"}
            )
            assert shown.status_code == 204, shown.text
            frames, code = await frames_until_closed(socket)
    assert frames == [] and code == SIGNED_OUT
