"""Files: uploaded through the hub, attached by id over HTTP only, fetched without a URL."""

from __future__ import annotations

import io
from typing import Any

import pytest
from PIL import Image

from tests.cuckoo_peer.agent import is_person_message
from tests.cuckoo_peer.person import error_of


def png(width: int = 4, height: int = 3) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 10, 10)).save(out, "PNG")
    return out.getvalue()


async def agent_upload(backend: Any, content: bytes, name: str) -> dict[str, Any]:
    answer = await backend.http.post(
        "/v1/agent/media",
        params={"name": name},
        content=content,
        headers={"Content-Type": "application/octet-stream"},
    )
    assert answer.status_code in (200, 201), answer.text
    return dict(answer.json()["media"])


async def test_the_kind_is_decided_from_the_bytes(chat_with: Any) -> None:
    chat = await chat_with(connect=False)
    media = await agent_upload(chat.backend, png(), "notes.txt")
    assert media["id"].startswith("med_")
    assert media["kind"] == "image"
    assert media["mime_type"] == "image/png"
    assert (media["width"], media["height"]) == (4, 3)
    text = await agent_upload(chat.backend, b"plain words", "picture.jpg")
    assert text["kind"] == "file"


async def test_an_agent_sends_a_file_over_http_and_the_person_fetches_it(chat_with: Any) -> None:
    chat = await chat_with()
    image = png()
    media = await agent_upload(chat.backend, image, "dot.png")
    answer = await chat.backend.post_message(
        chat.conversation_id, text="a picture", attachments=[media["id"]]
    )
    assert answer.status_code == 201, answer.text
    attachment = answer.json()["message"]["body"]["attachments"][0]
    assert attachment["media_id"] == media["id"]
    assert "url" not in attachment
    fetched = await chat.person.http.get(f"/v1/client/media/{media['id']}")
    assert fetched.status_code == 200 and fetched.content == image

    # Each file may be sent once.
    again = await chat.backend.post_message(
        chat.conversation_id, text="again", attachments=[media["id"]]
    )
    assert again.status_code in (409, 422), again.text
    error_of(again)


async def test_a_persons_file_reaches_the_agent_without_a_url(chat_with: Any) -> None:
    chat = await chat_with()
    upload = await chat.person.http.post(
        "/v1/client/media", files={"file": ("hello.txt", b"hello world", "text/plain")}
    )
    assert upload.status_code == 201, upload.text
    media_id = upload.json()["media"]["id"]
    sent = await chat.person.send(chat.conversation_id, attachments=[media_id])
    assert sent.status_code == 201, sent.text
    event = await chat.backend.wait_event(
        lambda e: is_person_message(e) and e["data"]["message"]["body"].get("attachments")
    )
    body = event["data"]["message"]["body"]
    assert "text" not in body  # omitted when empty
    [attachment] = body["attachments"]
    assert attachment["media_id"] == media_id
    assert attachment["kind"] == "file"
    assert attachment["file_name"] == "hello.txt"
    assert attachment["byte_size"] == 11
    assert not any("url" in key for key in attachment)
    fetched = await chat.backend.http.get(f"/v1/agent/media/{media_id}")
    assert fetched.status_code == 200 and fetched.content == b"hello world"


async def test_files_cannot_go_over_the_socket_or_on_a_stream(chat_with: Any) -> None:
    chat = await chat_with()
    media = await agent_upload(chat.backend, png(), "dot.png")
    reply = await chat.backend.send(chat.conversation_id, "file?", attachments=[media["id"]])
    assert reply["ok"] is False, reply
    answer = await chat.backend.post_message(
        chat.conversation_id, stream=True, attachments=[media["id"]]
    )
    assert answer.status_code == 422, answer.text
    error_of(answer)
    page = await chat.person.history(chat.conversation_id)
    assert page["messages"] == []
    # The file was not used up by the refusals.
    answer = await chat.backend.post_message(chat.conversation_id, attachments=[media["id"]])
    assert answer.status_code == 201, answer.text


async def test_at_most_ten_files_and_no_duplicates(chat_with: Any) -> None:
    chat = await chat_with(connect=False)
    ids = [(await agent_upload(chat.backend, b"file %d" % i, f"f{i}.txt"))["id"] for i in range(11)]
    answer = await chat.backend.post_message(chat.conversation_id, attachments=ids)
    assert answer.status_code == 422, answer.text
    assert error_of(answer)["code"] == "too_many_attachments"
    answer = await chat.backend.post_message(chat.conversation_id, attachments=[ids[0], ids[0]])
    assert answer.status_code == 422, answer.text
    error_of(answer)
    answer = await chat.backend.post_message(chat.conversation_id, attachments=ids[:10])
    assert answer.status_code == 201, answer.text
    assert len(answer.json()["message"]["body"]["attachments"]) == 10


