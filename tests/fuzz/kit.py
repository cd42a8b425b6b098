"""Hypothesis settings and strategies shared by the fuzz tests.

Example counts are bounded so the whole suite stays fast; with CI=true the examples are
derandomized (the same every run), elsewhere each run explores new ones. No example database
is written into the repository.
"""

from __future__ import annotations

import os
import re
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

CI = os.environ.get("CI", "").lower() == "true"


def fuzz_settings(examples: int, *, derandomize: bool = CI) -> settings:
    """Bounded, deadline-free settings; derandomized under CI (or when asked)."""
    return settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=derandomize,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


# C0 controls except tab and newline, DEL, and the C1 range: none may reach a screen.
FORBIDDEN = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def unsafe(*texts: object) -> list[str]:
    """The forbidden control characters among `texts` (non-strings are ignored)."""
    found = {c for text in texts if isinstance(text, str) for c in FORBIDDEN.findall(text)}
    return sorted(repr(c) for c in found)


# Pieces a hostile server would use: escape sequences, lone C0/C1 controls, line and paragraph
# separators, markup, HTML and Markdown entities for controls.
PIECES = [
    "\x1b",
    "\x1b[2J",
    "\x1b[31m",
    "\x1b]52;c;cHduZWQ=\x07",
    "\x1b]8;;https://evil.example/\x1b\\",
    "\x1bP+q\x1b\\",
    "\x9b",
    "\x9b2J",
    "\x9d0;t\x9c",
    "\x85",
    "\x00",
    "\x07",
    "\x08",
    "\r",
    "\r\n",
    "\n",
    "\t",
    "\x0b",
    "\x0c",
    "\x7f",
    "\u2028",
    "\u2029",
    "\ufeff",
    "\u202e",
    "[b]",
    "[/]",
    "[@click=app.quit]",
    "[link=https://evil.example]",
    "<script>",
    "&#27;",
    "&#x1b;",
    "&#13;",
    "&#12;",
    "&#x85;",
    "&#155;",
    "**",
    "`",
    "```",
    "[x](javascript:alert(1))",
    "[y](https://example.org/y)",
    "\\",
]

nasty_text = st.lists(st.one_of(st.text(max_size=6), st.sampled_from(PIECES)), max_size=8).map(
    "".join
)
"""Short strings mixing ordinary text with control sequences and markup."""

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**64),
    st.floats(allow_nan=False, allow_infinity=False),
    nasty_text,
)


def json_like(keys: st.SearchStrategy[str] | None = None) -> st.SearchStrategy[Any]:
    """Arbitrary JSON values (nested lists and objects), keys from `keys` or anywhere."""
    key = st.one_of(keys, nasty_text) if keys is not None else nasty_text
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4), st.dictionaries(key, inner, max_size=5)
        ),
        max_leaves=8,
    )
