"""What a file is, decided from its first bytes and never from what the uploader claimed: a
kind (image, audio, video, file) and a MIME type. Bytes that match no signature are plain text
when they are UTF-8, else application/octet-stream: so an HTML or SVG upload is text."""

from __future__ import annotations

from dataclasses import dataclass

TEXT = "text/plain"
BINARY = "application/octet-stream"
ZIP = "application/zip"


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
        (b"PK\x03\x04", Sniffed("file", ZIP)),
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
        return Sniffed("file", BINARY)
    return Sniffed("file", TEXT)
