"""JSON that broke the reference servers' decoding: each must be refused with the protocol's
own error, on every route and socket."""

from __future__ import annotations


def deep(levels: int) -> str:
    """Arrays nested `levels` deep."""
    return "[" * levels + "]" * levels


DEEP = deep(50_000)
"""Nested far past any decoder's recursion limit."""

DEEP_FRAME = deep(20_000)
"""Nested past the recursion limit, and within a hub socket's 64 KiB frame cap."""

HUGE_NUMBER = "9" * 5_000
"""Past Python's 4,300-digit limit for converting an integer."""

LONE_SURROGATE = '"\\ud800"'
"""A lone high surrogate escape: valid JSON text, no valid UTF-8 string."""


def with_field(name: str, literal: str) -> str:
    """A JSON object whose `name` holds the raw JSON `literal`."""
    return '{"' + name + '": ' + literal + "}"


def bad_documents(field: str) -> dict[str, str]:
    """Each crashing document: on its own and as the value of `field`, by a readable name."""
    found = {"deep": DEEP, "huge number": HUGE_NUMBER, "lone surrogate": LONE_SURROGATE}
    for label, literal in list(found.items()):
        found[f"{label} in {field}"] = with_field(field, literal)
    return found
