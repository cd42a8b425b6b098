"""`talkie ask` on a hub whose agent answers with a voice note: the note is a line with its
length, and `--json` prints the hub's media record of it (kind, length, waveform)."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from talkie_tui.commands.ask import ask
from talkie_tui.protocol.cuckoo.voice_note import VoiceNote
from tests.backends.cuckoo.conftest import Hub, hub, on_message
from tests.cuckoo_peer.agent import AgentBackend
from tests.cuckoo_peer.voice_notes import WAVEFORM, send_voice_note

pytestmark = pytest.mark.slow


__all__ = ["hub"]  # the reference hub fixture, shared with the hub backend tests


async def answer_with_a_note(peer: AgentBackend, event: dict[str, Any], text: str) -> None:
    await send_voice_note(peer, event["data"]["conversation"]["id"], seconds=7.4)


def test_a_voice_notes_length_is_rounded_to_the_second() -> None:
    assert VoiceNote.from_pcm(bytes(2 * 16_000 * 7 + 6_400)).duration_ms == 7200


async def test_ask_prints_a_voice_note_and_json_its_media_record(hub: Hub) -> None:
    person = await hub.person()
    agent = await hub.agent(person, on_message(answer_with_a_note))
    out, err = io.StringIO(), io.StringIO()
    code = await ask(hub.url, "say it", token=person.token, out=out, err=err)
    assert code == 0, err.getvalue()
    assert out.getvalue() == "[voice note 0:07]\n"
    out = io.StringIO()
    code = await ask(
        hub.url,
        "again",
        token=person.token,
        thread=agent.conversation_id,
        as_json=True,
        protocol="cuckoo",
        out=out,
        err=err,
    )
    assert code == 0, err.getvalue()
    frames = [json.loads(line) for line in out.getvalue().splitlines()]
    records = [
        attachment
        for frame in frames
        if frame["type"] == "message.created"
        for attachment in frame["data"]["message"]["body"].get("attachments", [])
    ]
    assert len(records) == 1
    [record] = records
    assert record["kind"] == "audio" and record["mime_type"] == "audio/wav"
    assert record["duration_ms"] == 7400 and record["waveform"] == WAVEFORM
    assert record["media_id"].startswith("med_") and record["byte_size"] > 7 * 32_000
