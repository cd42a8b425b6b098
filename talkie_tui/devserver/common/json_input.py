"""JSON from a client, decoded so that no input can crash a server: every reference server's
HTTP bodies and socket frames go through `decode`.

Python's own decoder recurses once per nesting level (50,000 levels raise RecursionError),
refuses integers past 4,300 digits with a bare ValueError, accepts NaN and Infinity, and lets a
lone surrogate (`"\\ud800"`) through into a string that fails later, when it is stored or sent.
`decode` refuses all of these with one error, `JsonInputError`, that each server turns into its
own answer (a 422 or 400, or an error frame on a socket).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

MAX_DEPTH = 64
"""Nesting no protocol of ours comes near (the deepest real body is under ten levels)."""

MAX_NUMBER_CHARS = 100
"""The longest number literal accepted: far past any id, size or count, far below Python's
4,300-digit limit (and the quadratic cost of converting such a number)."""

# A JSON string or one bracket: what the depth scan looks at (strings skipped whole). An
# unterminated string runs to the end (possessively), so no input makes the scan quadratic.
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*+(?:"|\\?\Z)|[\[\]{}]', re.DOTALL)


class JsonInputError(ValueError):
    """The input is not a JSON document this server accepts (the message says why).

    `document` is the decoded value when only a string in it was refused (a lone surrogate),
    so that a socket can still answer the frame by its `cid`; otherwise None.
    """

    def __init__(self, message: str, document: Any = None) -> None:
        super().__init__(message)
        self.document = document


def decode(raw: bytes | str) -> Any:
    """The JSON value of `raw` (strict UTF-8), or JsonInputError."""
    if isinstance(raw, bytes):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise JsonInputError("The JSON is not valid UTF-8.") from None
    else:
        text = raw
    _check_depth(text)
    try:
        value = json.loads(
            text, parse_int=_parse_int, parse_float=_parse_float, parse_constant=_no_constant
        )
    except RecursionError:  # only if the interpreter's stack is smaller than MAX_DEPTH needs
        raise JsonInputError(f"The JSON is nested deeper than {MAX_DEPTH} levels.") from None
    except json.JSONDecodeError as error:
        raise JsonInputError(f"The JSON is malformed: {error}.") from None
    if "\\u" in text and _has_surrogate(value):  # only an escape can make one
        raise JsonInputError("The JSON has a lone surrogate escape (such as \\ud800).", value)
    return value


def _check_depth(text: str) -> None:
    # Most bodies have fewer brackets than the limit in all: then no scan is needed.
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return
    depth = 0
    for match in _TOKENS.finditer(text):
        found = match.group()
        if found[0] == '"':
            continue  # a string: brackets inside it do not nest
        if found in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise JsonInputError(f"The JSON is nested deeper than {MAX_DEPTH} levels.")
        else:
            depth -= 1


def _too_long() -> JsonInputError:
    return JsonInputError(f"A number in the JSON is longer than {MAX_NUMBER_CHARS} characters.")


def _parse_int(literal: str) -> int:
    if len(literal) > MAX_NUMBER_CHARS:
        raise _too_long()
    return int(literal)


def _parse_float(literal: str) -> float:
    if len(literal) > MAX_NUMBER_CHARS:
        raise _too_long()
    value = float(literal)
    if not math.isfinite(value):
        raise JsonInputError(f"The number {literal[:20]} is out of range.")
    return value


def _no_constant(name: str) -> Any:
    raise JsonInputError(f"`{name}` is not JSON.")


def _has_surrogate(value: Any) -> bool:
    """Whether any string or key of a value holds a lone surrogate (iteratively: no recursion)."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if not encodable(item):
                return True
        elif isinstance(item, dict):
            if not all(encodable(key) for key in item):
                return True
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return False


def encodable(text: str) -> bool:
    """Whether a string can be written out as UTF-8 (it holds no lone surrogate)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
