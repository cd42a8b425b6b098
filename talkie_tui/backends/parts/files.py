"""Files that go with a message (`capabilities.attachments`): uploaded first, then named."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from talkie_tui.chat.turns import AttachmentPart

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["Attaches", "Attachment"]


@dataclass(frozen=True, slots=True)
class Attachment:
    """A file uploaded to the server and named in the next message (`attachments`)."""

    key: str  # the server's name of the stored file
    filename: str
    media_type: str
    size: int
    kind: str  # the server's word: an `AttachmentKind` (Minara); image, audio, video or file (hub)
    url: str | None = None  # where the server serves it back
    duration_ms: int | None = None  # a voice note's length (`RecordsVoiceNotes`)
    waveform: tuple[int, ...] = ()  # and its levels, 0 to 100

    def as_part(self) -> AttachmentPart:
        """The file as the part of the message it goes with."""
        return AttachmentPart(
            self.key,
            self.filename,
            self.media_type,
            self.size,
            self.kind,
            self.url,
            self.duration_ms,
            self.waveform,
        )


@runtime_checkable
class Attaches(Protocol):
    """Files go with a message (`capabilities.attachments`): uploaded first, then named."""

    async def upload(
        self, path: Path, *, progress: Callable[[int, int], None] | None = None
    ) -> Attachment:
        """Upload one file (its limits checked first: `TalkieError` with the reason), calling
        `progress(sent, total)` as bytes go out."""
        ...
