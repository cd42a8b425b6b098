"""Files (upload, download, kinds and limits, no way out of the store), attachments on a turn,
and transcription with the fake voice provider's speech detection."""

from __future__ import annotations

import os
from collections.abc import Callable

import httpx
import numpy as np
import pytest

from talkie_tui.devserver.minara.voice import SCRIPT
from tests.devserver.minara.wire import (
    run_turn,
    session_detail,
    start_turn,
    text_of,
    wait_until_idle,
    wav,
)
from tests.helpers import AUTH, TEST_TOKEN

MIB = 1024 * 1024


def _upload(
    http: httpx.Client, url: str, name: str, data: bytes, media_type: str | None = None
) -> httpx.Response:
    part = (name, data, media_type) if media_type else (name, data)
    return http.post(f"{url}/v1/files", files={"file": part}, headers=AUTH)


def test_upload_then_download_gives_the_same_bytes(http: httpx.Client, fast_url: str) -> None:
    data = os.urandom(3000) + b"\r\n--boundary\r\n\r\n" + bytes(range(256))
    response = _upload(http, fast_url, "chart.png", data, "image/png")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["key"].startswith("chat/files/") and body["key"].endswith("chart.png")
    assert body["url"] == "/v1/files/" + body["key"]
    assert (body["mediaType"], body["size"], body["kind"]) == ("image/png", len(data), "image")
    assert body["uploaded_at"].endswith("Z")
    served = http.get(f"{fast_url}{body['url']}", headers=AUTH)
    assert served.status_code == 200 and served.content == data
    assert served.headers["content-type"] == "image/png"
    assert served.headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize(
    ("name", "media_type", "kind"),
    [
        ("report.pdf", "application/pdf", "pdf"),
        ("data.csv", "text/csv", "spreadsheet"),
        ("notes.txt", None, "text"),
        ("letter.docx", None, "office"),
        ("photo.jpg", None, "image"),
    ],
)
def test_the_kind_comes_from_the_media_type(
    http: httpx.Client, fast_url: str, name: str, media_type: str | None, kind: str
) -> None:
    response = _upload(http, fast_url, name, b"content", media_type)
    assert response.status_code == 200 and response.json()["kind"] == kind


def test_a_file_of_no_known_kind_or_empty_is_refused(http: httpx.Client, fast_url: str) -> None:
    assert _upload(http, fast_url, "tool.exe", b"MZ", "application/x-msdownload").status_code == 400
    assert _upload(http, fast_url, "empty.txt", b"", "text/plain").status_code == 400
    no_field = http.post(f"{fast_url}/v1/files", files={"other": ("a.txt", b"x")}, headers=AUTH)
    assert no_field.status_code == 400 and "`file`" in no_field.json()["error"]["message"]
    not_form = http.post(f"{fast_url}/v1/files", content=b"raw", headers=AUTH)
    assert not_form.status_code == 400


def test_an_image_over_5_mib_is_413(http: httpx.Client, fast_url: str) -> None:
    assert _upload(http, fast_url, "ok.png", b"x" * (5 * MIB), "image/png").status_code == 200
    response = _upload(http, fast_url, "big.png", b"x" * (5 * MIB + 1), "image/png")
    assert response.status_code == 413
    error = response.json()["error"]
    assert error["code"] == "file_too_large"
    assert "big.png" in error["message"] and "5 MiB" in error["message"]


def test_another_file_over_20_mib_is_413(http: httpx.Client, fast_url: str) -> None:
    big = b"x" * (20 * MIB + 1)
    response = _upload(http, fast_url, "big.pdf", big, "application/pdf")
    assert response.status_code == 413 and "20 MiB" in response.json()["error"]["message"]


def test_a_body_declared_far_over_the_limit_is_refused_unread(
    http: httpx.Client, minara_gateway: Callable[..., str]
) -> None:
    url = minara_gateway(auth_token=TEST_TOKEN, file_max_bytes=1000)
    response = _upload(http, url, "a.pdf", b"x" * 200_000, "application/pdf")
    assert response.status_code == 413


@pytest.mark.parametrize(
    "path",
    [
        "/v1/files/../../etc/passwd",
        "/v1/files/%2e%2e/%2e%2e/etc/passwd",
        "/v1/files/..%2f..%2fetc%2fpasswd",
        "/v1/files//etc/passwd",
        "/v1/files/chat/files/x/../../../shared.sqlite3",
        "/v1/files/shared.sqlite3",
    ],
)
def test_no_key_reaches_outside_the_store(http: httpx.Client, fast_url: str, path: str) -> None:
    response = http.get(f"{fast_url}{path}", headers=AUTH)
    assert response.status_code == 404
    assert b"root:" not in response.content and b"SQLite" not in response.content


