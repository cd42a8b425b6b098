"""Files for a Minara turn: a file checked before it is uploaded, and the multipart body that
reports its progress.

What kind a file is and the limits (`minara-chat.md`: 8 attachments per turn, 5 MiB per image,
20 MiB per other file) are the rules of `talkie_tui.core.attachments`, which the composer checks
by too; here they are said in the gateway's terms. A file of no known kind is refused before a
byte is sent.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from talkie_tui.core.attachments import (
    LIMITS,
    MAX_ATTACHMENTS,
    MAX_IMAGE_BYTES,
    AttachmentKind,
    AttachmentLimits,
    MiB,
    detect_kind,
    read_head,
)
from talkie_tui.core.errors import TalkieError
from talkie_tui.i18n import _
from talkie_tui.protocol.net.upload_body import FileBody, Progress

__all__ = [
    "MAX_ATTACHMENTS",
    "MAX_IMAGE_BYTES",
    "MAX_OTHER_BYTES",
    "FileRefused",
    "MultipartFile",
    "ProbedFile",
    "check_count",
    "probe_file",
]

MAX_OTHER_BYTES = LIMITS.other_bytes


class FileRefused(TalkieError):
    """A file that cannot go with a message (its kind, its size, or too many files)."""


@dataclass(frozen=True, slots=True)
class ProbedFile:
    """A file checked for upload: its name, media type, kind and size."""

    path: Path
    filename: str
    media_type: str
    kind: AttachmentKind
    size: int


def probe_file(path: Path, limits: AttachmentLimits = LIMITS) -> ProbedFile:
    """Read what `path` is and check it against the limits; FileRefused says why not."""
    size, head = read_head(path, FileRefused)
    found = detect_kind(path.name, head)
    if found is None:
        raise FileRefused(
            _(
                "{name} cannot be sent: the gateway takes images, PDFs, spreadsheets, text and "
                "office documents."
            ).format(name=path.name)
        )
    limit = limits.max_bytes(found.kind)
    if size > limit:
        raise FileRefused(
            _("{name} is {size} MiB; the gateway takes {kind} files up to {limit} MiB.").format(
                name=path.name,
                size=f"{size / MiB:.1f}",
                kind=found.kind,
                limit=limit // MiB,
            )
        )
    return ProbedFile(path, path.name, found.media_type, found.kind, size)


def check_count(count: int, limits: AttachmentLimits = LIMITS) -> None:
    """Refuse more files than one turn may carry."""
    if count > limits.per_message:
        raise FileRefused(
            _("A message can carry at most {limit} files; this one has {count}.").format(
                limit=limits.per_message, count=count
            )
        )


def _quoted(name: str) -> str:
    """A file name for a Content-Disposition header (quotes, backslashes and breaks escaped)."""
    return name.replace("\\", "\\\\").replace('"', '\\"').replace("\r", " ").replace("\n", " ")


class MultipartFile:
    """A `multipart/form-data` body with one file field, read in chunks as it is sent.

    `progress(sent, total)` is called with the file's bytes as each chunk goes out; the
    length of the whole body is known before, so the upload carries a Content-Length.
    """

    def __init__(
        self,
        field: str,
        filename: str,
        media_type: str,
        content: Path | bytes,
        *,
        progress: Progress | None = None,
        fields: dict[str, str] | None = None,
    ) -> None:
        self.boundary = secrets.token_hex(16)
        self._file = FileBody(content, progress=progress)
        self.total = self._file.total
        parts = [
            f'--{self.boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'
            for name, value in (fields or {}).items()
        ]
        self._head = (
            "".join(parts)
            + f"--{self.boundary}\r\n"
            + f'Content-Disposition: form-data; name="{field}"; filename="{_quoted(filename)}"\r\n'
            + f"Content-Type: {media_type}\r\n\r\n"
        ).encode()
        self._tail = f"\r\n--{self.boundary}--\r\n".encode()

    @property
    def content_type(self) -> str:
        """The Content-Type header of the body."""
        return f"multipart/form-data; boundary={self.boundary}"

    @property
    def length(self) -> int:
        """The size of the whole body in bytes."""
        return len(self._head) + self.total + len(self._tail)

    async def chunks(self) -> AsyncIterator[bytes]:
        """The body, chunk by chunk (a file is read as it is sent, never whole)."""
        yield self._head
        async for piece in self._file.chunks():
            yield piece
        yield self._tail
