"""Server-side search of the person's threads (`capabilities.search`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

__all__ = ["SearchHit", "Searches"]


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One match of a server-side search: where it is, and its words around the match."""

    thread_id: str
    message_id: str | None
    title: str
    snippet: str  # the match between « and »


@runtime_checkable
class Searches(Protocol):
    """Server-side search of the person's threads (`capabilities.search`)."""

    async def search(self, query: str) -> list[SearchHit]:
        """The best matches of `query`, best first."""
        ...
