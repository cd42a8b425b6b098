"""Reads of a streamed answer in batches, for a screen that draws some 24 frames a second."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["PacesReads"]


@runtime_checkable
class PacesReads(Protocol):
    """A streamed answer may be read in batches: a screen drawing some 24 frames a second
    loses nothing when a read rests a little and the next one takes several tokens at once."""

    def pace_reads(self, seconds: float) -> None:
        """Rest `seconds` after a read of an answer that waited (0: read as it comes)."""
        ...
