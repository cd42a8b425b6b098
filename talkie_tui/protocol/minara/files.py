"""Files for a Minara turn: what kind a file is, the limits checked before it is uploaded, and
the multipart body that reports its progress.

Limits (`minara-chat.md`): 8 attachments per turn, 5 MiB per image, 20 MiB per other file;
kinds image, pdf, spreadsheet, text and office. The kind is read from the file's first bytes
where they tell (images, PDF, the zip and OLE containers of office files), else from its name;
a file of no known kind is refused before a byte is sent.
"""

from __future__ import annotations

import mimetypes
import secrets
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from talkie_tui.core.errors import TalkieError
from talkie_tui.i18n import _

__all__ = [
    "MAX_ATTACHMENTS",
    "MAX_IMAGE_BYTES",
    "MAX_OTHER_BYTES",
    "FileKind",
    "FileRefused",
    "MultipartFile",
    "ProbedFile",
    "check_count",
    "probe_file",
]

FileKind = Literal["image", "pdf", "spreadsheet", "text", "office"]

MAX_ATTACHMENTS = 8
MAX_IMAGE_BYTES = 5 * 1024 * 1024
MAX_OTHER_BYTES = 20 * 1024 * 1024
CHUNK = 64 * 1024

_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"%PDF-", "application/pdf"),
)
_ZIP, _OLE = b"PK\x03\x04", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_SPREADSHEET_TYPES = {
    "text/csv": "spreadsheet",
    "text/tab-separated-values": "spreadsheet",
    "application/vnd.ms-excel": "spreadsheet",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "spreadsheet",
    "application/vnd.oasis.opendocument.spreadsheet": "spreadsheet",
}
_OFFICE_BY_SUFFIX = {
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ".doc": "application/msword",
    ".ppt": "application/vnd.ms-powerpoint",
    ".xls": "application/vnd.ms-excel",
    ".odt": "application/vnd.oasis.opendocument.text",
    ".odp": "application/vnd.oasis.opendocument.presentation",
    ".ods": "application/vnd.oasis.opendocument.spreadsheet",
    ".rtf": "application/rtf",
}
_TEXT_SUFFIXES = {".txt", ".md", ".markdown", ".json", ".yaml", ".yml", ".log", ".xml", ".toml"}


class FileRefused(TalkieError):
    """A file that cannot go with a message (its kind, its size, or too many files)."""


@dataclass(frozen=True, slots=True)
class ProbedFile:
    """A file checked for upload: its name, media type, kind and size."""

    path: Path
    filename: str
    media_type: str
    kind: FileKind
    size: int


def _kind_of(media_type: str) -> FileKind | None:
    if media_type.startswith("image/") and media_type != "image/svg+xml":
        return "image"  # SVG is markup, not a picture the gateway reads
    if media_type == "application/pdf":
        return "pdf"
    if media_type in _SPREADSHEET_TYPES:
        return "spreadsheet"
    if media_type in _OFFICE_BY_SUFFIX.values():
        return "office"
    if media_type.startswith("text/") or media_type in ("application/json", "application/xml"):
        return "text"
    return None


def _looks_like_text(head: bytes) -> bool:
    """True when the first bytes are UTF-8 text without NULs (a cut-off character allowed)."""
    if b"\x00" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as error:
        return error.start >= len(head) - 3  # only the last character was cut off
    return True


def _media_type(head: bytes, suffix: str) -> str | None:
    """The media type the first bytes and the file name agree on, or None."""
    for signature, media_type in _SIGNATURES:
        if head.startswith(signature):
            return media_type
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    if head.startswith((_ZIP, _OLE)):
        # Office files are zip (OOXML, OpenDocument) or OLE containers: the name tells which.
        return _OFFICE_BY_SUFFIX.get(suffix)
    guessed = mimetypes.types_map.get(suffix) or mimetypes.guess_type(f"x{suffix}")[0]
    if suffix == ".csv":
        guessed = "text/csv"
    elif suffix in _TEXT_SUFFIXES and not guessed:
        guessed = "text/plain"
    if guessed is None or not _looks_like_text(head):
        return None
    kind = _kind_of(guessed)
    return guessed if kind in ("text", "spreadsheet") else None


def probe_file(path: Path) -> ProbedFile:
    """Read what `path` is and check it against the limits; FileRefused says why not."""
    try:
        size = path.stat().st_size
        with path.open("rb") as file:
            head = file.read(4096)
    except OSError as error:
        raise FileRefused(
            _("{name} cannot be read: {error}").format(name=path.name, error=error.strerror)
        ) from None
    media_type = _media_type(head, path.suffix.lower())
    kind = _kind_of(media_type) if media_type else None
    if media_type is None or kind is None:
        raise FileRefused(
            _(
                "{name} cannot be sent: the gateway takes images, PDFs, spreadsheets, text and "
                "office documents."
            ).format(name=path.name)
        )
    limit = MAX_IMAGE_BYTES if kind == "image" else MAX_OTHER_BYTES
    if size > limit:
        raise FileRefused(
            _("{name} is {size} MiB; the gateway takes {kind} files up to {limit} MiB.").format(
                name=path.name,
                size=f"{size / 1048576:.1f}",
                kind=kind,
                limit=limit // 1048576,
            )
        )
    return ProbedFile(path, path.name, media_type, kind, size)


def check_count(count: int) -> None:
    """Refuse more files than one turn may carry."""
    if count > MAX_ATTACHMENTS:
        raise FileRefused(
            _("A message can carry at most {limit} files; this one has {count}.").format(
                limit=MAX_ATTACHMENTS, count=count
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
        progress: Callable[[int, int], None] | None = None,
        fields: dict[str, str] | None = None,
    ) -> None:
        self.boundary = secrets.token_hex(16)
        self._content = content
        self._progress = progress
        self.total = content.stat().st_size if isinstance(content, Path) else len(content)
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

    def _report(self, sent: int) -> None:
        if self._progress is not None:
            self._progress(sent, self.total)

    async def chunks(self) -> AsyncIterator[bytes]:
        """The body, chunk by chunk (a file is read as it is sent, never whole)."""
        yield self._head
        sent = 0
        self._report(0)
        if isinstance(self._content, bytes):
            for start in range(0, self.total, CHUNK):
                piece = self._content[start : start + CHUNK]
                yield piece
                sent += len(piece)
                self._report(sent)
        else:
            with self._content.open("rb") as file:
                while sent < self.total:
                    piece = file.read(min(CHUNK, self.total - sent))
                    if not piece:
                        break  # the file shrank meanwhile: the gateway will see a short body
                    yield piece
                    sent += len(piece)
                    self._report(sent)
        yield self._tail
