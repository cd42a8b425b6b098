"""The server's logo drawn with half-block characters (fetched by the backend).

A bad logo is skipped, never fatal: every failure returns None and is logged at debug level.
"""

from __future__ import annotations

import io
import logging
import math
from typing import TYPE_CHECKING

from rich.color import Color
from rich.style import Style
from rich.text import Text

from talkie_tui.core.logo import MAX_LOGO_PIXELS, is_logo_image

if TYPE_CHECKING:
    from PIL import Image

__all__ = ["HALF_BLOCK", "render_half_blocks"]

log = logging.getLogger(__name__)

HALF_BLOCK = "▀"


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
    from PIL import Image  # decoding images only when there is a logo to draw

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
