"""Schedules: an agent that declares `supports_schedules` runs instructions on a timer in a
conversation; the hub keeps them, shows them and enforces them (`notes/cuckoo.md` §5.4).

A person asks for one (`pending`), and the agent hears `schedule.requested` and confirms it
with `PATCH {"status": "active", "title"}`, or declines by deleting it. A person's change of
the instruction or the cadence makes it pending again (`schedule.updated`); pausing, resuming
and deleting are told to the agent too (`schedule.updated`, `schedule.deleted`). Only the
person resumes their own pause (`403 paused_by_person`). A send with `schedule_id` for a
paused or deleted schedule is refused (`409 schedule_paused`, `schedule_deleted`). Every
change is pushed to the person's devices as `schedule.changed`.
"""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from talkie_tui.devserver.common import clock
from talkie_tui.devserver.common.sqlite import Row
from talkie_tui.devserver.cuckoo import ids, shapes
from talkie_tui.devserver.cuckoo.bodies import one_line
from talkie_tui.devserver.cuckoo.conversations import Conversations, check_id
from talkie_tui.devserver.cuckoo.errors import ApiError, conflict, forbidden, invalid, not_found
from talkie_tui.devserver.cuckoo.live import ClientFeeds
from talkie_tui.devserver.cuckoo.outbox import Outbox
from talkie_tui.devserver.cuckoo.storage import Storage

MAX_PER_CHAT = 10
INSTRUCTION_CHARS = 500
TITLE_CHARS = 60
REPEATS = ("once", "daily", "weekdays", "weekly")
DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
ZONE_CHARS = 64
CADENCE_FIELDS = frozenset({"repeat", "time", "days", "date", "timezone"})
_TIME = re.compile(r"^([01]\d|2[0-3]):[0-5]\d$", re.ASCII)
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$", re.ASCII)
# How far ahead the next run is looked for (a weekly cadence repeats within 8 days).
LOOK_AHEAD_DAYS = 8


def _bad_cadence(message: str) -> ApiError:
    return invalid("invalid_cadence", message, "cadence")


def check_cadence(raw: Any) -> dict[str, Any]:
    """A cadence as the hub keeps it: `repeat`, `time` "HH:MM", `days` (weekly only), `date`
    (once only) and an IANA `timezone` (UTC when none is given); 422 `invalid_cadence`."""
    if not isinstance(raw, dict) or set(raw) - CADENCE_FIELDS:
        raise _bad_cadence("`cadence` is {repeat, time, days?, date?, timezone?}.")
    repeat, at = raw.get("repeat"), raw.get("time")
    if repeat not in REPEATS:
        raise _bad_cadence("`repeat` is once, daily, weekdays or weekly.")
    if not isinstance(at, str) or not _TIME.fullmatch(at):
        raise _bad_cadence("`time` is HH:MM, on the 24-hour clock.")
    zone = raw.get("timezone") or "UTC"
    try:
        ZoneInfo(zone) if isinstance(zone, str) and len(zone) <= ZONE_CHARS else None
    except (ZoneInfoNotFoundError, ValueError, OSError):  # a path, a NUL, a folder
        zone = None
    if isinstance(zone, str) and len(zone) > ZONE_CHARS:
        zone = None
    if not isinstance(zone, str):
        raise _bad_cadence("`timezone` is an IANA zone name, such as Europe/Prague.")
    cadence: dict[str, Any] = {"repeat": repeat, "time": at, "timezone": zone}
    days = raw.get("days")
    if repeat == "weekly":
        if not isinstance(days, list) or not days or any(d not in DAYS for d in days):
            raise _bad_cadence("A weekly cadence names its `days` (mon to sun).")
        cadence["days"] = [d for d in DAYS if d in days]
    elif days not in (None, []):
        raise _bad_cadence("Only a weekly cadence names days.")
    when = raw.get("date")
    if repeat == "once":
        if not isinstance(when, str) or not _DATE.fullmatch(when):
            raise _bad_cadence("A cadence of once names its `date` (YYYY-MM-DD).")
        try:
            date.fromisoformat(when)
        except ValueError:
            raise _bad_cadence("`date` is not a day of the calendar.") from None
        cadence["date"] = when
    elif when is not None:
        raise _bad_cadence("Only a cadence of once names a date.")
    return cadence


