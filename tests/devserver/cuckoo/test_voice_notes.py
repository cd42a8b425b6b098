"""Voice notes on the hub: an audio upload with its length and waveform, checked as the notes
say (kind from the bytes, 64 values from 0 to 100, at most ten minutes, 16 MiB of audio), then
sent and read back by the agent with the same record."""

from __future__ import annotations

import math
import struct

import httpx
import pytest

from talkie_tui.protocol.cuckoo.voice_note import MAX_BYTES, MAX_SECONDS, VoiceNote
from tests.devserver.cuckoo.wire import Agent, dev, error_of, make_agent, person_send


@pytest.fixture
def agent(http: httpx.Client, hub_url: str) -> Agent:
    return make_agent(http, hub_url)


def tone(seconds: float, rate: int = 16_000) -> bytes:
    """A 440 Hz tone getting louder, as mono 16-bit PCM."""
    count = int(seconds * rate)
    return b"".join(
        struct.pack("<h", int(12_000 * i / count * math.sin(2 * math.pi * 440 * i / rate)))
        for i in range(count)
    )


def post(http: httpx.Client, agent: Agent, data: bytes, **params: str) -> httpx.Response:
    return http.post(
        f"{agent.url}/v1/client/media",
        headers=dev(agent.owner),
        content=data,
        params={"name": "note.wav", **params},
    )


def test_a_voice_note_is_uploaded_sent_and_read_back(agent: Agent, http: httpx.Client) -> None:
    note = VoiceNote.from_pcm(tone(1.5))
    assert note.duration_ms == 1500 and len(note.waveform) == 64
    assert note.waveform[-1] == 100 and note.waveform[0] < note.waveform[-1]
    response = post(http, agent, note.wav, **note.upload_params())
    assert response.status_code == 201, response.text
    media = response.json()["media"]
    assert (media["kind"], media["mime_type"]) == ("audio", "audio/wav")
    assert media["duration_ms"] == 1500 and media["waveform"] == list(note.waveform)
    sent = person_send(
        http, agent.url, agent.owner, agent.conversation_id, attachments=[media["id"]]
    )
    assert sent.status_code == 201, sent.text
    [attachment] = sent.json()["message"]["body"]["attachments"]
    assert attachment["duration_ms"] == 1500 and attachment["waveform"] == list(note.waveform)
    event = [e for e in agent.events(http) if e["type"] == "message.created"][-1]
    [seen] = event["data"]["message"]["body"]["attachments"]
    assert (seen["kind"], seen["duration_ms"]) == ("audio", 1500)
    assert seen["waveform"] == list(note.waveform)
    bytes_back = agent.get(http, f"/media/{media['id']}")
    assert bytes_back.content == note.wav


@pytest.mark.parametrize(
    ("params", "code"),
    [
        ({"waveform": ",".join(["50"] * 65)}, "invalid_waveform"),  # 65 values
        ({"waveform": "3,101,40"}, "invalid_waveform"),  # over 100
        ({"waveform": "3,-1,40"}, "invalid_waveform"),
        ({"waveform": "3,,40"}, "invalid_waveform"),
        ({"waveform": "loud"}, "invalid_waveform"),
        ({"duration_ms": "600001"}, "invalid_duration"),  # over ten minutes
        ({"duration_ms": "-5"}, "invalid_duration"),
        ({"duration_ms": "1.5"}, "invalid_duration"),
    ],
)
def test_a_voice_notes_facts_have_the_notes_shape(
    agent: Agent, http: httpx.Client, params: dict[str, str], code: str
) -> None:
    response = post(http, agent, VoiceNote.from_pcm(tone(0.1)).wav, **params)
    assert response.status_code == 422 and error_of(response)["code"] == code


def test_ten_minutes_is_the_longest(agent: Agent, http: httpx.Client) -> None:
    wav = VoiceNote.from_pcm(tone(0.1)).wav
    response = post(http, agent, wav, duration_ms="600000", waveform=",".join(["100"] * 64))
    assert response.status_code == 201, response.text


def test_the_kind_comes_from_the_bytes_not_the_claim(agent: Agent, http: httpx.Client) -> None:
    """A document claimed as a recording stays a file, and cannot carry a waveform or a length;
    a WAV is audio with or without the claim."""
    facts = {"duration_ms": "7000", "waveform": "3,9,40"}
    not_audio = post(http, agent, b"%PDF-1.7 a report", kind="audio", waveform="3,9,40")
    assert error_of(not_audio)["code"] == "invalid_waveform"
    picture = post(http, agent, b"\xff\xd8\xff\xe0rest", duration_ms="7000")
    assert error_of(picture)["code"] == "invalid_duration"
    plain = post(http, agent, VoiceNote.from_pcm(tone(0.1)).wav, **facts)
    assert plain.status_code == 201 and plain.json()["media"]["kind"] == "audio"


def test_a_recording_over_16_mib_is_refused(agent: Agent, http: httpx.Client) -> None:
    """What talkie records fits (`MAX_SECONDS`); a second more of WAV would not."""
    fits = 44 + MAX_SECONDS * 32_000
    assert fits <= MAX_BYTES < fits + 32_000
    too_big = b"RIFF\x00\x00\x00\x00WAVEfmt " + bytes(MAX_BYTES)
    response = post(http, agent, too_big, duration_ms="600000")
    assert response.status_code == 422 and error_of(response)["code"] == "file_too_large"
