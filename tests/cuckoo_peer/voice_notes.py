"""An independent agent's voice note: a WAV made with the standard library, uploaded with its
length and a waveform of its own (`cuckoo-agent.md` "Media"), then sent into a conversation."""

from __future__ import annotations

import io
import math
import struct
import wave
from typing import Any

from tests.cuckoo_peer.agent import AgentBackend

RATE = 16_000
WAVEFORM = [(i * 37) % 101 for i in range(64)]


def tone_wav(seconds: float, *, hz: float = 440.0, rate: int = RATE) -> bytes:
    """A mono 16-bit WAV of a tone of `seconds`."""
    out = io.BytesIO()
    with wave.open(out, "wb") as file:
        file.setnchannels(1)
        file.setsampwidth(2)
        file.setframerate(rate)
        count = int(seconds * rate)
        file.writeframes(
            b"".join(
                struct.pack("<h", int(9000 * math.sin(2 * math.pi * hz * i / rate)))
                for i in range(count)
            )
        )
    return out.getvalue()


async def send_voice_note(
    peer: AgentBackend, conversation_id: str, seconds: float = 7.0
) -> dict[str, Any]:
    """Upload a tone as a voice note of `seconds` and send it; the hub's message."""
    uploaded = await peer.http.post(
        "/v1/agent/media",
        content=tone_wav(seconds),
        params={
            "name": "reply.wav",
            "kind": "audio",
            "duration_ms": str(round(seconds * 1000)),
            "waveform": ",".join(map(str, WAVEFORM)),
        },
    )
    assert uploaded.status_code == 201, uploaded.text
    media_id = uploaded.json()["media"]["id"]
    sent = await peer.post_message(conversation_id, attachments=[media_id])
    assert sent.status_code == 201, sent.text
    message: dict[str, Any] = sent.json()["message"]
    return message
