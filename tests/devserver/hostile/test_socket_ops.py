"""Every socket of the reference servers under hostile frames: the hub's agent socket (every op
and `ack`), the hub's client socket, and the gateway's `/v1/stream` (every frame type).

The properties: a frame is answered in the protocol's shape or ignored, never with a dropped
connection; the socket stays up and answers a normal frame afterwards; a frame over the cap
closes the socket with a close code (the hub's 1009) or is refused with an error (the
gateway's `bad_frame`), never by a drop.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from tests.devserver.cuckoo.wire import Agent, dev
from tests.devserver.hostile.kit import (
    documents,
    field_names,
    fits_a_hub_frame,
    hostile_settings,
    hub_frames,
    json_texts,
    values,
)
from tests.devserver.hostile.targets import Target
from tests.helpers import TEST_TOKEN

probes = itertools.count()
AGENT_OPS = ["send", "stream.start", "stream.delta", "stream.end", "typing", "activity", "x"]
STREAM_TYPES = ["subscribe", "unsubscribe", "ping", "pong", "event", "x"]


def ws_url(url: str, path: str) -> str:
    """The WebSocket URL of a path on a server."""
    return url.replace("http://", "ws://") + path


def receive(socket: ClientConnection) -> dict[str, Any]:
    """The next frame, or a failure that says how the socket ended."""
    try:
        text = socket.recv(timeout=10)
    except ConnectionClosed as closed:
        code = closed.rcvd.code if closed.rcvd is not None else "none (dropped)"
        raise AssertionError(f"the socket closed, close code {code}") from None
    frame: dict[str, Any] = json.loads(text)
    return frame


@st.composite
def op_frames(draw: st.DrawFn, conversation_id: str) -> str:
    """An agent-socket frame: an op (or an ack) with hostile fields, sometimes well aimed."""
    frame = draw(documents())
    op = draw(st.sampled_from(AGENT_OPS))
    aimed = draw(st.booleans())
    head = f'"op":{json.dumps(op)}' + (f',"conversation_id":"{conversation_id}"' if aimed else "")
    if draw(st.booleans()):
        head = f'"ack":{draw(values)}'
    return "{" + head + ("," + frame[1:] if frame != "{}" else "}")


# --- the hub's agent socket ------------------------------------------------------------------


@pytest.fixture(scope="module")
def agent_socket(hub: Target) -> Iterator[ClientConnection]:
    """The agent's socket, its queued events read."""
    agent: Agent = hub.extra["agent"]
    with connect(ws_url(hub.url, "/v1/agent/socket"), additional_headers=agent.headers) as socket:
        yield socket


def check_reply(frame: dict[str, Any]) -> None:
    """An agent-socket reply in the protocol's shape (events pass unchecked)."""
    if "type" in frame and "id" in frame:
        return  # an event pushed to the agent
    assert set(frame) <= {"reply_to_cid", "ok", "message", "message_id", "error"}, frame
    assert isinstance(frame["ok"], bool), frame
    if not frame["ok"]:
        assert isinstance(frame["error"]["code"], str), frame
        assert isinstance(frame["error"]["message"], str), frame


@hostile_settings(60)
@given(data=st.data())
def test_agent_socket_ops(hub: Target, agent_socket: ClientConnection, data: st.DataObject) -> None:
    ops = op_frames(hub.real_id("conversation_id")).filter(fits_a_hub_frame)
    frame = data.draw(st.one_of(ops, hub_frames))
    agent_socket.send(frame)
    probe = f"probe-{next(probes)}"
    agent_socket.send(json.dumps({"op": "probe", "cid": probe}))
    while True:
        reply = receive(agent_socket)
        check_reply(reply)
        if reply.get("reply_to_cid") == probe:
            assert reply["error"]["code"] == "unknown_op"
            break


def test_an_oversized_agent_frame_closes_with_a_code(hub: Target) -> None:
    agent: Agent = hub.extra["agent"]
    with connect(ws_url(hub.url, "/v1/agent/socket"), additional_headers=agent.headers) as socket:
        socket.send('{"op": "send", "text": "' + "x" * 70_000 + '"}')
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                socket.recv(timeout=10)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009


# --- the hub's client socket -----------------------------------------------------------------


@pytest.fixture(scope="module")
def client_socket(hub: Target) -> Iterator[ClientConnection]:
    """The agent owner's client socket, past its `ready` frame."""
    agent: Agent = hub.extra["agent"]
    with connect(ws_url(hub.url, "/v1/client/socket"), additional_headers=dev(agent.owner)) as ws:
        assert receive(ws)["type"] == "ready"
        yield ws


@hostile_settings(30)
@given(frame=st.one_of(hub_frames, st.binary(max_size=512)))
def test_client_socket_ignores_what_it_is_sent(
    hub: Target, client_socket: ClientConnection, frame: str | bytes
) -> None:
    client_socket.send(frame)
    agent: Agent = hub.extra["agent"]
    label = f"probe {next(probes)}"
    with httpx.Client(timeout=10) as http:
        shown = agent.post(
            http,
            f"/conversations/{agent.conversation_id}/activity",
            {"state": "working", "label": label},
        )
    assert shown.status_code == 204, shown.text
    while True:
        pushed = receive(client_socket)
        assert set(pushed) == {"type", "data"}, pushed
        if pushed["type"] == "activity" and pushed["data"].get("label") == label:
            break


# --- the gateway's stream --------------------------------------------------------------------


@pytest.fixture(scope="module")
def stream(gateway: Target) -> Iterator[ClientConnection]:
    """The gateway's multiplexed socket."""
    with connect(ws_url(gateway.url, f"/v1/stream?token={TEST_TOKEN}")) as socket:
        yield socket


@st.composite
def stream_frames(draw: st.DrawFn, session_id: str) -> str:
    """A stream frame: a type with hostile fields, sometimes aimed at a real session."""
    kind = draw(st.sampled_from(STREAM_TYPES))
    fields = draw(st.dictionaries(field_names, values, max_size=4))
    fields["type"] = json.dumps(kind)
    if draw(st.booleans()):
        fields.update({"channel": '"chat"', "key": json.dumps(session_id)})
    return "{" + ",".join(f"{json.dumps(k)}:{v}" for k, v in fields.items()) + "}"


@hostile_settings(60)
@given(data=st.data())
def test_stream_frames(gateway: Target, stream: ClientConnection, data: st.DataObject) -> None:
    frame = data.draw(
        st.one_of(stream_frames(gateway.real_id("session_id")), json_texts, st.binary(max_size=64))
    )
    stream.send(frame)
    stream.send('{"type": "ping"}')
    while True:
        answer = receive(stream)
        assert isinstance(answer.get("type"), str), answer
        if answer["type"] == "error":
            assert isinstance(answer["code"], str) and isinstance(answer["message"], str)
        if answer["type"] == "pong":
            break


def test_an_oversized_stream_frame_is_a_bad_frame(gateway: Target) -> None:
    with connect(ws_url(gateway.url, f"/v1/stream?token={TEST_TOKEN}"), max_size=None) as ws:
        ws.send('{"type": "ping", "pad": "' + "x" * (1024 * 1024 + 10) + '"}')
        assert receive(ws)["code"] == "bad_frame"
        ws.send('{"type": "ping"}')
        assert receive(ws)["type"] == "pong"
