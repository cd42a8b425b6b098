"""A conversation's schedules on a hub's client API (`notes/cuckoo.md` §1.2, §1.3, §5.4):
typed models, the routes as functions of a `CuckooClient`, and the `schedule.changed` push.

Only an agent that declares `supports_schedules` runs them. A person asks for one (pending
until the agent confirms it), pauses, resumes, changes or deletes it; the hub pushes every
change to the person's devices.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BeforeValidator, Field

from talkie_tui.core.moments import ScheduleStatus
from talkie_tui.core.sanitize import SafeStr
from talkie_tui.protocol.cuckoo.models import CuckooModel, Time
from talkie_tui.protocol.net.rest import path_segment

if TYPE_CHECKING:
    from talkie_tui.protocol.cuckoo.client import CuckooClient

__all__ = [
    "DAYS",
    "MAX_INSTRUCTION",
    "MAX_PER_CHAT",
    "REPEATS",
    "Cadence",
    "Schedule",
    "SchedulePush",
    "change_schedule",
    "create_schedule",
    "delete_schedule",
    "list_schedules",
]

MAX_PER_CHAT = 10
MAX_INSTRUCTION = 500
REPEATS = ("once", "daily", "weekdays", "weekly")
DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


def _strings(value: Any) -> list[str]:
    if not isinstance(value, list | tuple):
        return []
    return [item for item in value if isinstance(item, str)]


class Cadence(CuckooModel):
    """When a schedule runs: `repeat` (once, daily, weekdays, weekly) at `time` ("HH:MM") in
    `timezone`, on `days` (weekly) or on `date` (once)."""

    repeat: SafeStr = "daily"
    time: SafeStr = "09:00"
    days: Annotated[tuple[SafeStr, ...], BeforeValidator(_strings)] = ()
    date: SafeStr | None = None
    timezone: SafeStr = "UTC"

    def wire(self) -> dict[str, Any]:
        """The cadence as the hub takes it (only the fields its repeat uses)."""
        out: dict[str, Any] = {"repeat": self.repeat, "time": self.time, "timezone": self.timezone}
        if self.repeat == "weekly":
            out["days"] = list(self.days)
        if self.repeat == "once" and self.date:
            out["date"] = self.date
        return out


class Schedule(ScheduleStatus, CuckooModel):
    """A schedule of a conversation (`GET …/schedules`)."""

    id: str = Field(min_length=1)
    conversation_id: str = ""
    agent_id: str = ""
    title: SafeStr = ""
    instruction: SafeStr = ""
    cadence: Cadence = Cadence()
    status: SafeStr = "pending"  # pending (the agent has not confirmed it), active, paused
    created_by: SafeStr = "user"
    next_run_at: Time = None
    last_run_at: Time = None
    missed_at: Time = None
    created_at: Time = None
    updated_at: Time = None


class SchedulePush(CuckooModel):
    """`schedule.changed`: a schedule of a conversation was made, changed or `deleted`."""

    type: Literal["schedule.changed"] = "schedule.changed"
    conversation_id: str = Field(min_length=1)
    schedule: Schedule
    deleted: bool = False


def _route(conversation_id: str, schedule_id: str | None = None) -> str:
    route = f"v1/client/conversations/{path_segment(conversation_id)}/schedules"
    return f"{route}/{path_segment(schedule_id)}" if schedule_id is not None else route


async def list_schedules(client: CuckooClient, conversation_id: str) -> list[Schedule]:
    """`GET …/schedules`: the conversation's schedules (a row that does not read is left out)."""
    return await client._items(Schedule, _route(conversation_id), "schedules")


async def create_schedule(
    client: CuckooClient, conversation_id: str, instruction: str, cadence: Cadence
) -> Schedule:
    """`POST …/schedules`: ask the agent to run `instruction` on `cadence` (pending until it
    confirms)."""
    body = {"instruction": instruction.strip(), "cadence": cadence.wire()}
    schedule: Schedule = await client._field(
        Schedule, "POST", _route(conversation_id), "schedule", body=body
    )
    return schedule


async def change_schedule(
    client: CuckooClient,
    conversation_id: str,
    schedule_id: str,
    *,
    paused: bool | None = None,
    instruction: str | None = None,
    cadence: Cadence | None = None,
) -> Schedule:
    """`PATCH …/schedules/{id}`: pause or resume it, or change what it runs or when (then its
    agent confirms it again)."""
    body: dict[str, Any] = {}
    if paused is not None:
        body["paused"] = paused
    if instruction is not None:
        body["instruction"] = instruction.strip()
    if cadence is not None:
        body["cadence"] = cadence.wire()
    route = _route(conversation_id, schedule_id)
    schedule: Schedule = await client._field(Schedule, "PATCH", route, "schedule", body=body)
    return schedule


async def delete_schedule(client: CuckooClient, conversation_id: str, schedule_id: str) -> None:
    """`DELETE …/schedules/{id}`: nothing more is sent for it."""
    await client._send("DELETE", client.url(_route(conversation_id, schedule_id)))