def test_attachments_are_acknowledged_and_kept_on_the_user_row(
    http: httpx.Client, fast_url: str
) -> None:
    image = _upload(http, fast_url, "chart.png", b"p" * 48213, "image/png").json()
    notes = _upload(http, fast_url, "notes.txt", b"n" * 1500, "text/plain").json()
    attachments = [
        {
            "key": image["key"],
            "filename": "chart.png",
            "media_type": "image/png",
            "size": 48213,
            "kind": "image",
        },
        {"key": notes["key"]},
    ]
    session_id, events = run_turn(http, fast_url, "minara-test:echo done", attachments=attachments)
    text = text_of(events)
    assert text.startswith("I received chart.png, 48 kB\nI received notes.txt, 2 kB\n")
    assert text.endswith("done")
    user = wait_until_idle(http, fast_url, session_id)["messages"][0]
    assert user["attachments"] == [
        {
            "key": image["key"],
            "filename": "chart.png",
            "media_type": "image/png",
            "size": 48213,
            "kind": "image",
            "url": image["url"],
        },
        {
            "key": notes["key"],
            "filename": "notes.txt",
            "media_type": "text/plain",
            "size": 1500,
            "kind": "text",
            "url": notes["url"],
        },
    ]


def test_the_demo_agent_acknowledges_attachments_too(http: httpx.Client, fast_url: str) -> None:
    image = _upload(http, fast_url, "chart.png", b"p" * 48213, "image/png").json()
    _, events = run_turn(http, fast_url, "", attachments=[{"key": image["key"]}])
    assert text_of(events).startswith("I received chart.png, 48 kB")


def test_attachment_limits_on_the_turn_request(http: httpx.Client, fast_url: str) -> None:
    key = _upload(http, fast_url, "a.txt", b"a", "text/plain").json()["key"]
    nine = {"message": "hi", "attachments": [{"key": key}] * 9}
    response = http.post(f"{fast_url}/v1/chat/stream", json=nine, headers=AUTH)
    assert response.status_code == 400 and "8" in response.json()["error"]["message"]
    eight = {"message": "minara-test:echo ok", "attachments": [{"key": key}] * 8}
    assert http.post(f"{fast_url}/v1/chat/stream", json=eight, headers=AUTH).status_code == 200
    unknown = {"message": "hi", "attachments": [{"key": "chat/files/none"}]}
    response = http.post(f"{fast_url}/v1/chat/stream", json=unknown, headers=AUTH)
    assert response.status_code == 400 and response.json()["error"]["code"] == "unknown_attachment"
    bad_kind = {"message": "hi", "attachments": [{"key": key, "kind": "video"}]}
    assert http.post(f"{fast_url}/v1/chat/stream", json=bad_kind, headers=AUTH).status_code == 400


def test_a_pdf_declared_as_an_image_over_5_mib_is_413(http: httpx.Client, fast_url: str) -> None:
    key = _upload(http, fast_url, "scan.pdf", b"x" * (6 * MIB), "application/pdf").json()["key"]
    body = {"message": "hi", "attachments": [{"key": key, "kind": "image"}]}
    response = http.post(f"{fast_url}/v1/chat/stream", json=body, headers=AUTH)
    assert response.status_code == 413


def _tone(seconds: float = 0.5, rate: int = 16_000) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return (np.sin(2 * np.pi * 440 * t) * 0.3 * 32767).astype(np.int16)


def _transcribe(http: httpx.Client, url: str, data: bytes, query: str = "") -> httpx.Response:
    return http.post(
        f"{url}/v1/voice/transcribe{query}",
        files={"file": ("voice.wav", data, "audio/wav")},
        headers=AUTH,
    )


def test_speech_is_heard_as_the_next_script_line_and_silence_as_nothing(
    http: httpx.Client, minara_gateway: Callable[..., str]
) -> None:
    url = minara_gateway(auth_token=TEST_TOKEN)
    silence = _transcribe(http, url, wav(np.zeros(16_000, dtype=np.int16)))
    assert silence.json() == {"ok": True, "text": "", "file_key": None}
    first = _transcribe(http, url, wav(_tone())).json()
    second = _transcribe(http, url, wav(_tone(), rate=48_000)).json()
    assert (first["text"], second["text"]) == (SCRIPT[0], SCRIPT[1])
    assert first["text"] == "show me my portfolio" and first["file_key"] is None


def test_persist_keeps_the_recording_as_a_file(http: httpx.Client, fast_url: str) -> None:
    recording = wav(_tone())
    body = _transcribe(http, fast_url, recording, "?persist").json()
    assert body["ok"] is True and body["text"] in SCRIPT
    served = http.get(f"{fast_url}/v1/files/{body['file_key']}", headers=AUTH)
    assert served.status_code == 200 and served.content == recording
    # The key goes with the transcript as voice_input_key, and the row keeps it.
    answer = start_turn(http, fast_url, body["text"], voice_input_key=body["file_key"])
    user = session_detail(http, fast_url, answer["session_id"])["messages"][0]
    assert user["voice_input_key"] == body["file_key"]
    plain = _transcribe(http, fast_url, recording, "?persist=false").json()
    assert plain["file_key"] is None


def test_what_is_not_a_wav_is_a_400(http: httpx.Client, fast_url: str) -> None:
    response = _transcribe(http, fast_url, b"OggS not a wav at all")
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_audio"
    bad_language = _transcribe(http, fast_url, wav(_tone()), "?language=english")
    assert bad_language.status_code == 400
    unknown_key = {"message": "hi", "voice_input_key": "chat/files/none"}
    response = http.post(f"{fast_url}/v1/chat/stream", json=unknown_key, headers=AUTH)
    assert response.status_code == 400
