"""`clean_text` on arbitrary strings, against a reference tokenizer written here from ECMA-48.

Rules (DESIGN "Server text is data", issue 10.5): a terminal control sequence that is terminated
within the string is removed whole; every other character that is not a control character
survives, in order — an introducer that never ends goes alone, it does not swallow the text
after it; and no ESC, CSI, OSC, DCS, other C1 or C0 control (except newline and tab) is left.

The oracle below is a character-by-character scanner. It shares nothing with the implementation
(no regular expression, no import from `sanitize`), so a mistake in one is caught by the other.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from talkie_tui.core.sanitize import clean_text
from tests.fuzz.kit import PIECES, fuzz_settings, nasty_text, unsafe

pytestmark = pytest.mark.fuzz

ESC, BEL, ST8 = "\x1b", "\x07", "\x9c"
CSI8, OSC8 = "\x9b", "\x9d"
STRINGS8 = "\x90\x98\x9e\x9f"  # DCS, SOS, PM, APC as single C1 characters
STRINGS7 = "PX^_"  # ... and as ESC P, ESC X, ESC ^, ESC _


def is_control(char: str) -> bool:
    """C0 (tab and newline excepted), DEL, C1."""
    code = ord(char)
    return (code < 0x20 and char not in "\t\n") or 0x7F <= code <= 0x9F


def _in(char: str, low: int, high: int) -> bool:
    return low <= ord(char) <= high


def _csi_end(text: str, j: int) -> int | None:
    """Parameters 0x30-0x3F, intermediates 0x20-0x2F, then a final byte 0x40-0x7E."""
    while j < len(text) and _in(text[j], 0x30, 0x3F):
        j += 1
    while j < len(text) and _in(text[j], 0x20, 0x2F):
        j += 1
    return j + 1 if j < len(text) and _in(text[j], 0x40, 0x7E) else None


def _string_end(text: str, j: int, bel_ends: bool) -> int | None:
    """A body of anything but ESC and C1 controls, then ST (ESC \\ or U+009C), or BEL for OSC."""
    while j < len(text):
        char = text[j]
        if bel_ends and char == BEL:
            return j + 1
        if char == ST8:
            return j + 1
        if char == ESC:
            return j + 2 if text[j + 1 : j + 2] == "\\" else None
        if _in(char, 0x80, 0x9F):
            return None
        j += 1
    return None


def _escape_end(text: str, i: int) -> int | None:
    """ESC, intermediates 0x20-0x2F, then a final byte 0x30-0x7E (ESC [, ], P, X, ^, _
    without intermediates introduce the longer sequences instead)."""
    j = i + 1
    while j < len(text) and _in(text[j], 0x20, 0x2F):
        j += 1
    if j == len(text) or not _in(text[j], 0x30, 0x7E):
        return None
    if j == i + 1 and text[j] in "[]" + STRINGS7:
        return None
    return j + 1


def sequence_end(text: str, i: int) -> int | None:
    """Where the terminated control sequence starting at `i` ends, or None when there is none."""
    char, after = text[i], text[i + 1 : i + 2]
    if char == CSI8 or (char == ESC and after == "["):
        return _csi_end(text, i + (1 if char == CSI8 else 2))
    if char == OSC8 or (char == ESC and after == "]"):
        return _string_end(text, i + (1 if char == OSC8 else 2), bel_ends=True)
    if char in STRINGS8 or (char == ESC and after and after in STRINGS7):
        return _string_end(text, i + (1 if char in STRINGS8 else 2), bel_ends=False)
    if char == ESC:
        return _escape_end(text, i)
    return None


def survivors(text: str) -> str:
    """The characters outside terminated sequences that are not control characters, in order
    (CR LF counts as a newline)."""
    kept: list[str] = []
    i = 0
    while i < len(text):
        end = sequence_end(text, i)
        if end is not None:
            i = end
            continue
        if text[i] == "\r" and text[i + 1 : i + 2] == "\n":
            kept.append("\n")
            i += 2
            continue
        if not is_control(text[i]):
            kept.append(text[i])
        i += 1
    return "".join(kept)


# The parts sequences are made of, so that terminated, unterminated and interrupted sequences
# all come up often, mixed with text (ASCII, Czech, and anything) and the kit's hostile pieces.
SEQUENCE_PARTS = [
    ESC,
    ESC + "[",
    ESC + "]",
    ESC + "P",
    ESC + "X",
    ESC + "^",
    ESC + "_",
    ESC + "(",
    ESC + " ",
    CSI8,
    OSC8,
    *STRINGS8,
    BEL,
    ST8,
    ESC + "\\",
    "\x85",
    "\x18",
    "\x00",
    "\r",
    "\n",
    "\r\n",
    "\t",
    "0",
    "12",
    ";",
    "?",
    " ",
    "!",
    "/",
    "m",
    "J",
    "@",
    "~",
    "[",
    "]",
    "\\",
    "P",
    "Ä",
    "č",
    "ř",
]

sequence_soup = st.lists(
    st.one_of(
        st.sampled_from(SEQUENCE_PARTS),
        st.sampled_from(PIECES),
        st.text(max_size=5),
        st.text(st.characters(min_codepoint=0, max_codepoint=0xFF), max_size=5),
    ),
    max_size=16,
).map("".join)


@given(st.one_of(sequence_soup, nasty_text, st.text()))
@example("text \x90after a stray DCS")
@example("\x1b]0;title, never ended")
@example("\x1b]0;cut by\x1b[31m colour\x1b[0m")
@example("\x9b12;3")
@example("\x1b(")
@fuzz_settings(400)
def test_every_character_outside_a_terminated_sequence_survives(text: str) -> None:
    """What stays is exactly what the oracle keeps: no visible character is lost or added."""
    assert clean_text(text) == survivors(text)


@given(st.one_of(sequence_soup, nasty_text, st.text()))
@fuzz_settings(300)
def test_no_control_character_reaches_the_output(text: str) -> None:
    """No ESC, CSI, OSC, DCS, other C1, DEL or C0 (except newline and tab); cleaning twice
    changes nothing more."""
    cleaned = clean_text(text)
    assert unsafe(cleaned) == []
    assert clean_text(cleaned) == cleaned


@given(st.text(st.characters(blacklist_categories=["Cc"])))
@fuzz_settings(100)
def test_text_without_control_characters_is_kept_as_it_is(text: str) -> None:
    """Markup, format characters and any script pass untouched."""
    assert clean_text(text) == text
