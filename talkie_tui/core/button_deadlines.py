"""A hub button that may be tapped only until a moment: the deadline written in its id.

A Cuckoo message keeps its buttons for ever: an agent cannot take one back. talkie's bridge
offers an Undo that is good only until the action's undo window ends, so it writes that moment
into the button's id (`act:KEY:cancel:until.1765000000`, seconds since the epoch), within the
hub's id rule (`[A-Za-z0-9_.:-]{1,64}`). talkie reads it back and takes the button away when
the moment has passed; any other app shows the button, and the bridge answers a late tap with
a polite "too late". An id without the suffix has no deadline.
"""

from __future__ import annotations

import re

__all__ = ["MAX_ID_CHARS", "deadline_of", "lapsed", "with_deadline", "without_deadline"]

MAX_ID_CHARS = 64
_SUFFIX = re.compile(r":until\.(\d{1,12})$")


def with_deadline(button_id: str, until: float) -> str:
    """`button_id` with the deadline `until` written in, where it fits the hub's id length."""
    marked = f"{button_id}:until.{int(until)}"
    return marked if len(marked) <= MAX_ID_CHARS else button_id


def deadline_of(button_id: str | None) -> float | None:
    """The deadline written in a button's id (seconds since the epoch), or None."""
    found = _SUFFIX.search(button_id or "")
    return float(found.group(1)) if found else None


def lapsed(button_id: str | None, now: float) -> bool:
    """True for a button whose deadline has passed at `now` (seconds since the epoch)."""
    until = deadline_of(button_id)
    return until is not None and now >= until


def without_deadline(button_id: str) -> str:
    """The id as it was before its deadline was written in."""
    return _SUFFIX.sub("", button_id)
