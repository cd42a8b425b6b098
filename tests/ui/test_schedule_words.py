"""A cadence typed in words, read back (`parse_cadence`), and a schedule as one line of the
panel (`schedule_line`)."""

from __future__ import annotations

import pytest

from talkie_tui.backends.parts.schedules import Cadence, Schedule
from talkie_tui.ui.chat.schedule_words import CadenceError, parse_cadence, schedule_line


@pytest.mark.parametrize(
    ("typed", "wire"),
    [
        ("daily 8:05", {"repeat": "daily", "time": "08:05", "timezone": "Europe/Prague"}),
        ("Weekdays 07:30", {"repeat": "weekdays", "time": "07:30", "timezone": "Europe/Prague"}),
        (
            "weekly mon,Friday 09:00",
            {
                "repeat": "weekly",
                "time": "09:00",
                "days": ["mon", "fri"],
                "timezone": "Europe/Prague",
            },
        ),
        (
            "once 2026-12-24 18:00",
            {"repeat": "once", "time": "18:00", "date": "2026-12-24", "timezone": "Europe/Prague"},
        ),
    ],
)
def test_cadences_in_words(typed: str, wire: dict[str, object]) -> None:
    assert parse_cadence(typed, "Europe/Prague").wire() == wire


@pytest.mark.parametrize(
    "typed",
    [
        "",
        "daily",
        "hourly 08:00",
        "daily 24:00",
        "weekly 09:00",
        "weekly xyz 09:00",
        "once 2026-02-30 10:00",
        "daily 08:00 extra",
    ],
)
def test_what_does_not_read_says_how_to_write_it(typed: str) -> None:
    with pytest.raises(CadenceError):
        parse_cadence(typed, "UTC")


def test_a_line_of_the_panel() -> None:
    cadence = Cadence(repeat="weekly", time="09:00", days=("mon", "fri"), timezone="UTC")
    pending = Schedule(id="sch_1", title="News", cadence=cadence, status="pending")
    assert schedule_line(pending) == (
        "News · weekly on mon, fri at 09:00 (UTC) · next — · waiting for the agent to confirm"
    )
    paused = Schedule(id="sch_1", title="News", cadence=cadence, status="paused")
    assert schedule_line(paused).endswith(" · paused")
    active = Schedule(id="sch_1", title="News", cadence=cadence, status="active")
    assert schedule_line(active).endswith("· next —")
