"""A person's voice note to a bridged agent is answered with a spoken voice note (espeak-ng's,
two tones without it), on the socket and on a webhook binding alike, and sent once."""

from __future__ import annotations

import io
import math
import struct
import wave
from pathlib import Path

import pytest

from talkie_tui.bridge.voice_notes import synthesize
from talkie_tui.protocol.cuckoo.voice_note import VoiceNote
from tests.bridge.conftest import Agent, Person, ServedBy, StartBridge

pytestmark = pytest.mark.slow


def spoken_tone(seconds: float) -> VoiceNote:
    rate = 16_000
    pcm = b"".join(
        struct.pack("<h", int(8000 * math.sin(2 * math.pi * 300 * i / rate)))
        for i in range(int(seconds * rate))
    )
    return VoiceNote.from_pcm(pcm, rate)


async def test_a_voice_note_is_answered_with_a_spoken_one(
    agent: Agent, owner: Person, start_bridge: StartBridge, served_by: ServedBy
) -> None:
    running = await start_bridge(agent, **await served_by(agent))
    note = spoken_tone(3.2)
    uploaded = await owner.http.post(
        "/v1/client/media", content=note.wav, params={"name": "mine.wav", **note.upload_params()}
    )
    assert uploaded.status_code == 201, uploaded.text
    sent = await owner.http.post(
        f"/v1/client/conversations/{agent.dm}/messages",
        json={"attachments": [uploaded.json()["media"]["id"]]},
    )
    assert sent.status_code == 201, sent.text
    asked = sent.json()["message"]
    [reply] = await owner.wait_agent_messages(agent.dm, lambda found: bool(found), timeout=30)
    [attachment] = reply["body"]["attachments"]
    assert (attachment["kind"], attachment["mime_type"]) == ("audio", "audio/wav")
    assert len(attachment["waveform"]) == 64 and max(attachment["waveform"]) == 100
    assert reply["reply_to"]["id"] == asked["id"]
    assert "voice note of 0:03" in reply["body"]["text"]
    wav = await owner.http.get(f"/v1/client/media/{attachment['media_id']}")
    with wave.open(io.BytesIO(wav.content)) as file:
        seconds = file.getnframes() / file.getframerate()
    assert seconds > 1.0  # espeak said the sentence (two tones would be 0.8 s)
    assert abs(attachment["duration_ms"] - seconds * 1000) <= 1
    assert any("answered with a spoken one" in line for line in running.lines)
    await running.stop()
    assert len(await owner.agent_messages(agent.dm)) == 1  # once, whatever was redelivered


async def test_without_espeak_the_answer_is_two_tones(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no speech synthesizer on it
    note = await synthesize("Hello", "en")
    assert note.duration_ms == 800 and len(note.waveform) == 64


async def test_espeak_speaks_the_agents_language() -> None:
    czech = await synthesize("Děkuji za hlasovou zprávu.", "cs")
    assert czech.duration_ms > 1000 and max(czech.waveform) == 100
