"""Voice notes (`capabilities.voice_notes`): a recording sent as audio with its length and
waveform, which the other side plays (a hub's)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from talkie_tui.backends.parts.files import Attachment

__all__ = ["RecordsVoiceNotes"]


@runtime_checkable
class RecordsVoiceNotes(Protocol):
    """A recording becomes a voice note for the next message (`capabilities.voice_notes`)."""

    @property
    def voice_note_seconds(self) -> int:
        """The longest note the server takes, in seconds (a recording stops there)."""
        ...

    async def upload_voice_note(self, pcm: bytes, rate: int) -> Attachment:
        """Make mono 16-bit PCM at `rate` into the server's voice note and upload it (its limits
        checked first: `TalkieError` with the reason); the attachment has its length and
        waveform."""
        ...
