"""The agent's schedules: a person asks the agent to run an instruction on a timer, and the
bridge runs it (`notes/cuckoo.md` §5.4; the hub only keeps, shows and enforces schedules).

- `schedule.requested`: the bridge confirms it (`PATCH {"status": "active"}`), so the person
  sees it active; a person's change (`schedule.updated`, pending again) is confirmed the same
  way; a pause stops it, a resume starts it again, `schedule.deleted` forgets it;
- the timer: when a schedule's `next_run_at` comes, its instruction is answered as a message
  of the person's would be, from the conversation's Talkie thread, and every message of the
  answer carries `schedule_id`, so the person sees which schedule sent it; the hub then works
  out the next run, which the bridge reads back;
- at a start the bridge reads the schedules of the conversations it is in, so a run missed
  while it was away is run once when it is back;
- a send the hub refuses for the schedule (`409 schedule_paused`, `schedule_deleted`) ends it.

The run's idempotency keys are made from the schedule and the moment it was due, so a run
done again after a restart makes no second message.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from talkie_tui.core.errors import TalkieError
from talkie_tui.core.waiting import wait_event
from talkie_tui.i18n import _
from talkie_tui.protocol.cuckoo.agent_client import OpFailed
from talkie_tui.protocol.cuckoo.agent_schedules import (
    agent_schedules,
    confirm_schedule,
    read_schedule,
)

if TYPE_CHECKING:
    from talkie_tui.bridge.answers import Answers
    from talkie_tui.bridge.context import BridgeContext
    from talkie_tui.protocol.cuckoo.agent_client import AgentApi
    from talkie_tui.protocol.cuckoo.schedules import Schedule

__all__ = ["EVENTS", "LONGEST_WAIT", "Schedules"]

EVENTS = frozenset({"schedule.requested", "schedule.updated", "schedule.deleted"})
"""The events about schedules the hub sends an agent that runs them."""
LONGEST_WAIT = 60.0
"""Seconds the timer waits at most before it reads the clock again (a computer that slept,
a clock set anew)."""
GONE = frozenset({"schedule_paused", "schedule_deleted", "schedule_not_found"})
"""The hub's refusals of a send that say the schedule is not to run now."""


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _at(moment: datetime) -> datetime:
    """A hub time as aware UTC (the models read it naive)."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


class Schedules:
    """The schedules the agent runs, and their timer (see the module docstring)."""

    def __init__(self, context: BridgeContext, answers: Answers, api: AgentApi) -> None:
        self.context = context
        self.answers = answers
        self.api = api
        self.clock: Callable[[], datetime] = _utc_now
        """The time now (aware); a test moves it to make a schedule due."""
        self.running: dict[str, Schedule] = {}
        self._done: set[str] = set()  # runs made, by key: a failed one is not tried in a loop
        self._unread: set[str] = set()  # conversations whose schedules are to be read again
        self._wake = asyncio.Event()

    def wake(self) -> None:
        """Read the clock and the schedules again now."""
        self._wake.set()

    # --- what the hub tells -------------------------------------------------------------

    async def event(self, event: dict[str, Any]) -> None:
        """`schedule.requested`, `.updated` or `.deleted`: confirmed, kept or forgotten."""
        data = event.get("data") if isinstance(event.get("data"), dict) else {}
        assert isinstance(data, dict)
        schedule = read_schedule(self.api, data.get("schedule"), str(event.get("type")))
        await self._take(schedule, deleted=event.get("type") == "schedule.deleted")

    async def _take(self, schedule: Schedule, *, deleted: bool = False) -> None:
        if deleted or schedule.paused:
            if self.running.pop(schedule.id, None) is not None or deleted:
                self.context.say(self._told(schedule, deleted=deleted))
            return
        if schedule.pending:
            schedule = await confirm_schedule(
                self.api, schedule.conversation_id, schedule.id, schedule.title or None
            )
            self.context.say(
                _("{conversation}: schedule “{title}” confirmed").format(
                    conversation=schedule.conversation_id, title=schedule.title
                )
            )
        self.running[schedule.id] = schedule
        self.wake()

    def _told(self, schedule: Schedule, *, deleted: bool) -> str:
        words = (
            _("{conversation}: schedule “{title}” deleted")
            if deleted
            else _("{conversation}: schedule “{title}” paused")
        )
        return words.format(conversation=schedule.conversation_id, title=schedule.title)

    async def _read(self, conversation_ids: Iterable[str]) -> None:
        """The schedules of these conversations as the hub has them now; one that cannot be
        read or confirmed now is tried again at the timer's next turn (said once)."""
        for conversation_id in conversation_ids:
            try:
                found = await agent_schedules(self.api, conversation_id)
                for stale in [
                    s for s in self.running.values() if s.conversation_id == conversation_id
                ]:
                    if all(s.id != stale.id for s in found):
                        del self.running[stale.id]
                for schedule in found:
                    await self._take(schedule)
            except TalkieError as error:
                if conversation_id not in self._unread:
                    self.context.warn(
                        _("{conversation}: could not read the schedules: {words}").format(
                            conversation=conversation_id, words=error
                        )
                    )
                self._unread.add(conversation_id)
                continue
            self._unread.discard(conversation_id)

    # --- the timer ----------------------------------------------------------------------

    async def run(self) -> None:
        """Read the schedules of the conversations the agent is in, then run each when due."""
        await self._read(self.context.state.conversations())
        while True:
            self._wake.clear()
            if self._unread:
                await self._read(sorted(self._unread))
            now = self.clock()
            for schedule in sorted(self._due(now), key=self._key):
                try:
                    await self._run(schedule)
                except TalkieError as error:
                    self.context.warn(
                        _("{conversation}: schedule “{title}” failed: {words}").format(
                            conversation=schedule.conversation_id,
                            title=schedule.title,
                            words=error,
                        )
                    )
            ahead = [
                (_at(s.next_run_at) - now).total_seconds()
                for s in self.running.values()
                if s.next_run_at is not None and self._key(s) not in self._done
            ]
            wait = min([LONGEST_WAIT, *ahead])
            await wait_event(self._wake, max(wait, 0.0))

    def _due(self, now: datetime) -> list[Schedule]:
        return [
            s
            for s in self.running.values()
            if s.next_run_at is not None
            and _at(s.next_run_at) <= now
            and self._key(s) not in self._done
        ]

    @staticmethod
    def _key(schedule: Schedule) -> str:
        due = schedule.next_run_at
        stamp = _at(due).strftime("%Y%m%dT%H%M%S") if due is not None else "never"
        return f"{schedule.id}-{stamp}"

    async def _run(self, schedule: Schedule) -> None:
        """One run: the instruction answered, each message for the schedule; then the hub's
        next run read back."""
        key = self._key(schedule)
        self._done.add(key)
        conversation_id = schedule.conversation_id
        if self.context.state.has_left(conversation_id):
            self.running.pop(schedule.id, None)
            return
        self.context.say(
            _("{conversation}: schedule “{title}” runs").format(
                conversation=conversation_id, title=schedule.title
            )
        )
        try:
            await self.answers.instruction(
                conversation_id, key, schedule.instruction, schedule.id, schedule.title
            )
        except OpFailed as error:
            if error.code not in GONE:
                raise
            self.running.pop(schedule.id, None)
            self.context.say(
                _("{conversation}: schedule “{title}” is not run: {words}").format(
                    conversation=conversation_id, title=schedule.title, words=error.message
                )
            )
            return
        await self._read([conversation_id])
