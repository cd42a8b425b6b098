"""Schedules in words and back: a cadence typed as "daily 08:00", "weekdays 7:30", "weekly
mon,fri 09:00" or "once 2026-12-24 18:00" (`parse_cadence`), and a schedule as one line of
the panel (`schedule_line`). The zone is this computer's (`local_zone`)."""

from __future__ import annotations

import contextlib
import os
import re
from datetime import date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from talkie_tui.backends.parts.schedules import Cadence, Schedule
from talkie_tui.i18n import _

__all__ = ["CadenceError", "cadence_words", "local_zone", "parse_cadence", "schedule_line"]

_DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_TIME = re.compile(r"^(\d{1,2}):(\d{2})$")


class CadenceError(ValueError):
    """A cadence that does not read; its message says how to write one."""


def local_zone() -> str:
    """This computer's IANA time zone (`TZ`, else /etc/localtime's), else UTC."""
    candidates = [os.environ.get("TZ", "").lstrip(":")]
    with contextlib.suppress(OSError, IndexError):
        candidates.append(str(Path("/etc/localtime").resolve()).split("zoneinfo/", 1)[1])
    for name in candidates:
        try:
            if name:
                ZoneInfo(name)
                return name
        except (ZoneInfoNotFoundError, ValueError, OSError):
            continue
    return "UTC"


def _hint() -> str:
    return _(
        'Write when it runs as "daily 08:00", "weekdays 07:30", "weekly mon,fri 09:00" or '
        '"once 2026-12-24 18:00".'
    )


def _clock(text: str) -> str:
    found = _TIME.match(text)
    if found is None or int(found[1]) > 23 or int(found[2]) > 59:
        raise CadenceError(_("{time} is not a time of day (HH:MM).").format(time=text))
    return f"{int(found[1]):02d}:{found[2]}"


def parse_cadence(text: str, zone: str) -> Cadence:
    """A cadence typed by the person, in `zone` (CadenceError says what is wrong)."""
    words = text.lower().replace(",", " ").split()
    if len(words) < 2:
        raise CadenceError(_hint())
    repeat, rest = words[0], words[1:]
    if repeat in ("daily", "weekdays") and len(rest) == 1:
        return Cadence(repeat=repeat, time=_clock(rest[0]), timezone=zone)
    if repeat == "weekly" and len(rest) >= 2:
        days = [day[:3] for day in rest[:-1]]
        if any(day not in _DAYS for day in days):
            raise CadenceError(_("Name the days as mon, tue, wed, thu, fri, sat, sun."))
        return Cadence(repeat="weekly", time=_clock(rest[-1]), days=tuple(days), timezone=zone)
    if repeat == "once" and len(rest) == 2:
        try:
            day = date.fromisoformat(rest[0])
        except ValueError:
            raise CadenceError(
                _("{date} is not a date (YYYY-MM-DD).").format(date=rest[0])
            ) from None
        return Cadence(repeat="once", time=_clock(rest[1]), date=day.isoformat(), timezone=zone)
    raise CadenceError(_hint())


def cadence_words(cadence: Cadence) -> str:
    """When a schedule runs, for people: "daily at 08:00 (Europe/Prague)"."""
    if cadence.repeat == "weekdays":
        words = _("weekdays at {time}").format(time=cadence.time)
    elif cadence.repeat == "weekly":
        days = ", ".join(cadence.days)
        words = _("weekly on {days} at {time}").format(days=days, time=cadence.time)
    elif cadence.repeat == "once":
        words = _("once on {date} at {time}").format(date=cadence.date or "?", time=cadence.time)
    else:
        words = _("daily at {time}").format(time=cadence.time)
    return f"{words} ({cadence.timezone})"


def _when(moment: datetime | None) -> str:
    return moment.astimezone().strftime("%Y-%m-%d %H:%M") if moment is not None else "—"


def schedule_line(schedule: Schedule) -> str:
    """One schedule in the panel: title, cadence, next run, and whether it is paused or
    waits for the agent to confirm it."""
    line = _("{title} · {cadence} · next {when}").format(
        title=schedule.title or schedule.instruction[:60],
        cadence=cadence_words(schedule.cadence),
        when=_when(schedule.next_run_at),
    )
    if schedule.paused:
        line += " · " + _("paused")
    elif schedule.pending:
        line += " · " + _("waiting for the agent to confirm")
    return line
