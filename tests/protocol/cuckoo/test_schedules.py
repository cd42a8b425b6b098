"""The schedule models of the client API and the `schedule.changed` push: read as the hub
sends them, a cadence sent with only the fields its repeat uses."""

from __future__ import annotations

from talkie_tui.protocol.cuckoo.pushes import SchedulePush, parse_push
from talkie_tui.protocol.cuckoo.schedules import Cadence, Schedule

SCHEDULE = {
    "id": "sch_0123456789abcdefghjkmnpqrs",
    "conversation_id": "cnv_0123456789abcdefghjkmnpqrs",
    "agent_id": "agt_0123456789abcdefghjkmnpqrs",
    "title": "News\x1b[31m",
    "instruction": "Send me the news",
    "cadence": {"repeat": "weekly", "time": "07:30", "days": ["mon", 3, "fri"], "timezone": "UTC"},
    "status": "paused",
    "created_by": "user",
    "next_run_at": "2026-12-07T07:30:00.000Z",
    "last_run_at": None,
    "missed_at": None,
    "created_at": "2026-12-06T10:00:00.000Z",
    "updated_at": "2026-12-06T10:00:00.000Z",
    "something_new": True,
}


def test_a_schedule_reads_as_sent_and_cleaned() -> None:
    schedule = Schedule.model_validate(SCHEDULE)
    assert schedule.title == "News"  # no control sequences reach the screen
    assert schedule.cadence.days == ("mon", "fri")
    assert schedule.paused and not schedule.pending
    assert schedule.next_run_at is not None and schedule.last_run_at is None


def test_the_push_of_a_change() -> None:
    push = parse_push(
        {
            "type": "schedule.changed",
            "data": {"conversation_id": SCHEDULE["conversation_id"], "schedule": SCHEDULE},
        }
    )
    assert isinstance(push, SchedulePush) and push.deleted is False
    assert push.schedule.id == SCHEDULE["id"]
    assert parse_push({"type": "schedule.changed", "data": {"schedule": SCHEDULE}}) is None


def test_a_cadence_sends_only_what_its_repeat_uses() -> None:
    weekly = Cadence(repeat="weekly", time="07:30", days=("mon",), date="2026-01-01")
    assert weekly.wire() == {
        "repeat": "weekly",
        "time": "07:30",
        "timezone": "UTC",
        "days": ["mon"],
    }
    once = Cadence(repeat="once", time="18:00", days=("mon",), date="2026-12-24", timezone="UTC")
    assert once.wire() == {
        "repeat": "once",
        "time": "18:00",
        "timezone": "UTC",
        "date": "2026-12-24",
    }
    assert Cadence(repeat="daily", time="08:00").wire() == {
        "repeat": "daily",
        "time": "08:00",
        "timezone": "UTC",
    }
