"""Files for a hub: what kind a file will be, and whether the hub takes its size.

The hub decides the kind from the bytes (`notes/cuckoo.md` §5.9): image, audio, video, or any
other file; each kind has its own ceiling (16 MiB for an image or a recording, 64 MiB for a
video or another file), and a message carries at most ten files. The kind is guessed here the
same way before a byte is sent, so a file the hub would refuse is refused at once: pictures
by the signatures `core.attachments` reads, recordings and videos by their containers' first
bytes, then by the name.
"""

from __future__ import annotations

import mimetypes
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from talkie_tui.core.attachments import MiB, detect_kind, read_head
from talkie_tui.core.errors import TalkieError
from talkie_tui.i18n import _

__all__ = [
    "MAX_ATTACHMENTS",
    "MAX_BYTES",
    "FileRefused",
    "MediaKind",
    "ProbedUpload",
    "check_count",
    "probe_upload",
]

MediaKind = Literal["image", "audio", "video", "file"]
MAX_BYTES: dict[MediaKind, int] = {
    "image": 16 * MiB,
    "audio": 16 * MiB,
    "video": 64 * MiB,
    "file": 64 * MiB,
}
MAX_ATTACHMENTS = 10


class FileRefused(TalkieError):
    """A file the hub would not take (its size, or too many files)."""


@dataclass(frozen=True, slots=True)
class ProbedUpload:
    """A file checked for upload: its name, media type, the kind the hub will see, its size."""

    path: Path
    filename: str
    media_type: str
    kind: MediaKind
    size: int


def _container(head: bytes) -> tuple[MediaKind, str] | None:
    """Audio and video containers by their first bytes (the hub sniffs the same way)."""
    if head[:4] == b"RIFF" and head[8:12] == b"WAVE":
        return "audio", "audio/wav"
    if head.startswith(b"OggS"):
        return "audio", "audio/ogg"
    if head.startswith(b"ID3") or head[:2] in (b"\xff\xfb", b"\xff\xf3", b"\xff\xf2"):
        return "audio", "audio/mpeg"
    if head.startswith(b"fLaC"):
        return "audio", "audio/flac"
    if head[4:8] == b"ftyp":
        brand = head[8:12]
        return ("audio", "audio/mp4") if brand == b"M4A " else ("video", "video/mp4")
    if head.startswith(b"\x1a\x45\xdf\xa3"):
        return "video", "video/webm"
    return None


def _kind_of(name: str, head: bytes) -> tuple[MediaKind, str]:
    """The kind the hub will give a file, and its media type."""
    known = detect_kind(name, head)
    if known is not None and known.kind == "image":
        return "image", known.media_type
    container = _container(head)
    if container is not None:
        return container
    if known is not None:
        return "file", known.media_type
    guessed = mimetypes.guess_type(name)[0] or "application/octet-stream"
    return "file", guessed


def probe_upload(path: Path) -> ProbedUpload:
    """Read what `path` is and check its size against its kind's ceiling; FileRefused says why."""
    size, head = read_head(path, FileRefused)
    kind, media_type = _kind_of(path.name, head)
    limit = MAX_BYTES[kind]
    if size > limit:
        raise FileRefused(
            _("{name} is {size} MiB; the hub takes {kind} files up to {limit} MiB.").format(
                name=path.name, size=f"{size / MiB:.1f}", kind=kind, limit=limit // MiB
            )
        )
    return ProbedUpload(path, path.name, media_type, kind, size)


def check_count(count: int) -> None:
    """Refuse more files than one message may carry."""
    if count > MAX_ATTACHMENTS:
        raise FileRefused(
            _("A message can carry at most {limit} files; this one has {count}.").format(
                limit=MAX_ATTACHMENTS, count=count
            )
        )
