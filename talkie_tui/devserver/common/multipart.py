"""A small `multipart/form-data` reader for upload routes (the bodies are size-capped first).

Parts are split on the exact boundary bytes, so file contents come back byte for byte. Each
server passes `error`, which makes its own exception from a sentence (its status and envelope).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from email.message import Message
from email.utils import collapse_rfc2231_value

ErrorFactory = Callable[[str], Exception]
ParamValue = str | tuple[str | None, str | None, str]
TEXT_CHARSETS = frozenset({"utf-8", "utf8", "us-ascii", "ascii", "iso-8859-1", "latin-1", "latin1"})
"""The charsets an RFC 2231 parameter may name; any other is read as UTF-8."""


@dataclass(frozen=True)
class Part:
    """One form field: its name, file name (for files), declared type and bytes."""

    name: str
    filename: str | None
    content_type: str | None
    data: bytes


def _params(header_value: str) -> Message:
    message = Message()
    message["content-type"] = header_value
    return message


def boundary_of(content_type: str | None, error: ErrorFactory) -> bytes:
    """The boundary of a `multipart/form-data` content type, or `error`."""
    if not content_type or not content_type.lower().startswith("multipart/form-data"):
        raise error("The body must be multipart/form-data.")
    boundary = _params(content_type).get_param("boundary")
    if not isinstance(boundary, str) or not 0 < len(boundary) <= 200:
        raise error("The multipart body has no boundary.")
    return boundary.encode("latin-1")


def parse_parts(body: bytes, content_type: str | None, error: ErrorFactory) -> list[Part]:
    """The parts of a multipart body, or `error` when it is malformed."""
    delimiter = b"--" + boundary_of(content_type, error)
    if not body.startswith(delimiter):
        raise error("The multipart body does not start with its boundary.")
    parts: list[Part] = []
    chunks = body.split(b"\r\n" + delimiter)
    # chunks[0] is the first delimiter line; each further chunk starts right after a delimiter.
    first = chunks[0][len(delimiter) :]
    for chunk in [first, *chunks[1:]]:
        if chunk.startswith(b"--"):
            return parts
        if not chunk.startswith(b"\r\n"):
            raise error("A multipart delimiter is not followed by a line break.")
        head, separator, data = chunk[2:].partition(b"\r\n\r\n")
        if not separator:
            raise error("A multipart part has no header end.")
        parts.append(_part(head, data, error))
    raise error("The multipart body has no closing boundary.")


def _part(head: bytes, data: bytes, error: ErrorFactory) -> Part:
    headers: dict[str, str] = {}
    for line in head.decode("utf-8", errors="replace").split("\r\n"):
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    disposition = _params("form-data; " + headers.get("content-disposition", "").partition(";")[2])
    field = disposition.get_param("name")
    filename = disposition.get_param("filename")
    if field is None:
        raise error("A multipart part has no field name.")
    return Part(
        name=_text(field),
        filename=_text(filename) if filename is not None else None,
        content_type=headers.get("content-type"),
        data=data,
    )


def _text(value: ParamValue) -> str:
    """A parameter's text; an RFC 2231 value only in a charset of text (Python would decode
    with any codec named there: `unicode_escape` turns `\\ud800` into a lone surrogate)."""
    if isinstance(value, tuple):
        charset, language, raw = value
        if (charset or "us-ascii").lower() not in TEXT_CHARSETS:
            charset = "utf-8"
        value = (charset, language, raw)
    return collapse_rfc2231_value(value, errors="replace")


def file_field(parts: list[Part], error: ErrorFactory, name: str = "file") -> Part:
    """The one file part called `name`, or `error`."""
    found = [part for part in parts if part.name == name]
    if len(found) != 1:
        raise error(f"Send exactly one multipart field `{name}` with the file.")
    return found[0]
