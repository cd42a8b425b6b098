"""The upload routes' `multipart/form-data` reader (`common.multipart`), with Minara's 400."""

from __future__ import annotations

from talkie_tui.devserver.common import multipart
from talkie_tui.devserver.common.multipart import Part
from talkie_tui.devserver.minara.errors import invalid_request

__all__ = ["Part", "boundary_of", "file_field", "parse_parts"]


def boundary_of(content_type: str | None) -> bytes:
    """The boundary of a `multipart/form-data` content type, or 400."""
    return multipart.boundary_of(content_type, invalid_request)


def parse_parts(body: bytes, content_type: str | None) -> list[Part]:
    """The parts of a multipart body, or 400 when it is malformed."""
    return multipart.parse_parts(body, content_type, invalid_request)


def file_field(parts: list[Part], name: str = "file") -> Part:
    """The one file part called `name`, or 400."""
    return multipart.file_field(parts, invalid_request, name)
