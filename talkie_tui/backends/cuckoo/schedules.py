"""A conversation's schedules, as the app shows and changes them (a hub's agents that declare
`supports_schedules` run them): read, asked for, paused, resumed, deleted over REST, and kept
current by the `schedule.changed` pushes of the shared client socket (another device's change
too), as the model objects of `parts/schedules.py`. The wire is `protocol/cuckoo/schedules.py`."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Protocol

from talkie_tui.backends.cuckoo.records import model_of
from talkie_tui.backends.parts.schedules import Cadence, Schedule, ScheduleChange
from talkie_tui.protocol.cuckoo import schedules as wire
from talkie_tui.protocol.cuckoo.schedules import SchedulePush
from talkie_tui.protocol.cuckoo.socket import SocketItem

if TYPE_CHECKING:
    from talkie_tui.backends.cuckoo.feed import Feed
    from talkie_tui.protocol.cuckoo.client import CuckooClient

__all__ = ["ConversationSchedules", "HubLine", "schedule"]


class HubLine(Protocol):
    """What schedules need of a hub's backend (a `CuckooBackend`): its client and its feed."""

    client: CuckooClient
    feed: Feed


def schedule(record: wire.Schedule) -> Schedule:
    """A hub's schedule record, with its cadence."""
    return model_of(Schedule, record, cadence=model_of(Cadence, record.cadence))


class ConversationSchedules:
    """The schedules of one conversation of a hub, newest state by id (`items`)."""

    def __init__(self, backend: HubLine, conversation_id: str) -> None:
        self.backend = backend
        self.conversation_id = conversation_id
        self._by_id: dict[str, Schedule] = {}
        self.agent_name: str | None = None  # the agent that runs them, once `supported` asked

    @property
    def items(self) -> list[Schedule]:
        """The schedules, oldest first."""
        return sorted(self._by_id.values(), key=lambda s: (s.created_at is None, s.created_at))

    async def supported(self) -> bool:
        """Whether an agent of the conversation runs schedules (its name is kept)."""
        conversation = await self.backend.client.conversation(self.conversation_id)
        agents = conversation.agents()
        running = [agent for agent in agents if agent.supports_schedules] or list(agents)
        if running:
            self.agent_name = running[0].display_name or running[0].handle or None
        return any(agent.supports_schedules for agent in agents)

    async def load(self) -> list[Schedule]:
        """Read them from the hub."""
        listed = await wire.list_schedules(self.backend.client, self.conversation_id)
        self._by_id = {made.id: made for made in map(schedule, listed)}
        return self.items

    async def create(self, instruction: str, cadence: Cadence) -> Schedule:
        """Ask the agent to run `instruction` on `cadence` (pending until it confirms)."""
        made = await wire.create_schedule(
            self.backend.client,
            self.conversation_id,
            instruction,
            wire.Cadence.model_validate(cadence.wire()),
        )
        return self._keep(schedule(made))

    async def set_paused(self, schedule_id: str, paused: bool) -> Schedule:
        """Pause a schedule, or resume it."""
        changed = await wire.change_schedule(
            self.backend.client, self.conversation_id, schedule_id, paused=paused
        )
        return self._keep(schedule(changed))

    async def delete(self, schedule_id: str) -> None:
        """Delete a schedule: its agent sends nothing more for it."""
        await wire.delete_schedule(self.backend.client, self.conversation_id, schedule_id)
        self._by_id.pop(schedule_id, None)

    def _keep(self, fresh: Schedule) -> Schedule:
        """Keep the newer of what is known and `fresh` (an answer may come after the push of
        a later change: the agent confirmed at once)."""
        known = self._by_id.get(fresh.id)
        if (
            known is not None
            and known.updated_at is not None
            and fresh.updated_at is not None
            and known.updated_at > fresh.updated_at
        ):
            return known
        self._by_id[fresh.id] = fresh
        return fresh

    def apply(self, push: SchedulePush) -> ScheduleChange | None:
        """Fold in a pushed change: the change when it is this conversation's, else None."""
        if push.conversation_id != self.conversation_id:
            return None
        change = ScheduleChange(schedule(push.schedule), push.deleted)
        if change.deleted:
            self._by_id.pop(change.schedule.id, None)
        else:
            self._keep(change.schedule)
        return change

    async def changes(self) -> AsyncGenerator[ScheduleChange, None]:
        """The conversation's schedule changes as the hub pushes them (folded in first),
        until the backend closes or the iteration is left."""

        def ours(item: SocketItem) -> bool:
            return isinstance(item, SchedulePush) and item.conversation_id == self.conversation_id

        async for item in self.backend.feed.subscribe(ours).items():
            change = self.apply(item) if isinstance(item, SchedulePush) else None
            if change is not None:
                yield change
