"""JSON nested 50,000 deep, a 5,000-digit number and a lone surrogate escape are refused with
each protocol's own error on HTTP routes, and as an error reply on sockets that stay up."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx
import pytest
from websockets.asyncio.client import connect

from tests.devserver.cuckoo.wire import dev, frame_where, make_agent, next_frame, person_send
from tests.devserver.hostile.payloads import DEEP_FRAME, bad_documents
from tests.helpers import TEST_TOKEN

JSON = {"Content-Type": "application/json"}


def cases(field: str) -> list[object]:
    """The bad documents of `field` as parameters named by their label (not their bytes)."""
    return [pytest.param(label, body, id=label) for label, body in bad_documents(field).items()]


@pytest.mark.parametrize(("label", "body"), cases("email"))
def test_the_hub_refuses_it_before_sign_in(
    cuckoo_hub: Callable[..., str], label: str, body: str
) -> None:
    url = cuckoo_hub()
    response = httpx.post(f"{url}/v1/auth/email/start", content=body, headers=JSON)
    assert response.status_code == 422, (label, response.text)
    assert response.json()["error"]["code"] == "invalid_json"


@pytest.mark.parametrize(("label", "body"), cases("text"))
def test_the_hub_refuses_it_on_a_send(
    cuckoo_hub: Callable[..., str], label: str, body: str
) -> None:
    url = cuckoo_hub()
    with httpx.Client(timeout=10) as http:
        agent = make_agent(http, url)
        path = f"{url}/v1/client/conversations/{agent.conversation_id}/messages"
        response = http.post(path, content=body, headers={**JSON, **dev(agent.owner)})
        assert response.status_code == 422, (label, response.text)
        assert response.json()["error"]["code"] == "invalid_json"
        assert person_send(http, url, agent.owner, agent.conversation_id, text="hi").is_success


async def test_the_agent_socket_answers_a_bad_frame_and_stays_up(
    cuckoo_hub: Callable[..., str],
) -> None:
    url = cuckoo_hub()
    with httpx.Client(timeout=10) as http:
        agent = make_agent(http, url)
    async with agent.socket() as socket:
        await socket.send(DEEP_FRAME)
        refused = await frame_where(socket, "ok", False)
        assert refused["ok"] is False and refused["error"]["code"] == "invalid_json"
        # A send with a lone surrogate is answered by its cid: the backend does not resend it.
        bad_send = '{"op": "send", "cid": "c1", "conversation_id": "%s", "text": "\\ud800"}'
        await socket.send(bad_send % agent.conversation_id)
        reply = await frame_where(socket, "ok", False)
        assert reply["reply_to_cid"] == "c1" and reply["ok"] is False, reply
        assert reply["error"]["code"] == "invalid_json"
        good = {"op": "send", "cid": "c2", "conversation_id": agent.conversation_id, "text": "ok"}
        await socket.send(json.dumps(good))
        assert (await frame_where(socket, "reply_to_cid", "c2"))["ok"] is True


@pytest.mark.parametrize("path", ["/v1/chat/stream", "/v1/sessions"])
@pytest.mark.parametrize(("label", "body"), cases("message"))
def test_the_gateway_answers_400(gateway_url: str, path: str, label: str, body: str) -> None:
    headers = {**JSON, "Authorization": f"Bearer {TEST_TOKEN}"}
    response = httpx.post(f"{gateway_url}{path}", content=body, headers=headers)
    assert response.status_code == 400, (label, response.text)
    assert response.json()["error"]["code"] == "invalid_request"


async def test_the_gateway_stream_answers_bad_frame_and_stays_up(gateway_url: str) -> None:
    ws_url = gateway_url.replace("http://", "ws://") + f"/v1/stream?token={TEST_TOKEN}"
    async with connect(ws_url) as socket:
        for body in bad_documents("type").values():
            await socket.send(body)
            frame = await next_frame(socket)
            assert frame["type"] == "error" and frame["code"] == "bad_frame", frame
        await socket.send('{"type": "ping"}')
        assert (await next_frame(socket))["type"] == "pong"


@pytest.mark.parametrize(("label", "body"), cases("threadId"))
def test_the_talkie_server_answers_400(server_url: str, label: str, body: str) -> None:
    headers = {**JSON, "Authorization": f"Bearer {TEST_TOKEN}"}
    response = httpx.post(f"{server_url}/api/talkie/run", content=body, headers=headers)
    assert response.status_code == 400, (label, response.text)
    assert response.json()["error"]["code"] == "invalid_request"
