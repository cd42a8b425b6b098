"""Plain text in terminal cells: widths measured from `unicodedata`, the way terminals (and Rich,
for everything but the newest emoji) count them, and cells fitted, clipped and aligned.

Nothing here imports Textual or Rich: `talkie ask` starts fast, and the conversation model's
layer stays free of the UI."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

_ZWJ = "\u200d"  # joins the next character into the emoji before it
_VS16 = "\ufe0f"  # asks for the emoji form: a narrow symbol becomes two cells wide
_ZERO_WIDTH = frozenset({"Mn", "Me", "Mc", "Cf", "Zl", "Zp"})


@lru_cache(maxsize=4096)
def _char_width(char: str) -> int:
    """How many cells one character takes on its own: 0, 1 or 2."""
    code = ord(char)
    if code < 32 or 0x7F <= code < 0xA0:
        return 0
    if code < 0x300:
        return 1
    # Hangul vowels and finals, and skin-tone modifiers, join the character before them.
    if 0x1160 <= code <= 0x11FF or 0xD7B0 <= code <= 0xD7FF or 0x1F3FB <= code <= 0x1F3FF:
        return 0
    if unicodedata.category(char) in _ZERO_WIDTH:
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def _clusters(text: str) -> Iterator[tuple[str, int]]:
    """`text` as what a terminal draws as one glyph each, with its width in cells."""
    cluster, width, index = "", 0, 0
    while index < len(text):
        char = text[index]
        if cluster and char == _ZWJ:
            cluster += text[index : index + 2]  # the joined character adds no width
            index += 2
            continue
        char_width = _char_width(char)
        if cluster and char_width == 0:
            if char == _VS16 and width == 1 and unicodedata.category(cluster[0]) == "So":
                width = 2
            cluster += char
        else:
            if cluster:
                yield cluster, width
            cluster, width = char, char_width
        index += 1
    if cluster:
        yield cluster, width


def cell_len(text: str) -> int:
    """How many terminal cells `text` takes."""
    if text.isascii() and text.isprintable():
        return len(text)
    return sum(width for _cluster, width in _clusters(text))


def set_cell_size(text: str, width: int) -> str:
    """`text` cut or padded with spaces to exactly `width` cells (a wide character that would
    be cut in half becomes a space)."""
    if width <= 0:
        return ""
    if text.isascii() and text.isprintable():
        return text[:width].ljust(width)
    kept, used = [], 0
    for cluster, size in _clusters(text):
        if used + size > width:
            break
        kept.append(cluster)
        used += size
    return "".join(kept) + " " * (width - used)


# A number as people write it: -1,234.50, 12 %, $3.20, 1 234 Kč, +0.5 BTC (dates are not).
_NUMBER = (
    r"^[+\-−]?[$€£¥]?\s?\d{1,3}(?:[,\s\u00a0\u202f']?\d{3})*(?:[.,]\d+)?\s?"
    r"(?:%|[^\W\d_]{1,4})?$"
)


def cell_text(value: Any) -> str:
    """A JSON value as one line of text (None is empty; newlines and tabs become spaces)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        value = int(value)
    text = value if isinstance(value, str) else str(value)
    return " ".join(text.split())


def is_number(value: Any) -> bool:
    """True for a JSON number, or text that reads as one (money, a percentage…)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return True
    # `re` caches the compiled pattern: compiled on first use, not when `talkie ask` starts.
    return isinstance(value, str) and bool(re.match(_NUMBER, value.strip()))


def fit(text: str, width: int, *, right: bool = False) -> str:
    """`text` padded or cut (with "…") to exactly `width` cells."""
    if width <= 0:
        return ""
    if cell_len(text) > width:
        return set_cell_size(text, width - 1) + "…"
    pad = " " * (width - cell_len(text))
    return pad + text if right else text + pad


def clip(text: str, width: int) -> str:
    """`text` cut (with "…") to at most `width` cells, never padded."""
    return fit(text, width) if cell_len(text) > width else text
