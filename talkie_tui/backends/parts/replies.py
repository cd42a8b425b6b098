"""A message that answers an earlier one of the thread (where `capabilities.replies`)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["Replying"]


@runtime_checkable
class Replying(Protocol):
    """An outgoing message that may answer an earlier message, by its id."""

    reply_to: str | None
