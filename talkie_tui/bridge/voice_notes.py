"""A person's voice note, answered with a voice note of the bridge's own.

A Talkie agent reads text: what a voice note says never reaches it (the bridge does not
transcribe). So a voice note is answered on the agent's behalf by a short spoken note, in the
agent's language, that says how long the note was and asks for the question in writing, with
the same words as its text, so it is understood where it cannot be heard:

- the speech is espeak-ng's (`espeak-ng -w`, in the language of the agent where espeak has
  it): a real voice, small and installed with talkie's system packages
  (scripts/install-system-deps.sh); where espeak-ng (or espeak) is missing, two short tones
  say that something came back, and the words are in the text;
- the note is uploaded as a hub's voice note (`protocol.cuckoo.voice_note`: its WAV measured
  for its length and 64-value waveform) and sent over HTTP: the socket carries no files;
- its idempotency key is the event's (`evt_…:voice`), so a redelivered event sends it once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import shutil
import struct
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from talkie_tui.chat.voice_notes import voice_length
from talkie_tui.core.waiting import wait_within
from talkie_tui.i18n import N_, _, language_of
from talkie_tui.protocol.cuckoo.voice_note import WAV_RATE, VoiceNote

if TYPE_CHECKING:
    from talkie_tui.bridge.context import BridgeContext

__all__ = ["REPLY_TEXT", "PostsMedia", "VoiceReplies", "synthesize", "voice_note_of"]

logger = logging.getLogger(__name__)

REPLY_TEXT = N_(
    "Thank you for your voice note of {length}. I read only text: please type what you need."
)
SPEAK_TIMEOUT = 20.0
_VOICES = {"cs": "cs", "en": "en"}


@runtime_checkable
class PostsMedia(Protocol):
    """The hub's agent API as far as a voice note needs it (`AgentApi` is one)."""

    async def upload(self, data: bytes, params: dict[str, str]) -> dict[str, Any]:
        """Upload a file: the hub's media record."""
        ...

    async def send_message(self, conversation_id: str, fields: dict[str, Any]) -> dict[str, Any]:
        """Send a message over HTTP: the hub's copy."""
        ...


def voice_note_of(body: dict[str, Any]) -> dict[str, Any] | None:
    """The first voice note of a message's body (audio with its length), else None."""
    for attachment in body.get("attachments") or []:
        if (
            isinstance(attachment, dict)
            and attachment.get("kind") == "audio"
            and isinstance(attachment.get("duration_ms"), int)
        ):
            return attachment
    return None


def _tones() -> bytes:
    """Two short rising tones as mono 16-bit PCM (where no speech synthesizer is installed)."""
    samples = []
    for hz in (660.0, 880.0):
        count = WAV_RATE * 3 // 10
        for i in range(count):
            fade = min(1.0, i / 400, (count - i) / 400)
            samples.append(int(9000 * fade * math.sin(2 * math.pi * hz * i / WAV_RATE)))
        samples.extend([0] * (WAV_RATE // 10))
    return struct.pack(f"<{len(samples)}h", *samples)


async def synthesize(text: str, language: str | None) -> VoiceNote:
    """`text` spoken by espeak-ng (or espeak) in `language`; two tones where neither is
    installed or it fails."""
    program = shutil.which("espeak-ng") or shutil.which("espeak")
    if program is not None:
        with tempfile.TemporaryDirectory(prefix="talkie-voice-") as folder:
            path = Path(folder) / "reply.wav"
            voice = _VOICES.get(language or "", "en")
            process = await asyncio.create_subprocess_exec(
                program,
                "-v",
                voice,
                "-w",
                str(path),
                "--",
                text,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE,
                env={**os.environ, "HOME": folder},  # espeak's settings, not the operator's
            )
            try:
                _out, err = await wait_within(process.communicate(), SPEAK_TIMEOUT)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
                err = b"timed out"
            if process.returncode == 0 and path.exists():
                with contextlib.suppress(ValueError):
                    return VoiceNote.from_wav(await asyncio.to_thread(path.read_bytes))
            logger.warning("%s failed: %s", program, err.decode(errors="replace")[:200])
    return VoiceNote.from_pcm(_tones())


class VoiceReplies:
    """Voice notes answered with a spoken note (see the module docstring)."""

    def __init__(self, context: BridgeContext) -> None:
        self.context = context

    @property
    def offered(self) -> bool:
        """True when the hub's API can take the note (the bridge's `AgentApi`)."""
        return isinstance(self.context.api, PostsMedia)

    async def answer(
        self, event_id: str, conversation_id: str, message_id: str, note: dict[str, Any]
    ) -> None:
        """Answer the person's `note` with a spoken note replying to their message."""
        api = self.context.api
        assert isinstance(api, PostsMedia)
        length = voice_length(int(note.get("duration_ms") or 0))
        text = self.context.speak(REPLY_TEXT).format(length=length)
        spoken = await synthesize(text, language_of(self.context.backend.info.locale))
        media = await api.upload(spoken.wav, {"name": "voice-reply.wav", **spoken.upload_params()})
        await api.send_message(
            conversation_id,
            {
                "text": text,
                "attachments": [media["id"]],
                "idempotency_key": f"{event_id}:voice",
                "reply_to": message_id,
            },
        )
        self.context.say(
            _(
                "{conversation}: a voice note of {length} answered with a spoken one of {reply}"
            ).format(
                conversation=conversation_id, length=length, reply=voice_length(spoken.duration_ms)
            )
        )
