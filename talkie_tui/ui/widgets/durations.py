"""Durations as a clock shows them: `9:58`, `01:23`, `1:02:03`."""

from __future__ import annotations

__all__ = ["clock_text"]


def clock_text(total: int, *, pad_minutes: bool = False) -> str:
    """`total` seconds as `m:ss` (`mm:ss` with `pad_minutes`), or `h:mm:ss` from an hour."""
    minutes, seconds = divmod(total, 60)
    if minutes < 60:
        return f"{minutes:02d}:{seconds:02d}" if pad_minutes else f"{minutes}:{seconds:02d}"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}"