def next_run(cadence: dict[str, Any], after: datetime) -> str | None:
    """When a cadence runs next after `after` (UTC, ISO), or None (a once that is past)."""
    zone = ZoneInfo(cadence["timezone"])
    hour, minute = (int(part) for part in cadence["time"].split(":"))
    local = after.astimezone(zone)
    if cadence["repeat"] == "once":
        moment = datetime.combine(
            date.fromisoformat(cadence["date"]), time(hour, minute), tzinfo=zone
        )
        return clock.iso(moment) if moment > after else None
    for offset in range(LOOK_AHEAD_DAYS):
        day = local.date() + timedelta(days=offset)
        weekday = DAYS[day.weekday()]
        if cadence["repeat"] == "weekdays" and weekday in ("sat", "sun"):
            continue
        if cadence["repeat"] == "weekly" and weekday not in cadence["days"]:
            continue
        moment = datetime.combine(day, time(hour, minute), tzinfo=zone)
        if moment > after:
            return clock.iso(moment)
    return None


def schedule_json(row: Row) -> dict[str, Any]:
    """A schedule as the client and agent APIs show it."""
    return {
        "id": row["id"],
        "conversation_id": row["conversation_id"],
        "agent_id": row["agent_id"],
        "title": row["title"],
        "instruction": row["instruction"],
        "cadence": row["cadence"],
        "status": row["status"],
        "created_by": row["created_by"],
        "next_run_at": row["next_run_at"],
        "last_run_at": row["last_run_at"],
        "missed_at": row["missed_at"],
        "created_at": row["created_at"],
        "updated_at": row["updated_at"],
    }


def _instruction(raw: Any) -> str:
    if not isinstance(raw, str) or not 0 < len(raw.strip()) <= INSTRUCTION_CHARS:
        raise invalid(
            "invalid_instruction",
            f"`instruction` is 1 to {INSTRUCTION_CHARS} characters.",
            "instruction",
        )
    return raw.strip()


def _title(raw: Any) -> str:
    if not isinstance(raw, str):
        raise invalid("invalid_title", "`title` must be a string.", "title")
    return one_line(raw, "title", "invalid_title", 1, TITLE_CHARS)


def _edits(body: dict[str, Any]) -> dict[str, Any]:
    """The title, instruction and cadence a change gives, checked."""
    checks = {"title": _title, "instruction": _instruction, "cadence": check_cadence}
    return {name: check(body[name]) for name, check in checks.items() if name in body}


def title_of(instruction: str) -> str:
    """The title of a schedule a person asked for, until its agent names it: the start of
    the instruction's first line."""
    first = instruction.strip().splitlines()[0].strip()
    return first if len(first) <= TITLE_CHARS else first[: TITLE_CHARS - 1].rstrip() + "…"


