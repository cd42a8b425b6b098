"""A conversation's schedules, as the app shows and changes them (a hub's agents that declare
`supports_schedules` run them): read, asked for, paused, resumed, deleted over REST, and kept
current by the `schedule.changed` pushes of the shared client socket (another device's change
too). The wire is `protocol/cuckoo/schedules.py`."""

from __future__ import annotations

from collections.abc import AsyncGenerator

from talkie_tui.backends.cuckoo.backend import CuckooBackend
from talkie_tui.protocol.cuckoo import schedules as wire
from talkie_tui.protocol.cuckoo.schedules import Cadence, Schedule, SchedulePush
from talkie_tui.protocol.cuckoo.socket import SocketItem

__all__ = ["Cadence", "ConversationSchedules", "Schedule"]


class ConversationSchedules:
    """The schedules of one conversation of a hub, newest state by id (`items`)."""

    def __init__(self, backend: CuckooBackend, conversation_id: str) -> None:
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
        self._by_id = {schedule.id: schedule for schedule in listed}
        return self.items

    async def create(self, instruction: str, cadence: Cadence) -> Schedule:
        """Ask the agent to run `instruction` on `cadence` (pending until it confirms)."""
        made = await wire.create_schedule(
            self.backend.client, self.conversation_id, instruction, cadence
        )
        return self._keep(made)

    async def set_paused(self, schedule_id: str, paused: bool) -> Schedule:
        """Pause a schedule, or resume it."""
        changed = await wire.change_schedule(
            self.backend.client, self.conversation_id, schedule_id, paused=paused
        )
        return self._keep(changed)

    async def delete(self, schedule_id: str) -> None:
        """Delete a schedule: its agent sends nothing more for it."""
        await wire.delete_schedule(self.backend.client, self.conversation_id, schedule_id)
        self._by_id.pop(schedule_id, None)

    def _keep(self, schedule: Schedule) -> Schedule:
        """Keep the newer of what is known and `schedule` (an answer may come after the push
        of a later change: the agent confirmed at once)."""
        known = self._by_id.get(schedule.id)
        if (
            known is not None
            and known.updated_at is not None
            and schedule.updated_at is not None
            and known.updated_at > schedule.updated_at
        ):
            return known
        self._by_id[schedule.id] = schedule
        return schedule

    def apply(self, push: SchedulePush) -> bool:
        """Fold in a pushed change; True when it is this conversation's."""
        if push.conversation_id != self.conversation_id:
            return False
        if push.deleted:
            self._by_id.pop(push.schedule.id, None)
        else:
            self._keep(push.schedule)
        return True

    async def changes(self) -> AsyncGenerator[SchedulePush, None]:
        """The conversation's schedule changes as the hub pushes them (folded in first),
        until the backend closes or the iteration is left."""

        def ours(item: SocketItem) -> bool:
            return isinstance(item, SchedulePush) and item.conversation_id == self.conversation_id

        async for item in self.backend.feed.subscribe(ours).items():
            if isinstance(item, SchedulePush) and self.apply(item):
                yield item
