"""Media: uploads (raw with `?name=`, multipart `file`), kinds from the bytes, limits,
thumbnails, who may download, attaching to messages once."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from PIL import Image

from talkie_tui.devserver.common.sniff import sniff
from talkie_tui.devserver.cuckoo.ids import new_id
from talkie_tui.devserver.cuckoo.media import clean_name
from tests.devserver.cuckoo.wire import Agent, dev, error_of, make_agent, person_send


def png(width: int = 800, height: int = 600) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(out, "PNG")
    return out.getvalue()


@pytest.fixture
def agent(http: httpx.Client, hub_url: str) -> Agent:
    return make_agent(http, hub_url)


def upload(
    http: httpx.Client, url: str, headers: dict[str, str], data: bytes, **params: Any
) -> httpx.Response:
    return http.post(f"{url}/media", headers=headers, content=data, params=params)


@pytest.mark.parametrize(
    ("data", "kind", "mime"),
    [
        (b"\xff\xd8\xff\xe0rest", "image", "image/jpeg"),
        (b"OggS\x00rest", "audio", "audio/ogg"),
        (b"\x1a\x45\xdf\xa3rest", "video", "video/webm"),
        (b"\x00\x00\x00\x18ftypisomrest", "video", "video/mp4"),
        (b"\x00\x00\x00\x18ftypM4A rest", "audio", "audio/mp4"),
        (b"%PDF-1.7", "file", "application/pdf"),
        (b"plain words", "file", "text/plain"),
        (b"RIFF\x00\x00\x00\x00WAVEfmt ", "audio", "audio/wav"),
    ],
)
def test_the_kind_comes_from_the_bytes(data: bytes, kind: str, mime: str) -> None:
    found = sniff(data)
    assert (found.kind, found.mime_type) == (kind, mime)


def test_kind_audio_marks_a_container_a_recording() -> None:
    assert sniff(b"\x1a\x45\xdf\xa3rest", claim_audio=True).kind == "audio"
    assert sniff(b"%PDF-1.7", claim_audio=True).kind == "file"


def test_an_image_upload_with_a_thumbnail(agent: Agent, http: httpx.Client) -> None:
    base = f"{agent.url}/v1/agent"
    response = upload(http, base, agent.headers, png(), name="photo.jpg")
    assert response.status_code == 201, response.text
    media = response.json()["media"]
    assert media["id"].startswith("med_") and media["kind"] == "image"
    assert media["mime_type"] == "image/png"  # what the bytes say, not the name
    assert (media["width"], media["height"], media["has_thumbnail"]) == (800, 600, True)
    assert media["file_name"] == "photo.jpg"
    full = http.get(f"{base}/media/{media['id']}", headers=agent.headers)
    assert full.status_code == 200 and full.content == png()
    thumb = http.get(
        f"{base}/media/{media['id']}", headers=agent.headers, params={"variant": "thumb"}
    )
    assert thumb.headers["content-type"] == "image/jpeg"
    assert max(Image.open(io.BytesIO(thumb.content)).size) == 480


def test_a_multipart_upload_and_a_voice_note(agent: Agent, http: httpx.Client) -> None:
    response = http.post(
        f"{agent.url}/v1/client/media",
        headers=dev(agent.owner),
        files={"file": ("note.webm", b"\x1a\x45\xdf\xa3voice", "video/webm")},
        params={"kind": "audio", "duration_ms": "1200", "waveform": "3,9,40"},
    )
    assert response.status_code == 201, response.text
    media = response.json()["media"]
    assert (media["kind"], media["file_name"]) == ("audio", "note.webm")
    assert (media["duration_ms"], media["waveform"]) == (1200, [3, 9, 40])
    bad = upload(http, f"{agent.url}/v1/client", dev(agent.owner), b"x", waveform="1,500")
    assert error_of(bad)["code"] == "invalid_waveform"


def test_files_over_their_kinds_limit(cuckoo_hub: Callable[..., str]) -> None:
    url = cuckoo_hub(image_max_bytes=1000, file_max_bytes=2000)
    with httpx.Client() as http:
        agent = make_agent(http, url)
        big_image = upload(http, f"{url}/v1/agent", agent.headers, b"\xff\xd8\xff" + b"0" * 1200)
        assert big_image.status_code == 422 and error_of(big_image)["code"] == "file_too_large"
        file_ok = upload(http, f"{url}/v1/agent", agent.headers, b"0" * 1200, name="a.txt")
        assert file_ok.status_code == 201


def test_attachments_in_messages_and_who_may_download(agent: Agent, http: httpx.Client) -> None:
    mine = upload(
        http, f"{agent.url}/v1/client", dev(agent.owner), png(40, 30), name="p.png"
    ).json()["media"]
    stranger = dev(new_id("usr"))
    assert (
        http.get(f"{agent.url}/v1/client/media/{mine['id']}", headers=stranger).status_code == 404
    )
    # Not yet sent: the agent cannot read it.
    assert (
        http.get(f"{agent.url}/v1/agent/media/{mine['id']}", headers=agent.headers).status_code
        == 404
    )
    sent = person_send(
        http, agent.url, agent.owner, agent.conversation_id, attachments=[mine["id"]]
    )
    assert sent.status_code == 201, sent.text
    [attachment] = sent.json()["message"]["body"]["attachments"]
    assert attachment["media_id"] == mine["id"] and attachment["kind"] == "image"
    assert "url" not in attachment and sent.json()["message"]["body"].get("text") is None
    event = [e for e in agent.events(http) if e["type"] == "message.created"][-1]
    assert event["data"]["message"]["body"]["attachments"][0]["media_id"] == mine["id"]
    assert (
        http.get(f"{agent.url}/v1/agent/media/{mine['id']}", headers=agent.headers).status_code
        == 200
    )
    again = person_send(
        http, agent.url, agent.owner, agent.conversation_id, attachments=[mine["id"]]
    )
    assert error_of(again)["code"] == "attachment_already_sent"
    others = upload(http, f"{agent.url}/v1/client", stranger, b"words").json()["media"]
    foreign = person_send(
        http, agent.url, agent.owner, agent.conversation_id, attachments=[others["id"]]
    )
    assert error_of(foreign)["code"] == "unknown_attachment"
    # An agent attaches its own upload over HTTP.
    doc = upload(http, f"{agent.url}/v1/agent", agent.headers, b"%PDF-1.7 x", name="r.pdf").json()[
        "media"
    ]
    reply = agent.send(http, text="Your report", attachments=[doc["id"]])
    assert reply.status_code == 201
    owner_reads = http.get(f"{agent.url}/v1/client/media/{doc['id']}", headers=dev(agent.owner))
    assert owner_reads.status_code == 200 and owner_reads.content == b"%PDF-1.7 x"


def test_file_names_are_cleaned() -> None:
    assert clean_name("../../etc/passwd") == ".._.._etc_passwd"
    assert clean_name("a\nb\x1b[31m.txt") == "a_b_[31m.txt"
    assert clean_name(None) == "file" and len(clean_name("x" * 300)) == 255


def test_pictures_over_the_pixel_limit(cuckoo_hub: Callable[..., str]) -> None:
    url = cuckoo_hub(image_max_pixels=100 * 100)
    with httpx.Client() as http:
        agent = make_agent(http, url)
        big = upload(http, f"{url}/v1/agent", agent.headers, png(200, 100))
        assert big.status_code == 422 and error_of(big)["code"] == "image_too_large"
        assert upload(http, f"{url}/v1/agent", agent.headers, png(100, 100)).status_code == 201
