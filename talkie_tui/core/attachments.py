"""The rules of files sent with a message, whatever layer checks them: their kinds and limits.

The kinds and limits are those of `minara-chat.md` ("Attachments and voice": image, pdf,
spreadsheet, text, office; 8 per turn, 5 MiB per image, 20 MiB per other file). They are data
here (`AttachmentLimits`, the kind of a file from its name and first bytes), so that the wire
client checks a file before its upload and the composer before it is attached by the same rules;
each says why a file is refused in its own words.

The kind is read from the first bytes where they say it (PNG, JPEG, GIF, WebP, PDF, the ZIP of
Office Open XML and OpenDocument, the compound file of old Office), else from the name; a file
whose bytes say nothing is text when they decode as UTF-8. SVG is refused although it is text:
it is a picture in markup, which a gateway would take for an image it cannot read.

Pure and protocol-neutral: no network, no UI.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Literal

from talkie_tui.i18n import _

__all__ = [
    "ATTACHMENT_KINDS",
    "HEAD_BYTES",
    "LIMITS",
    "MAX_ATTACHMENTS",
    "MAX_FILE_BYTES",
    "MAX_IMAGE_BYTES",
    "AttachmentKind",
    "AttachmentLimits",
    "FileKind",
    "MiB",
    "detect_kind",
    "read_head",
]

AttachmentKind = Literal["image", "pdf", "spreadsheet", "text", "office"]
ATTACHMENT_KINDS: tuple[AttachmentKind, ...] = ("image", "pdf", "spreadsheet", "text", "office")

MiB = 1024 * 1024
MAX_ATTACHMENTS = 8
MAX_IMAGE_BYTES = 5 * MiB
MAX_FILE_BYTES = 20 * MiB
HEAD_BYTES = 4096  # enough for every signature read here, and for a text check


@dataclass(frozen=True, slots=True)
class FileKind:
    """What a file is: one of the kinds a server takes, and its media type."""

    kind: AttachmentKind
    media_type: str


@dataclass(frozen=True, slots=True)
class AttachmentLimits:
    """How many files one message takes, and how big each may be."""

    per_message: int = MAX_ATTACHMENTS
    image_bytes: int = MAX_IMAGE_BYTES
    other_bytes: int = MAX_FILE_BYTES

    def max_bytes(self, kind: AttachmentKind) -> int:
        """The largest file of `kind` accepted."""
        return self.image_bytes if kind == "image" else self.other_bytes


LIMITS = AttachmentLimits()
"""The limits of a Minara gateway (`minara-chat.md`)."""

# By name: used when the bytes carry no signature (text formats), and to tell the kinds of one
# container apart (a ZIP is a .docx or a .xlsx by its name).
_BY_SUFFIX: dict[str, FileKind] = {
    ".png": FileKind("image", "image/png"),
    ".jpg": FileKind("image", "image/jpeg"),
    ".jpeg": FileKind("image", "image/jpeg"),
    ".gif": FileKind("image", "image/gif"),
    ".webp": FileKind("image", "image/webp"),
    ".pdf": FileKind("pdf", "application/pdf"),
    ".csv": FileKind("spreadsheet", "text/csv"),
    ".tsv": FileKind("spreadsheet", "text/tab-separated-values"),
    ".xlsx": FileKind(
        "spreadsheet", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    ),
    ".xls": FileKind("spreadsheet", "application/vnd.ms-excel"),
    ".ods": FileKind("spreadsheet", "application/vnd.oasis.opendocument.spreadsheet"),
    ".docx": FileKind(
        "office", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    ),
    ".doc": FileKind("office", "application/msword"),
    ".pptx": FileKind(
        "office", "application/vnd.openxmlformats-officedocument.presentationml.presentation"
    ),
    ".ppt": FileKind("office", "application/vnd.ms-powerpoint"),
    ".odt": FileKind("office", "application/vnd.oasis.opendocument.text"),
    ".odp": FileKind("office", "application/vnd.oasis.opendocument.presentation"),
    ".txt": FileKind("text", "text/plain"),
    ".md": FileKind("text", "text/markdown"),
    ".markdown": FileKind("text", "text/markdown"),
    ".json": FileKind("text", "application/json"),
    ".xml": FileKind("text", "application/xml"),
    ".html": FileKind("text", "text/html"),
    ".log": FileKind("text", "text/plain"),
    ".yaml": FileKind("text", "application/yaml"),
    ".yml": FileKind("text", "application/yaml"),
}
_TEXT = FileKind("text", "text/plain")
_ZIP_SUFFIXES = {".xlsx", ".ods", ".docx", ".pptx", ".odt", ".odp"}
_OLE_SUFFIXES = {".xls", ".doc", ".ppt"}
_REFUSED_SUFFIXES = {".svg", ".svgz"}  # pictures in markup: text, but no image a server reads


def _signature(head: bytes) -> FileKind | None:
    """The kind the first bytes announce, for formats that announce one alone."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return _BY_SUFFIX[".png"]
    if head.startswith(b"\xff\xd8\xff"):
        return _BY_SUFFIX[".jpg"]
    if head.startswith((b"GIF87a", b"GIF89a")):
        return _BY_SUFFIX[".gif"]
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return _BY_SUFFIX[".webp"]
    if head.startswith(b"%PDF-"):
        return _BY_SUFFIX[".pdf"]
    return None


def _is_text(head: bytes) -> bool:
    """True when the bytes read as UTF-8 text (a character cut at the end is allowed)."""
    if b"\x00" in head:
        return False
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        return False
    return True


def detect_kind(filename: str, head: bytes) -> FileKind | None:
    """The kind of a file from its name and first bytes (`HEAD_BYTES` of them); None when it
    is none of the kinds a server takes. The bytes win over the name where they say it."""
    suffix = PurePath(filename).suffix.lower()
    by_name = _BY_SUFFIX.get(suffix)
    signed = _signature(head)
    if signed is not None:
        return signed
    if head.startswith(b"PK\x03\x04"):  # a ZIP: an Office or OpenDocument file by its name
        return by_name if suffix in _ZIP_SUFFIXES else None
    if head.startswith(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"):  # old Office's compound file
        return by_name if suffix in _OLE_SUFFIXES else None
    if suffix in _REFUSED_SUFFIXES or not _is_text(head):
        return None
    if by_name is not None and (by_name.kind == "text" or by_name.media_type.startswith("text/")):
        return by_name  # .md, .json, .csv: their own media type (a CSV is a spreadsheet)
    return _TEXT  # a text file under any name (a README, a .py, a .sql)


def read_head(path: Path, refused: Callable[[str], Exception]) -> tuple[int, bytes]:
    """The size of the file at `path` and its first `HEAD_BYTES`; `refused(why)` is raised when
    it cannot be read."""
    try:
        size = path.stat().st_size
        with path.open("rb") as file:
            return size, file.read(HEAD_BYTES)
    except OSError as error:
        why = _("{name} cannot be read: {error}").format(name=path.name, error=error.strerror)
        raise refused(why) from None