class Schedules:
    """The rules of schedules, for people and agents."""

    def __init__(
        self, storage: Storage, conversations: Conversations, outbox: Outbox, feeds: ClientFeeds
    ) -> None:
        self.storage = storage
        self.conversations = conversations
        self.outbox = outbox
        self.feeds = feeds

    # lookups

    def _agent_of(self, conversation_id: str) -> Row:
        """The conversation's agent, if it runs schedules (422 `schedules_not_supported`)."""
        for part in self.storage.participants_named(conversation_id):
            if part["kind"] == "agent" and not part["blocked"]:
                agent = self.storage.get_agent(part["member_id"])
                if agent is not None and agent["supports_schedules"]:
                    return agent
        raise invalid("schedules_not_supported", "The agent here runs no schedules.")

    def _target(self, member_id: str, conversation_id: str, schedule_id: str) -> Row:
        """A schedule, not deleted, of a conversation `member_id` is in (an agent: one it
        runs); else 404."""
        self.conversations.for_member(member_id, conversation_id)
        check_id(schedule_id, "sch", "schedule")
        row = self.storage.get_schedule(schedule_id)
        if (
            row is None
            or row["conversation_id"] != conversation_id
            or row["status"] == "deleted"
            or (ids.is_id(member_id, "agt") and row["agent_id"] != member_id)
        ):
            raise not_found("schedule_not_found", "There is no such schedule here.")
        return row

    def listed(self, conversation_id: str) -> list[dict[str, Any]]:
        """A conversation's schedules (deleted ones left out)."""
        return [schedule_json(row) for row in self.storage.schedules_in(conversation_id)]

    def refs(self, schedule_ids: list[str]) -> dict[str, dict[str, str]]:
        """`{id, title}` of these schedules by id (what a message sent for one shows)."""
        titles = self.storage.schedule_titles(schedule_ids)
        return {sid: {"id": sid, "title": title} for sid, title in titles.items()}

    # a person

    def request(self, user_id: str, conversation_id: str, body: dict[str, Any]) -> Row:
        """A person asks for a schedule: pending until the agent confirms it."""
        self.conversations.for_member(user_id, conversation_id)
        agent = self._agent_of(conversation_id)
        instruction = _instruction(body.get("instruction"))
        cadence = check_cadence(body.get("cadence"))
        return self._create(conversation_id, agent["id"], "user", instruction, cadence, None)

    def change_by_person(
        self, user_id: str, conversation_id: str, schedule_id: str, body: dict[str, Any]
    ) -> Row:
        """Pause, resume, or change the instruction or cadence (pending again then)."""
        row = self._target(user_id, conversation_id, schedule_id)
        fields = _edits(body)
        if fields:
            fields["confirmed"] = False  # the agent confirms what it is to run
        paused = body.get("paused")
        if paused is not None and not isinstance(paused, bool):
            raise invalid("invalid_paused", "`paused` must be true or false.", "paused")
        confirmed = fields.get("confirmed", row["confirmed"])
        if paused is True:
            fields.update(status="paused", paused_by="user")
        elif paused is False:
            fields.update(status="active" if confirmed else "pending", paused_by=None)
        elif fields and row["status"] != "paused":  # changed while paused: it stays paused
            fields["status"] = "pending"
        if not fields:
            return row
        return self._changed(row, fields, tell_agent=True)

    def delete_by_person(self, user_id: str, conversation_id: str, schedule_id: str) -> None:
        """A person deletes a schedule: the agent hears `schedule.deleted`."""
        row = self._target(user_id, conversation_id, schedule_id)
        self._changed(row, {"status": "deleted"}, tell_agent=True)

    # an agent

    def create_by_agent(self, agent_id: str, conversation_id: str, body: dict[str, Any]) -> Row:
        """An agent sets up a schedule of its own (active at once)."""
        self.conversations.for_member(agent_id, conversation_id)
        agent = self._agent_of(conversation_id)
        if agent["id"] != agent_id:
            raise invalid("schedules_not_supported", "You run no schedules here.")
        title = _title(body.get("title"))
        instruction = _instruction(body.get("instruction"))
        cadence = check_cadence(body.get("cadence"))
        return self._create(conversation_id, agent_id, "agent", instruction, cadence, title)

    def change_by_agent(
        self, agent_id: str, conversation_id: str, schedule_id: str, body: dict[str, Any]
    ) -> Row:
        """An agent confirms (`status: active`), names, changes or pauses a schedule; a
        person's pause stays until the person resumes it (403 `paused_by_person`)."""
        row = self._target(agent_id, conversation_id, schedule_id)
        fields = _edits(body)
        status = body.get("status")
        if status is not None:
            if status not in ("active", "paused"):
                raise invalid("invalid_status", "`status` is active or paused.", "status")
            if status == "active":
                if row["status"] == "paused" and row["paused_by"] == "user":
                    raise forbidden("paused_by_person", "Only the person resumes their pause.")
                fields.update(status="active", paused_by=None, confirmed=True)
            elif row["status"] != "paused":
                fields.update(status="paused", paused_by="agent")
        if not fields:
            return row
        return self._changed(row, fields, tell_agent=False)

    def delete_by_agent(self, agent_id: str, conversation_id: str, schedule_id: str) -> None:
        """An agent deletes (or declines) a schedule."""
        row = self._target(agent_id, conversation_id, schedule_id)
        self._changed(row, {"status": "deleted"}, tell_agent=False)

    def check_send(self, agent_id: str, conversation_id: str, schedule_id: Any) -> str:
        """The schedule a send of the agent is for, if it may run (404 unknown, 409
        `schedule_paused` or `schedule_deleted`)."""
        row = None
        if isinstance(schedule_id, str) and ids.is_id(schedule_id, "sch"):
            row = self.storage.get_schedule(schedule_id)
        if row is None or row["conversation_id"] != conversation_id or row["agent_id"] != agent_id:
            raise not_found("schedule_not_found", "There is no such schedule here.")
        if row["status"] == "deleted":
            raise conflict("schedule_deleted", "The person deleted this schedule.", "schedule_id")
        if row["status"] == "paused":
            raise conflict("schedule_paused", "This schedule is paused.", "schedule_id")
        return str(row["id"])

    def ran(self, schedule_id: str) -> None:
        """A message was sent for a schedule: when it ran, and when it runs next."""
        row = self.storage.get_schedule(schedule_id)
        if row is None:
            return
        now = clock.now()
        fields = {
            "last_run_at": clock.iso(now),
            "next_run_at": next_run(row["cadence"], now),
            "missed_at": None,
        }
        self._changed(row, fields, tell_agent=False, stamp=False)

    # shared

    def _create(
        self,
        conversation_id: str,
        agent_id: str,
        created_by: str,
        instruction: str,
        cadence: dict[str, Any],
        title: str | None,
    ) -> Row:
        if len(self.storage.schedules_in(conversation_id)) >= MAX_PER_CHAT:
            raise conflict(
                "too_many_schedules", f"A conversation has at most {MAX_PER_CHAT} schedules."
            )
        now = clock.now()
        by_agent = created_by == "agent"
        row = self.storage.add_schedule(
            {
                "id": ids.new_id("sch"),
                "conversation_id": conversation_id,
                "agent_id": agent_id,
                "title": title or title_of(instruction),
                "instruction": instruction,
                "cadence": cadence,
                "status": "active" if by_agent else "pending",
                "confirmed": by_agent,
                "created_by": created_by,
                "next_run_at": next_run(cadence, now),
                "created_at": clock.iso(now),
                "updated_at": clock.iso(now),
            }
        )
        if not by_agent:
            self._tell_agent(row, "schedule.requested")
        self._push(row, deleted=False)
        return row

    def _changed(
        self, row: Row, fields: dict[str, Any], *, tell_agent: bool, stamp: bool = True
    ) -> Row:
        if "cadence" in fields:
            fields["next_run_at"] = next_run(fields["cadence"], clock.now())
        if stamp:
            fields["updated_at"] = clock.iso(clock.now())
        stored = self.storage.update_schedule(row["id"], **fields)
        deleted = stored["status"] == "deleted"
        if tell_agent:
            self._tell_agent(stored, "schedule.deleted" if deleted else "schedule.updated")
        self._push(stored, deleted=deleted)
        return stored

    def _tell_agent(self, row: Row, event_type: str) -> None:
        conversation = self.storage.get_conversation(row["conversation_id"])
        assert conversation is not None
        self.outbox.emit(
            row["agent_id"],
            event_type,
            {
                "conversation": shapes.conversation_ref(conversation),
                "schedule": schedule_json(row),
                "participants": self.conversations.agent_participants(
                    row["conversation_id"], row["agent_id"]
                ),
            },
        )

    def _push(self, row: Row, *, deleted: bool) -> None:
        self.feeds.push(
            self.conversations.people_of(row["conversation_id"]),
            "schedule.changed",
            {
                "conversation_id": row["conversation_id"],
                "schedule": schedule_json(row),
                "deleted": deleted,
            },
        )
