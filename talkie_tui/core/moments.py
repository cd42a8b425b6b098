"""Moments a server names: whether one is still ahead (a mute, a schedule's state)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

__all__ = ["ScheduleStatus", "still_ahead"]


def still_ahead(until: datetime | None, now: datetime | None = None) -> bool:
    """True while `until` (naive: UTC) is later than `now` (default: this moment)."""
    if until is None:
        return False
    if until.tzinfo is None:
        until = until.replace(tzinfo=UTC)
    return until > (now or datetime.now(UTC))


class ScheduleStatus:
    """What a schedule's `status` says: pending (its agent has not confirmed it), active,
    paused; the wire record and the app's model read it alike."""

    if TYPE_CHECKING:
        status: str

    @property
    def paused(self) -> bool:
        """True while it is paused (nothing is sent for it)."""
        return self.status == "paused"

    @property
    def pending(self) -> bool:
        """True until its agent confirmed it."""
        return self.status == "pending"
