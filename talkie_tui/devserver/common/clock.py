"""Wall-clock helpers: every timestamp on the wire is ISO-8601 UTC with a `Z`."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta


def now() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)


def iso(moment: datetime) -> str:
    """Format as `2026-10-22T10:00:00.123Z`; fixed width, so string order is time order."""
    # isoformat is about twice as fast as strftime, and the hub writes several per message.
    return moment.astimezone(UTC).isoformat(timespec="milliseconds")[:23] + "Z"


def parse_iso(text: str) -> datetime:
    """Parse a timestamp written by `iso`."""
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def later(seconds: float, start: datetime | None = None) -> datetime:
    """`seconds` after `start` (default: now)."""
    return (start or now()) + timedelta(seconds=seconds)


def start_of_today() -> datetime:
    """Midnight UTC of the current day (usage counters reset then)."""
    return now().replace(hour=0, minute=0, second=0, microsecond=0)


def epoch_ms() -> int:
    """Milliseconds since the epoch, the AG-UI `timestamp` unit."""
    return time.time_ns() // 1_000_000
