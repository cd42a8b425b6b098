"""Media files: the kind and type decided from the bytes, limits by kind, the bytes on disk
(named by id, never by anything the caller chose), and image thumbnails made with Pillow."""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass
from pathlib import Path

from .config import HubConfig

THUMB_PIXELS = 480
NAME_CHARS = 255
WAVEFORM_VALUES = 64


@dataclass(frozen=True)
class Sniffed:
    """What the bytes are: kind (image, audio, video, file) and MIME type."""

    kind: str
    mime_type: str


def _ftyp(data: bytes) -> Sniffed | None:
    if data[4:8] != b"ftyp":
        return None
    brand = data[8:12]
    if brand in (b"M4A ", b"M4B "):
        return Sniffed("audio", "audio/mp4")
    if brand in (b"heic", b"heix", b"mif1"):
        return Sniffed("image", "image/heic")
    if brand == b"qt  ":
        return Sniffed("video", "video/quicktime")
    return Sniffed("video", "video/mp4")


def sniff(data: bytes, claim_audio: bool = False) -> Sniffed:
    """The kind of a file from its first bytes; `claim_audio` marks a container a recording."""
    found = _sniff(data)
    if claim_audio and found.kind == "video":
        audio_types = {"video/webm": "audio/webm", "video/mp4": "audio/mp4"}
        return Sniffed("audio", audio_types.get(found.mime_type, found.mime_type))
    return found


def _sniff(data: bytes) -> Sniffed:
    signatures = (
        (b"\xff\xd8\xff", Sniffed("image", "image/jpeg")),
        (b"\x89PNG\r\n\x1a\n", Sniffed("image", "image/png")),
        (b"GIF87a", Sniffed("image", "image/gif")),
        (b"GIF89a", Sniffed("image", "image/gif")),
        (b"OggS", Sniffed("audio", "audio/ogg")),
        (b"fLaC", Sniffed("audio", "audio/flac")),
        (b"ID3", Sniffed("audio", "audio/mpeg")),
        (b"\x1a\x45\xdf\xa3", Sniffed("video", "video/webm")),
        (b"%PDF-", Sniffed("file", "application/pdf")),
        (b"PK\x03\x04", Sniffed("file", "application/zip")),
    )
    for magic, sniffed in signatures:
        if data.startswith(magic):
            return sniffed
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return Sniffed("image", "image/webp")
    if data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        return Sniffed("audio", "audio/wav")
    if len(data) > 1 and data[0] == 0xFF and data[1] & 0xE0 == 0xE0:
        return Sniffed("audio", "audio/mpeg")
    found = _ftyp(data)
    if found is not None:
        return found
    try:
        data[:4096].decode("utf-8")
    except UnicodeDecodeError:
        return Sniffed("file", "application/octet-stream")
    return Sniffed("file", "text/plain")


def clean_name(name: str | None) -> str:
    """A file name to show: no path separators or control characters, at most 255 chars."""
    kept = "".join(
        "_" if ch in "/\\" or ord(ch) < 32 or ord(ch) == 127 else ch for ch in name or ""
    )
    return kept.strip()[:NAME_CHARS] or "file"


def image_size(data: bytes) -> tuple[int, int] | None:
    """Width and height of an image Pillow can read, else None."""
    from PIL import Image

    with contextlib.suppress(Exception), Image.open(io.BytesIO(data)) as image:
        return image.size
    return None


def thumbnail(data: bytes) -> bytes | None:
    """A JPEG at most 480 px on its long side, or None when the image cannot be read."""
    from PIL import Image

    with contextlib.suppress(Exception), Image.open(io.BytesIO(data)) as image:
        image.thumbnail((THUMB_PIXELS, THUMB_PIXELS))
        out = io.BytesIO()
        image.convert("RGB").save(out, "JPEG", quality=80)
        return out.getvalue()
    return None


class MediaFiles:
    """The bytes of media in the data folder: `<id>` and `<id>.thumb`."""

    def __init__(self, config: HubConfig) -> None:
        self.folder = config.resolved_data_dir()
        self.folder.mkdir(parents=True, exist_ok=True)

    def path(self, media_id: str, variant: str | None = None) -> Path:
        """Where a file's bytes (or its thumbnail) live; the id comes from our table."""
        return self.folder / (f"{media_id}.thumb" if variant == "thumb" else media_id)

    def write(self, media_id: str, data: bytes, thumb: bytes | None) -> None:
        """Store the bytes of a new file."""
        self.path(media_id).write_bytes(data)
        if thumb is not None:
            self.path(media_id, "thumb").write_bytes(thumb)

    def stored_ids(self) -> list[str]:
        """The ids of every file in the folder (a thumbnail counts under its file's id)."""
        return sorted({path.name.removesuffix(".thumb") for path in self.folder.iterdir()})

    def remove(self, media_id: str) -> None:
        """Delete a file's bytes."""
        for variant in (None, "thumb"):
            self.path(media_id, variant).unlink(missing_ok=True)