async def test_another_agents_file_cannot_be_read(chat_with: Any) -> None:
    mine = await chat_with(connect=False)
    theirs = await chat_with(connect=False)
    media = await agent_upload(theirs.backend, b"private", "secret.txt")
    answer = await mine.backend.http.get(f"/v1/agent/media/{media['id']}")
    assert answer.status_code in (403, 404), answer.text
    error_of(answer)


def mp4_header() -> bytes:
    """The start of an MP4 container (an `ftyp` box), enough for a sniffer."""
    ftyp = b"ftypisom" + b"\x00\x00\x02\x00" + b"isomiso2avc1mp41"
    box = len(ftyp) + 4
    return box.to_bytes(4, "big") + ftyp + b"\x00\x00\x00\x08free" + b"\x00" * 64


async def test_kind_audio_marks_a_container_as_a_recording(chat_with: Any) -> None:
    chat = await chat_with(connect=False)
    plain = await agent_upload(chat.backend, mp4_header(), "clip.mp4")
    answer = await chat.backend.http.post(
        "/v1/agent/media",
        params={"name": "note.m4a", "kind": "audio", "duration_ms": 1500, "waveform": "3,9,40"},
        content=mp4_header(),
        headers={"Content-Type": "application/octet-stream"},
    )
    assert answer.status_code in (200, 201), answer.text
    voice = answer.json()["media"]
    assert plain["kind"] == "video", plain
    assert voice["kind"] == "audio", voice
    sent = await chat.backend.post_message(chat.conversation_id, attachments=[voice["id"]])
    assert sent.status_code == 201, sent.text
    [attachment] = sent.json()["message"]["body"]["attachments"]
    assert attachment["duration_ms"] == 1500
    assert attachment["waveform"] == [3, 9, 40]
    # The claim does not turn a picture into a recording.
    picture = await chat.backend.http.post(
        "/v1/agent/media",
        params={"name": "x.png", "kind": "audio"},
        content=png(),
        headers={"Content-Type": "application/octet-stream"},
    )
    assert picture.status_code in (200, 201, 422), picture.text
    if picture.status_code != 422:
        assert picture.json()["media"]["kind"] == "image"


async def test_a_picture_has_a_small_copy(chat_with: Any) -> None:
    chat = await chat_with(connect=False)
    media = await agent_upload(chat.backend, png(1200, 900), "big.png")
    assert media["has_thumbnail"] is True
    thumb = await chat.backend.http.get(
        f"/v1/agent/media/{media['id']}", params={"variant": "thumb"}
    )
    assert thumb.status_code == 200, thumb.text
    small = Image.open(io.BytesIO(thumb.content))
    assert max(small.size) < 1200
    full = await chat.backend.http.get(f"/v1/agent/media/{media['id']}")
    assert Image.open(io.BytesIO(full.content)).size == (1200, 900)


async def test_a_multipart_upload(chat_with: Any) -> None:
    chat = await chat_with(connect=False)
    answer = await chat.backend.http.post(
        "/v1/agent/media", files={"file": ("report.txt", b"numbers", "text/plain")}
    )
    assert answer.status_code in (200, 201), answer.text
    media = answer.json()["media"]
    assert media["file_name"] == "report.txt" and media["byte_size"] == 7


@pytest.mark.hub(file_max_bytes=1000)
async def test_an_oversized_file_is_422_file_too_large(chat_with: Any) -> None:
    chat = await chat_with(connect=False)
    answer = await chat.backend.http.post(
        "/v1/agent/media",
        params={"name": "big.bin"},
        content=b"\x01" * 2000,
        headers={"Content-Type": "application/octet-stream"},
    )
    assert answer.status_code == 422, answer.text
    assert error_of(answer)["code"] == "file_too_large"


async def test_an_unsent_upload_of_the_person_is_not_the_agents_to_read(chat_with: Any) -> None:
    chat = await chat_with(connect=False)
    upload = await chat.person.http.post(
        "/v1/client/media", files={"file": ("draft.txt", b"not yet", "text/plain")}
    )
    media_id = upload.json()["media"]["id"]
    answer = await chat.backend.http.get(f"/v1/agent/media/{media_id}")
    assert answer.status_code in (403, 404), answer.text
    error_of(answer)
