"""Streams: seen growing on the person's socket, complete in history; the start must be empty."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.cuckoo_peer.agent import AgentBackend, is_person_message
from tests.cuckoo_peer.person import error_of

PIECES = ["Once ", "upon ", "a time."]


async def stream_reply(backend: AgentBackend, event: dict[str, Any]) -> None:
    if not is_person_message(event):
        return
    message = event["data"]["message"]
    started = await backend.stream_start(
        event["data"]["conversation"]["id"], reply_to=message["id"]
    )
    assert started["ok"], started
    assert started["message"]["status"] == "streaming"
    message_id = started["message"]["id"]
    for piece in PIECES:
        await backend.stream_delta(message_id, piece)
    ended = await backend.stream_end(message_id, quick_replies=[{"label": "More"}])
    assert ended["ok"], ended


async def test_a_socket_stream_grows_on_the_client_socket_and_lands_in_history(
    chat_with: Any,
) -> None:
    chat = await chat_with(stream_reply)
    watch = await chat.person.socket()
    try:
        await watch.wait_frame(lambda f: f.get("type") == "ready")
        sent = await chat.person.say(chat.conversation_id, "tell me a story")
        completed = await watch.wait_frame(
            lambda f: (
                f.get("type") == "message.completed"
                and f["data"]["message"]["sender"]["kind"] == "agent"
            )
        )
        message_id = completed["data"]["message"]["id"]
        started = [
            f for f in watch.of_type("message.started") if f["data"]["message"]["id"] == message_id
        ]
        assert len(started) == 1, watch.frames
        assert started[0]["data"]["conversation_id"] == chat.conversation_id
        assert started[0]["data"]["message"]["status"] == "streaming"
        deltas = [
            f["data"]["text"]
            for f in watch.of_type("message.delta")
            if f["data"]["message_id"] == message_id
        ]
        assert deltas == PIECES
        order = [
            f["type"]
            for f in watch.frames
            if f.get("data", {}).get("message_id") == message_id
            or f.get("data", {}).get("message", {}).get("id") == message_id
        ]
        assert order == ["message.started", *["message.delta"] * 3, "message.completed"], order
        done = completed["data"]["message"]
        assert done["status"] == "complete"
        assert done["body"]["text"] == "".join(PIECES)
        assert done["body"]["quick_replies"] == [{"label": "More"}]
        assert done["reply_to"]["id"] == sent["id"]
        # The person's own message came over the socket too.
        await watch.wait_frame(
            lambda f: (
                f.get("type") == "message.created" and f["data"]["message"]["id"] == sent["id"]
            )
        )
    finally:
        await watch.close()

    in_history = await chat.person.message(chat.conversation_id, message_id)
    assert in_history["status"] == "complete"
    assert in_history["body"]["text"] == "Once upon a time."
    assert in_history["truncated"] is False


async def test_a_stream_over_http(chat_with: Any) -> None:
    chat = await chat_with()
    backend = chat.backend
    started = await backend.post_message(chat.conversation_id, stream=True)
    assert started.status_code == 201, started.text
    message = started.json()["message"]
    assert message["status"] == "streaming"
    for piece in PIECES:
        answer = await backend.append(message["id"], piece)
        assert answer.status_code == 204, answer.text
    finished = await backend.finish(
        message["id"], buttons=[[{"id": "again", "label": "Again", "style": "primary"}]]
    )
    assert finished.status_code == 200, finished.text
    done = finished.json()["message"]
    assert done["status"] == "complete"
    assert done["body"]["text"] == "Once upon a time."
    assert done["body"]["buttons"] == [[{"id": "again", "label": "Again", "style": "primary"}]]

    # Appending to a finished stream is 409 not_streaming.
    late = await backend.append(message["id"], " The end.")
    assert late.status_code == 409, late.text
    assert error_of(late)["code"] == "not_streaming"
    in_history = await chat.person.message(chat.conversation_id, message["id"])
    assert in_history["body"]["text"] == "Once upon a time."


async def test_a_stream_start_with_content_is_refused(chat_with: Any) -> None:
    chat = await chat_with()
    backend = chat.backend
    for extra in (
        {"text": "not yet"},
        {"buttons": [[{"id": "x", "label": "X"}]]},
        {"quick_replies": [{"label": "No"}]},
    ):
        answer = await backend.post_message(chat.conversation_id, stream=True, **extra)
        assert answer.status_code == 422, (extra, answer.text)
        error_of(answer)
    # And over the socket: a start that carries text is refused (only empty starts).
    reply = await backend.request(
        {"op": "stream.start", "conversation_id": chat.conversation_id, "text": "early"}
    )
    assert reply["ok"] is False, reply
    page = await chat.person.history(chat.conversation_id)
    assert page["messages"] == []


async def test_appending_to_a_stream_that_is_not_yours_is_409(
    chat_with: Any,
) -> None:
    mine = await chat_with()
    theirs = await chat_with()
    started = await theirs.backend.post_message(theirs.conversation_id, stream=True)
    message_id = started.json()["message"]["id"]
    answer = await mine.backend.append(message_id, "intrusion")
    assert answer.status_code == 409, answer.text
    assert error_of(answer)["code"] == "not_streaming"


async def test_the_person_stops_a_stream(chat_with: Any) -> None:
    chat = await chat_with()
    backend = chat.backend
    started = await backend.post_message(chat.conversation_id, stream=True)
    message_id = started.json()["message"]["id"]
    assert (await backend.append(message_id, "Going on and on")).status_code == 204
    stopped = await chat.person.stop(chat.conversation_id)
    assert stopped.status_code == 200, stopped.text
    assert [m["id"] for m in stopped.json()["stopped"]] == [message_id]
    in_history = await chat.person.message(chat.conversation_id, message_id)
    assert in_history["status"] == "complete"
    assert in_history["body"]["text"] == "Going on and on"
    late = await backend.append(message_id, " and on")
    assert late.status_code == 409, late.text
    error_of(late)


# Deliberately beyond the spec (which answers every append to a finished stream 409
# not_streaming, and names exactly three event types): issue 13 asks for "a stop from the person
# (`stop.requested`, later appends refused)" and says the hub's SDK relies on "the
# `stop.requested` event"; notes/cuckoo.md (the public hub) has "`stop.requested`: `{conversation,
# message_id|null}` ... By then the reply has already been finished (`stopped` + `truncated`),
# and later appends get `409 stopped`", and "Append errors: `not_streaming` (409), `stopped`
# (409)". So these two tests check the chosen behaviour; the rest of what they check is the
# spec's.
async def test_appending_to_a_stopped_stream_is_409_stopped(chat_with: Any) -> None:
    chat = await chat_with()
    started = await chat.backend.post_message(chat.conversation_id, stream=True)
    message_id = started.json()["message"]["id"]
    assert (await chat.backend.append(message_id, "Going")).status_code == 204
    assert (await chat.person.stop(chat.conversation_id)).status_code == 200
    in_history = await chat.person.message(chat.conversation_id, message_id)
    assert in_history["status"] == "complete"  # finished
    late = await chat.backend.append(message_id, " on")
    assert late.status_code == 409, late.text
    assert error_of(late)["code"] == "stopped"  # the spec's not_streaming, made specific
    assert (await chat.person.message(chat.conversation_id, message_id))["body"]["text"] == "Going"


async def test_a_stop_brings_the_agent_stop_requested_and_nothing_else_new(
    chat_with: Any,
) -> None:
    chat = await chat_with()
    backend = chat.backend
    started = await backend.stream_start(chat.conversation_id)
    message_id = started["message"]["id"]
    await backend.stream_delta(message_id, "Going")
    assert (await chat.person.stop(chat.conversation_id)).status_code == 200
    await chat.person.say(chat.conversation_id, "after the stop")
    await backend.wait_event(lambda e: is_person_message(e))
    stop = await backend.wait_event(lambda e: e.get("type") == "stop.requested")
    assert set(stop) == {"id", "type", "created_at", "agent_id", "data"}  # the same envelope
    assert stop["agent_id"] == chat.agent["id"]
    assert stop["data"]["conversation"]["id"] == chat.conversation_id
    assert stop["data"]["message_id"] == message_id  # the reply it stopped
    assert {e["type"] for e in backend.received} <= {
        "message.created",
        "conversation.joined",
        "conversation.left",
        "stop.requested",
    }, [e["type"] for e in backend.received]


@pytest.mark.hub(stream_max_seconds=2.0, stream_idle_seconds=60.0)
async def test_a_stream_open_too_long_is_finished_from_its_buffer(chat_with: Any) -> None:
    chat = await chat_with()
    backend = chat.backend
    started = await backend.post_message(chat.conversation_id, stream=True)
    message_id = started.json()["message"]["id"]
    sent: list[str] = []
    for i in range(40):
        answer = await backend.append(message_id, f"{i} ")
        if answer.status_code != 204:
            assert answer.status_code == 409, answer.text
            assert error_of(answer)["code"] == "not_streaming"
            break
        sent.append(f"{i} ")
        await asyncio.sleep(0.25)
    else:
        raise AssertionError("the stream stayed open for 10 s")
    in_history = await chat.person.message(chat.conversation_id, message_id)
    assert in_history["status"] == "complete"
    assert in_history["body"]["text"].strip() == "".join(sent).strip()


async def test_finishing_a_stream_that_is_not_yours_is_404_stream_not_found(
    chat_with: Any,
) -> None:
    mine = await chat_with(connect=False)
    theirs = await chat_with(connect=False)
    started = await theirs.backend.post_message(theirs.conversation_id, stream=True)
    answer = await mine.backend.finish(started.json()["message"]["id"])
    assert answer.status_code == 404, answer.text
    assert error_of(answer)["code"] == "stream_not_found"
    in_history = await theirs.person.message(
        theirs.conversation_id, started.json()["message"]["id"]
    )
    assert in_history["status"] == "streaming"


async def test_files_cannot_be_attached_to_a_stream_at_its_end(chat_with: Any) -> None:
    chat = await chat_with(connect=False)
    backend = chat.backend
    upload = await backend.http.post(
        "/v1/agent/media",
        params={"name": "a.txt"},
        content=b"words",
        headers={"Content-Type": "application/octet-stream"},
    )
    media_id = upload.json()["media"]["id"]
    started = await backend.post_message(chat.conversation_id, stream=True)
    message_id = started.json()["message"]["id"]
    assert (await backend.append(message_id, "text")).status_code == 204
    refused = await backend.finish(message_id, attachments=[media_id])
    assert refused.status_code == 422, refused.text
    error_of(refused)
    in_history = await chat.person.message(chat.conversation_id, message_id)
    assert "attachments" not in in_history["body"]
