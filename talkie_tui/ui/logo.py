"""The server's `brand.logo` (§1): fetched carefully, drawn with half-block characters.

A bad logo is skipped, never fatal: every failure returns None and is logged at debug level.
"""

from __future__ import annotations

import io
import logging
import math

import httpx
from PIL import Image
from rich.color import Color
from rich.style import Style
from rich.text import Text

from talkie_tui.protocol.client import TalkieClient

__all__ = [
    "MAX_LOGO_BYTES",
    "MAX_LOGO_PIXELS",
    "fetch_logo",
    "is_logo_image",
    "render_half_blocks",
]

log = logging.getLogger(__name__)

MAX_LOGO_BYTES = 256 * 1024
# Checked from the header before any pixel is decoded: a small file can expand enormously.
MAX_LOGO_PIXELS = 4096
_PNG = b"\x89PNG\r\n\x1a\n"
_JPEG = b"\xff\xd8\xff"
_MAGIC_LENGTH = len(_PNG)
HALF_BLOCK = "▀"


def is_logo_image(data: bytes) -> bool:
    """True when `data` starts like a PNG or a JPEG file."""
    return data.startswith(_PNG) or data.startswith(_JPEG)


def _logo_url(client: TalkieClient) -> str | None:
    """The absolute logo URL when it is same-origin or https; None otherwise."""
    logo = client.server.manifest.brand.logo
    if not logo or not logo.strip():
        return None
    url = client.resolve_url(logo.strip())
    if client.is_same_origin(url) or httpx.URL(url).scheme == "https":
        return url
    log.debug("logo %r refused: neither same-origin nor https", url)
    return None


async def fetch_logo(client: TalkieClient) -> bytes | None:
    """The logo's bytes if it is a same-origin or https PNG/JPEG of at most 256 kB, else None."""
    try:
        url = _logo_url(client)
        if url is None:
            return None
        async with client.open_stream(url) as response:
            declared = response.headers.get("content-length")
            if declared is not None and int(declared) > MAX_LOGO_BYTES:
                log.debug("logo refused: Content-Length %s is over the cap", declared)
                return None
            data = bytearray()
            async for chunk in response.aiter_bytes():
                data += chunk
                if len(data) > MAX_LOGO_BYTES:
                    log.debug("logo refused: more than %d bytes", MAX_LOGO_BYTES)
                    return None  # leaving the block closes the stream unread
                if len(data) >= _MAGIC_LENGTH and not is_logo_image(bytes(data[:_MAGIC_LENGTH])):
                    log.debug("logo refused: not a PNG or JPEG")
                    return None
        if not is_logo_image(bytes(data)):
            log.debug("logo refused: not a PNG or JPEG")
            return None
        return bytes(data)
    except Exception as error:  # a logo is decoration: nothing about it may break connecting
        log.debug("logo not loaded: %s", error)
        return None


def _fit(size: tuple[int, int], width: int, height: int) -> tuple[int, int]:
    """The largest size with the image's aspect ratio inside width x height pixels."""
    image_width, image_height = size
    scale = min(width / image_width, height / image_height)
    return max(1, math.floor(image_width * scale)), max(1, math.floor(image_height * scale))


def render_half_blocks(
    data: bytes,
    width: int,
    height: int,
    background: tuple[int, int, int] = (0, 0, 0),
) -> Text | None:
    """Draw a PNG/JPEG in at most `width` x `height` cells, two pixels per cell ('▀').

    Transparent pixels are composited onto `background`. Returns None for anything that is
    not a sane PNG or JPEG.
    """
    if width < 1 or height < 1 or not is_logo_image(data):
        return None
    try:
        with Image.open(io.BytesIO(data), formats=("PNG", "JPEG")) as image:
            if max(image.size) > MAX_LOGO_PIXELS or min(image.size) < 1:
                log.debug("logo refused: %dx%d pixels", *image.size)
                return None
            target = _fit(image.size, width, height * 2)
            image.draft("RGB", target)  # JPEG only: decode at a reduced scale when it can
            # Scale with premultiplied alpha, so transparent pixels do not bleed their colour.
            # reducing_gap: shrink by whole factors first; about 8x faster on big images.
            small = image.convert("RGBa").resize(target, Image.Resampling.LANCZOS, reducing_gap=3.0)
        flat = Image.new("RGBA", target, (*background, 255))
        flat.alpha_composite(small.convert("RGBA"))
        pixels = flat.convert("RGB")
    except Exception as error:  # Pillow raises many kinds of errors on broken files
        log.debug("logo not drawn: %s", error)
        return None
    return _half_blocks(pixels, background)


def _half_blocks(image: Image.Image, background: tuple[int, int, int]) -> Text:
    """One '▀' per two vertical pixels: foreground = top pixel, background = bottom pixel."""
    columns, rows = image.size
    raw = image.tobytes()  # RGB, row after row

    def pixel(x: int, y: int) -> tuple[int, int, int]:
        if y >= rows:
            return background  # an odd last row: its lower half is the background
        at = (y * columns + x) * 3
        return raw[at], raw[at + 1], raw[at + 2]

    text = Text(no_wrap=True, overflow="crop", end="")
    styles: dict[tuple[tuple[int, int, int], tuple[int, int, int]], Style] = {}
    for top_row in range(0, rows, 2):
        if top_row:
            text.append("\n")
        for x in range(columns):
            key = (pixel(x, top_row), pixel(x, top_row + 1))
            style = styles.get(key)
            if style is None:
                style = styles[key] = Style(
                    color=Color.from_rgb(*key[0]), bgcolor=Color.from_rgb(*key[1])
                )
            text.append(HALF_BLOCK, style)
    return text
