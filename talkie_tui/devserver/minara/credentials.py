"""Secrets a client writes for the agent (`PUT /v1/credentials/NAME`): in memory only.

Never stored, echoed or logged; test mode can ask whether one arrived and its SHA-256.
"""

from __future__ import annotations

import hashlib
import re

NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
PREFIX = "/v1/credentials/"
MAX_VALUE_CHARS = 8192


class Credentials:
    """The secrets written since the gateway started, by name."""

    def __init__(self) -> None:
        self._values: dict[str, str] = {}

    def __repr__(self) -> str:
        return f"Credentials(names={sorted(self._values)})"

    def put(self, name: str, value: str) -> None:
        """Keep (or replace) a secret."""
        self._values[name] = value

    def has(self, name: str) -> bool:
        """Whether a secret of that name was written."""
        return name in self._values

    def fingerprint(self, name: str) -> str | None:
        """The SHA-256 hex of a secret (for test mode), None when it was not written."""
        value = self._values.get(name)
        return hashlib.sha256(value.encode()).hexdigest() if value is not None else None


def endpoint_for(name: str) -> str:
    """The `writeEndpoint` a secret question names."""
    return PREFIX + name


def name_of(endpoint: str) -> str | None:
    """The credential name of a `writeEndpoint`, None when it is not one of ours."""
    if not endpoint.startswith(PREFIX):
        return None
    name = endpoint[len(PREFIX) :]
    return name if NAME.fullmatch(name) else None
