"""What a usable logo is, for the fetcher and the renderer alike: PNG or JPEG, and how big."""

from __future__ import annotations

__all__ = ["MAX_LOGO_BYTES", "MAX_LOGO_PIXELS", "is_logo_image"]

MAX_LOGO_BYTES = 256 * 1024
# Checked from the header before any pixel is decoded: a small file can expand enormously.
MAX_LOGO_PIXELS = 4096
_PNG = b"\x89PNG\r\n\x1a\n"
_JPEG = b"\xff\xd8\xff"
MAGIC_LENGTH = len(_PNG)


def is_logo_image(data: bytes) -> bool:
    """True when `data` starts like a PNG or a JPEG file."""
    return data.startswith(_PNG) or data.startswith(_JPEG)
