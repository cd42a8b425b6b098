"""Uploaded files: bytes in the data folder under random names, their records in SQLite.

A key is only ever looked up in the table, never joined onto a path, so no key (`..`, absolute,
encoded) can reach a file outside the store.
"""

from __future__ import annotations

import mimetypes
import re
import secrets
from pathlib import Path
from typing import Any
from urllib.parse import quote

from talkie_tui.devserver.common import clock
from talkie_tui.devserver.common import sniff as sniffing
from talkie_tui.devserver.common.sniff import sniff
from talkie_tui.devserver.common.sqlite import Row
from talkie_tui.devserver.minara.config import MIB, GatewayConfig
from talkie_tui.devserver.minara.errors import ApiError
from talkie_tui.devserver.minara.storage import Storage

ATTACHMENT_KINDS = ("image", "pdf", "spreadsheet", "text", "office")
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")
_SPREADSHEETS = {
    "text/csv",
    "application/vnd.ms-excel",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "application/vnd.oasis.opendocument.spreadsheet",
}
_OFFICE = {
    "application/msword",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "application/vnd.ms-powerpoint",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    "application/vnd.oasis.opendocument.text",
    "application/vnd.oasis.opendocument.presentation",
    "application/rtf",
}
_TEXT = {"application/json", "application/xml", "application/x-yaml", "application/yaml"}
# Types kept as declared when the bytes name no format of their own (text, a zip container,
# or unknown): none of them is rendered as a page or runs a script.
_PASSIVE = {
    *_SPREADSHEETS,
    *_OFFICE,
    "application/pdf",
    "application/json",
    "text/plain",
    "text/csv",
    "text/markdown",
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "image/heic",
}


def media_type_of(declared: str | None, filename: str) -> str:
    """The part's declared type, else one guessed from the name, else octet-stream."""
    if declared and declared.split(";")[0].strip() not in ("", "application/octet-stream"):
        return declared.split(";")[0].strip().lower()
    guessed, _ = mimetypes.guess_type(filename)
    return guessed or "application/octet-stream"


def decided_type(data: bytes, declared: str) -> str:
    """The type a file is stored and served as: the format its bytes show, else the declared
    type when it is a passive one, else plain text or octet-stream as the bytes are."""
    found = sniff(data).mime_type
    if found not in (sniffing.TEXT, sniffing.BINARY, sniffing.ZIP):
        return found
    if declared in _PASSIVE:
        return declared
    return found if found != sniffing.ZIP else sniffing.BINARY


def kind_of(media_type: str) -> str | None:
    """The attachment kind of a media type, None when it is none of them."""
    if media_type.startswith("image/"):
        return "image"
    if media_type == "application/pdf":
        return "pdf"
    if media_type in _SPREADSHEETS:
        return "spreadsheet"
    if media_type.startswith("text/") or media_type in _TEXT:
        return "text"
    if media_type in _OFFICE:
        return "office"
    return None


def size_limit_error(filename: str, kind: str, size: int, config: GatewayConfig) -> ApiError | None:
    """413 when a file is over its kind's limit (5 MiB an image, 20 MiB anything else)."""
    limit = config.image_max_bytes if kind == "image" else config.file_max_bytes
    if size <= limit:
        return None
    what = "an image" if kind == "image" else "a file"
    return ApiError(
        413,
        "file_too_large",
        f"{filename} is {size / MIB:.1f} MiB; {what} may be at most {limit / MIB:g} MiB.",
    )


def safe_name(filename: str) -> str:
    """A file name fit for a key: its last path part, odd characters replaced."""
    base = filename.replace("\\", "/").rsplit("/", 1)[-1]
    cleaned = _SAFE.sub("_", base).strip("._")[:100]
    return cleaned or "file"


class FileStore:
    """The gateway's uploaded files."""

    def __init__(self, storage: Storage, folder: Path, config: GatewayConfig) -> None:
        self.config = config
        self._storage = storage
        self._folder = folder
        folder.mkdir(parents=True, exist_ok=True)

    def save(self, filename: str, media_type: str, kind: str, data: bytes) -> Row:
        """Store bytes under a new key; returns the record."""
        moment = clock.now()
        token = secrets.token_hex(8)
        key = f"chat/files/{moment:%Y}/{moment:%m}/{token}-{safe_name(filename)}"
        stored_name = f"{token}.bin"
        record: dict[str, Any] = {
            "key": key,
            "stored_name": stored_name,
            "filename": filename,
            "media_type": media_type,
            "size": len(data),
            "kind": kind,
            "uploaded_at": clock.iso(moment),
        }
        path = self._folder / stored_name
        path.write_bytes(data)
        try:
            self._storage.add_file(record)
        except BaseException:
            path.unlink(missing_ok=True)  # no bytes without a record
            raise
        return record

    def get(self, key: str) -> Row | None:
        """The record of a stored key, or None."""
        return self._storage.get_file(key)

    def path_of(self, record: Row) -> Path:
        """Where a record's bytes are (its stored name was made by `save`, never by a client)."""
        return self._folder / str(record["stored_name"])

    @staticmethod
    def url_of(key: str) -> str:
        """The same-origin URL that serves a key."""
        return "/v1/files/" + quote(key, safe="/")

    def describe(self, record: Row) -> dict[str, Any]:
        """The body of `POST /v1/files`."""
        return {
            "key": record["key"],
            "url": self.url_of(record["key"]),
            "mediaType": record["media_type"],
            "size": record["size"],
            "uploaded_at": record["uploaded_at"],
            "filename": record["filename"],
            "kind": record["kind"],
        }
