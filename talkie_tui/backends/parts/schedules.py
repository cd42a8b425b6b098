"""A conversation's schedules (a Cuckoo hub's agents that declare `supports_schedules` run
them): what the agent sends on a timer, read, asked for, paused, resumed and deleted, and kept
current as they change (on another device too)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from talkie_tui.core.moments import ScheduleStatus

__all__ = ["Cadence", "RunsSchedules", "Schedule", "ScheduleChange", "Schedules"]


@dataclass(frozen=True, slots=True)
class Cadence:
    """When a schedule runs: `repeat` (once, daily, weekdays, weekly) at `time` ("HH:MM") in
    `timezone`, on `days` (weekly) or on `date` (once)."""

    repeat: str = "daily"
    time: str = "09:00"
    days: tuple[str, ...] = ()
    date: str | None = None
    timezone: str = "UTC"

    def wire(self) -> dict[str, Any]:
        """The cadence as a server takes it: the fields its repeat uses (`days` weekly,
        `date` once), as JSON values."""
        taken: dict[str, Any] = {"repeat": self.repeat, "time": self.time}
        if self.repeat == "weekly":
            taken["days"] = list(self.days)
        elif self.repeat == "once" and self.date:
            taken["date"] = self.date
        taken["timezone"] = self.timezone
        return taken


@dataclass(frozen=True, slots=True)
class Schedule(ScheduleStatus):
    """A schedule of a conversation."""

    id: str
    title: str = ""
    instruction: str = ""  # what the agent is asked to do
    cadence: Cadence = field(default_factory=Cadence)
    status: str = "pending"  # pending (the agent has not confirmed it), active, paused
    next_run_at: datetime | None = None
    created_at: datetime | None = None  # the order of the list
    updated_at: datetime | None = None  # which of two states of it is the newer


@dataclass(frozen=True, slots=True)
class ScheduleChange:
    """A schedule of the conversation was made, changed or `deleted`."""

    schedule: Schedule
    deleted: bool = False


class Schedules(Protocol):
    """The schedules of one conversation, newest state by id (`items`)."""

    @property
    def items(self) -> Sequence[Schedule]:
        """The schedules, oldest first."""
        ...

    @property
    def agent_name(self) -> str | None:
        """The agent that runs them, once `supported` asked."""
        ...

    async def supported(self) -> bool:
        """Whether an agent of the conversation runs schedules (its name is kept)."""
        ...

    async def load(self) -> Sequence[Schedule]:
        """Read them from the server."""
        ...

    async def create(self, instruction: str, cadence: Cadence) -> Schedule:
        """Ask the agent to run `instruction` on `cadence` (pending until it confirms)."""
        ...

    async def set_paused(self, schedule_id: str, paused: bool) -> Schedule:
        """Pause a schedule, or resume it."""
        ...

    async def delete(self, schedule_id: str) -> None:
        """Delete a schedule: its agent sends nothing more for it."""
        ...

    def changes(self) -> AsyncIterator[ScheduleChange]:
        """The conversation's schedule changes as they come (folded in first), until the
        backend closes or the iteration is left."""
        ...


@runtime_checkable
class RunsSchedules(Protocol):
    """A backend whose agents run schedules in a conversation."""

    def schedules(self, conversation_id: str) -> Schedules:
        """The schedules of the conversation `conversation_id` (read them with `load`)."""
        ...
