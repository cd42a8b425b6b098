"""Server text is data: remove terminal control sequences before it can reach a screen."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator

__all__ = ["SafeStr", "clean_text"]

# Whole escape sequences first (so their parameters do not show up as litter), then any lone
# control character that is left: C0 except tab and newline, DEL, and the C1 range.
_SEQUENCES = re.compile(
    r"""
      \x1b\[ [0-?]* [ -/]* [@-~]?              # CSI ... final
    | \x9b [0-?]* [ -/]* [@-~]?                # 8-bit CSI
    | (?:\x1b\]|\x9d) [^\x07\x1b\x9c]* (?:\x07|\x1b\\|\x9c)?   # OSC ... BEL/ST
    | (?:\x1b[PX^_]|[\x90\x98\x9e\x9f]) [^\x1b\x9c]* (?:\x1b\\|\x9c)?  # DCS/SOS/PM/APC
    | \x1b [ -/]* [0-~]?                       # any other escape
    | \r\n
    | [\x00-\x08\x0b-\x1f\x7f-\x9f]
    """,
    re.VERBOSE,
)


def _replace(match: re.Match[str]) -> str:
    return "\n" if match.group() == "\r\n" else ""


def clean_text(text: str) -> str:
    """Return `text` without terminal control sequences; newline and tab are kept."""
    if text.isprintable():
        return text
    return _SEQUENCES.sub(_replace, text)


SafeStr = Annotated[str, AfterValidator(clean_text)]
"""A string from the server, cleaned of control sequences as it is parsed."""
