"""A conversation's schedules on a hub's agent API (`notes/cuckoo.md` §2.1, §5.4): the routes
an agent that declares `supports_schedules` uses, as functions of an `AgentApi`.

The agent hears `schedule.requested` when a person asks for one and confirms it with
`PATCH {"status": "active", "title"}` (or declines by deleting it); a person's change makes it
pending again (`schedule.updated`). The agent runs the timer: when one is due it sends with
`schedule_id`, and the hub works out when it runs next.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from talkie_tui.core.errors import TalkieError
from talkie_tui.protocol.cuckoo.schedules import Schedule
from talkie_tui.protocol.net.rest import path_segment

if TYPE_CHECKING:
    from talkie_tui.protocol.cuckoo.agent_client import AgentApi

__all__ = ["agent_schedules", "confirm_schedule", "read_schedule"]


def _route(conversation_id: str, schedule_id: str | None = None) -> str:
    route = f"v1/agent/conversations/{path_segment(conversation_id)}/schedules"
    return f"{route}/{path_segment(schedule_id)}" if schedule_id is not None else route


def read_schedule(api: AgentApi, data: Any, route: str) -> Schedule:
    """A schedule as an event or a route gives it (the unreadable-answer error otherwise)."""
    return api._validate(Schedule, data, route)


async def agent_schedules(api: AgentApi, conversation_id: str) -> list[Schedule]:
    """`GET …/schedules`: the conversation's schedules (a row that does not read is left out)."""
    route = _route(conversation_id)
    body = await api._json("GET", route)
    rows = body.get("schedules") if isinstance(body, dict) else None
    found = []
    for row in rows if isinstance(rows, list) else []:
        try:
            found.append(read_schedule(api, row, route))
        except TalkieError:  # one odd row does not hide the others
            continue
    return found


async def confirm_schedule(
    api: AgentApi, conversation_id: str, schedule_id: str, title: str | None = None
) -> Schedule:
    """`PATCH …/schedules/{id}` `{"status": "active", "title"?}`: the agent runs it."""
    body: dict[str, Any] = {"status": "active"}
    if title:
        body["title"] = title
    route = _route(conversation_id, schedule_id)
    answer = await api._json("PATCH", route, body=body)
    return read_schedule(api, answer.get("schedule") if isinstance(answer, dict) else None, route)
