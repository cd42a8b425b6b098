"""Files sent with a message: what kind each is, and whether a server's limits let it go.

Protocol-neutral and pure (no network, no UI): the composer checks a file here before any
upload, and a backend may check it again before it sends a byte. The kinds and limits are the
Minara gateway's ("Attachments and voice": image, pdf, spreadsheet, text, office; 8 per turn,
5 MiB per image, 20 MiB per other file); they are the defaults of `AttachmentLimits`, so a
protocol with other limits passes its own.

The kind is read from the file's first bytes where they say it (PNG, JPEG, GIF, WebP, PDF, the
ZIP of Office Open XML and OpenDocument, the compound file of old Office), else from its name;
a file whose bytes say nothing is text when they decode as UTF-8. Anything else is refused
with the reason, in words for a person.
"""

from __future__ import annotations

import codecs
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from talkie_tui.core.errors import TalkieError
from talkie_tui.i18n import _

__all__ = [
    "HEAD_BYTES",
    "MAX_ATTACHMENTS",
    "MAX_FILE_BYTES",
    "MAX_IMAGE_BYTES",
    "AttachmentKind",
    "AttachmentLimits",
    "AttachmentRefused",
    "CheckedFile",
    "FileKind",
    "check_file",
    "detect_kind",
    "limit_problem",
]

AttachmentKind = Literal["image", "pdf", "spreadsheet", "text", "office"]

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


@dataclass(frozen=True, slots=True)
class CheckedFile:
    """A file that may be attached: where it is, its name, size and kind."""

    path: Path
    filename: str
    size: int
    kind: AttachmentKind
    media_type: str


class AttachmentRefused(TalkieError):
    """A file cannot be attached; the message says why (before anything was uploaded)."""


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
    suffix = Path(filename).suffix.lower()
    by_name = _BY_SUFFIX.get(suffix)
    signed = _signature(head)
    if signed is not None:
        return signed
    if head.startswith(b"PK\x03\x04"):  # a ZIP: an Office or OpenDocument file by its name
        return by_name if suffix in _ZIP_SUFFIXES else None
    if head.startswith(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"):  # old Office's compound file
        return by_name if suffix in _OLE_SUFFIXES else None
    if not _is_text(head):
        return None
    if by_name is not None and (by_name.kind == "text" or by_name.media_type.startswith("text/")):
        return by_name  # .md, .json, .csv: their own media type (a CSV is a spreadsheet)
    return _TEXT  # a text file under any name (a README, a .py, a .sql)


def limit_problem(
    kind: AttachmentKind, size: int, already: int, limits: AttachmentLimits | None = None
) -> str | None:
    """Why a file of `kind` and `size` cannot join `already` attached ones; None when it can."""
    limits = limits or AttachmentLimits()
    if already >= limits.per_message:
        return _("A message takes at most {count} files.").format(count=limits.per_message)
    largest = limits.max_bytes(kind)
    if size > largest:
        if kind == "image":
            return _("An image may be at most {limit}; this one is {size}.").format(
                limit=_mib(largest), size=_mib(size)
            )
        return _("A file may be at most {limit}; this one is {size}.").format(
            limit=_mib(largest), size=_mib(size)
        )
    if size == 0:
        return _("The file is empty.")
    return None


def _mib(size: int) -> str:
    """Sizes near a limit in the binary unit the limit is written in (5 MiB, 6.2 MiB)."""
    value = size / MiB
    text = f"{value:.0f}" if value == int(value) else f"{value:.1f}"
    return _("{count} MiB").format(count=text)


def check_file(path: Path, already: int = 0, limits: AttachmentLimits | None = None) -> CheckedFile:
    """Check a file before any upload: it exists, is readable, of a kind and within the limits.

    Raises `AttachmentRefused` with the reason. Reads only the first `HEAD_BYTES`.
    """
    path = path.expanduser()
    name = path.name
    try:
        if not path.is_file():
            reason = _("no such file") if not path.exists() else _("not a file")
            raise AttachmentRefused(_("{name}: {reason}.").format(name=str(path), reason=reason))
        size = path.stat().st_size
        with path.open("rb") as file:
            head = file.read(HEAD_BYTES)
    except OSError as error:
        reason = os.strerror(error.errno) if error.errno else str(error)
        raise AttachmentRefused(
            _("{name} cannot be read: {reason}.").format(name=name, reason=reason)
        ) from error
    found = detect_kind(name, head)
    if found is None:
        raise AttachmentRefused(
            _(
                "{name} is not a file this server takes "
                "(images, PDFs, spreadsheets, text and office documents)."
            ).format(name=name)
        )
    problem = limit_problem(found.kind, size, already, limits)
    if problem is not None:
        raise AttachmentRefused(
            _("{name} is not attached: {problem}").format(name=name, problem=problem)
        )
    return CheckedFile(path.resolve(), name, size, found.kind, found.media_type)
