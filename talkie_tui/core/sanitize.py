"""Server text is data: remove terminal control sequences before it can reach a screen."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Any

__all__ = ["SafeStr", "clean_text"]

# Whole escape sequences first (so their parameters do not show up as litter), then any lone
# control character that is left: C0 except tab and newline, DEL, and the C1 range.
#
# A sequence is removed whole only when it is terminated within the string: CSI with its final
# byte, OSC ending in BEL or ST, DCS/SOS/PM/APC ending in ST, another escape with its final byte.
# An introducer that never gets its end (a stray C1 from mis-decoded text, an ESC ] that is cut
# off) matches none of these and goes as a lone control character, so the text after it stays.
# A string's body stops at ESC and at any C1 control, so a failed attempt scans only up to the
# next introducer, and the possessive quantifiers never backtrack: the cost stays linear.
_SEQUENCES = re.compile(
    r"""
      (?:\x1b\[|\x9b) [0-?]*+ [ -/]*+ [@-~]                                # CSI ... final byte
    | (?:\x1b\]|\x9d) [^\x07\x1b\x80-\x9f]*+ (?:\x07|\x1b\\|\x9c)          # OSC ... BEL or ST
    | (?:\x1b[PX^_]|[\x90\x98\x9e\x9f]) [^\x1b\x80-\x9f]*+ (?:\x1b\\|\x9c)  # DCS/SOS/PM/APC ... ST
    | \x1b (?: [ -/]++ [0-~] | [0-OQ-WYZ\\`-~] )                           # other escape ... final
    | [\x00-\x08\x0b-\x1f\x7f-\x9f]                                        # a lone control
    """,
    re.VERBOSE,
)


def clean_text(text: str) -> str:
    """Return `text` without terminal control sequences; newline and tab are kept, CRLF is LF."""
    if text.isprintable():
        return text
    # CR and LF are no introducer, parameter or terminator, and a string body holds both: so
    # turning CRLF into LF first removes the same sequences, and `sub` with a plain string
    # stays in C (no Python call per match, which would cost 0.3 s per megabyte of controls).
    return _SEQUENCES.sub("", text.replace("\r\n", "\n"))


if TYPE_CHECKING:
    from pydantic import AfterValidator

    SafeStr = Annotated[str, AfterValidator(clean_text)]
    """A string from the server, cleaned of control sequences as it is parsed."""
else:

    def __getattr__(name: str) -> Any:
        """`SafeStr`, made when a model module first asks: cleaning text (`talkie --help`,
        `talkie servers`) does not import pydantic."""
        if name != "SafeStr":
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        from pydantic import AfterValidator

        return Annotated[str, AfterValidator(clean_text)]
