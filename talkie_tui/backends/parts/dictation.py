"""Push-to-talk dictation (`capabilities.dictation`): a recording becomes text."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

__all__ = ["Dictates", "Transcription"]


@dataclass(frozen=True, slots=True)
class Transcription:
    """What a recording said, and the server's key of the stored audio (sent with the text)."""

    text: str
    audio_key: str | None = None


@runtime_checkable
class Dictates(Protocol):
    """Push-to-talk dictation (`capabilities.dictation`): a recording becomes text."""

    async def transcribe(self, wav: bytes, *, language: str | None = None) -> Transcription:
        """The text of a WAV recording (stored on the server for the message's history)."""
        ...
