"""Server-generated identifiers."""

from __future__ import annotations

import secrets


def new_id(prefix: str) -> str:
    """A random id such as `a_3f9c0e1b2d4a`."""
    return f"{prefix}_{secrets.token_hex(6)}"
