"""Runs as background tasks: each appends events to a log that any number of clients follow.

The task is not tied to an HTTP response, so a dropped connection does not stop the run
(disconnect is not cancel, §5); the finished log is persisted for idempotent replays.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from ag_ui.core import (
    BaseEvent,
    CustomEvent,
    RunErrorEvent,
    RunFinishedCancelledOutcome,
    RunFinishedEvent,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
)

from talkie_tui.devserver.common import clock
from talkie_tui.devserver.common.agent_choice import AgentChoice
from talkie_tui.devserver.common.frame_log import FrameLog
from talkie_tui.devserver.common.live_work import LiveWorks
from talkie_tui.devserver.talkie import demo_agent, testmode
from talkie_tui.devserver.talkie.accounts import estimate_tokens, usage_items
from talkie_tui.devserver.talkie.actions import ActionService
from talkie_tui.devserver.talkie.config import ServerConfig
from talkie_tui.devserver.talkie.run_context import AgentError, RunCancelled, RunContext
from talkie_tui.devserver.talkie.storage import Storage

logger = logging.getLogger(__name__)

INTERRUPTED = "interrupted"
"""A run the server's stop cut short: its stored answer is marked incomplete."""
# A retry of a message whose run ended in one of these states gets a fresh run, not a replay.
RETRYABLE_STATUSES = frozenset({"error", INTERRUPTED})
STOPPED_MIDWAY = "The answer is incomplete: the server stopped before it was finished."


def encode(event: BaseEvent) -> str:
    """One event as camelCase JSON without null fields (a frame of the run's log)."""
    return event.model_dump_json(by_alias=True, exclude_none=True)


@dataclass
class _LiveRun:
    thread_id: str
    log: FrameLog
    cancelled: asyncio.Event
    task: asyncio.Task[None] | None = None


async def _no_agent(ctx: RunContext) -> None:
    await ctx.say(
        "This server runs without an agent; only the `talkie-test:` commands answer.", delay=0
    )


_AGENTS = AgentChoice(testmode.script_for, demo_agent.answer, _no_agent)


class RunManager(LiveWorks[_LiveRun]):
    """Starts, follows, cancels and persists runs. Create it inside the server's event loop."""

    def __init__(self, storage: Storage, config: ServerConfig, actions: ActionService) -> None:
        super().__init__()
        self._storage = storage
        self._config = config
        self._actions = actions

    def start(
        self, *, run_id: str, thread_id: str, user_id: str, message_id: str, user_text: str
    ) -> FrameLog:
        """Record and launch a run answering `message_id`; returns its live log."""
        self._storage.create_run(run_id, thread_id, user_id, message_id, clock.iso(clock.now()))
        live = _LiveRun(thread_id, FrameLog(), asyncio.Event())
        ctx = RunContext(
            run_id=run_id,
            thread_id=thread_id,
            user_id=user_id,
            user_text=user_text,
            config=self._config,
            actions=self._actions,
            emit=lambda event: live.log.append(encode(event)),
            cancelled=live.cancelled,
        )
        self._live[run_id] = live
        live.task = asyncio.create_task(self._execute(ctx, live), name=f"talkie-run-{run_id}")
        return live.log

    def log(self, run_id: str) -> FrameLog | None:
        """The log of a live or finished run."""
        live = self._live.get(run_id)
        if live is not None:
            return live.log
        row = self._storage.get_run(run_id)
        return FrameLog(row["frames"], done=True) if row is not None else None

    def cancel(self, run_id: str) -> None:
        """Ask a live run to stop (unknown or finished runs: nothing to do)."""
        live = self._live.get(run_id)
        if live is not None:
            live.cancelled.set()

    def cancel_thread(self, thread_id: str) -> None:
        """Cancel the live runs of a thread."""
        for run_id, live in list(self._live.items()):
            if live.thread_id == thread_id:
                self.cancel(run_id)

    def _stop(self, key: str) -> None:
        self.cancel(key)

    def recover_unfinished(self) -> None:
        """Close runs a previous server process left running, so replays of them terminate."""
        for row in self._storage.unfinished_runs():
            frames = [
                encode(RunStartedEvent(thread_id=row["thread_id"], run_id=row["id"])),
                encode(
                    RunErrorEvent(
                        message=STOPPED_MIDWAY, code="internal", metadata={"retryable": True}
                    )
                ),
            ]
            self._storage.finish_run(row["id"], INTERRUPTED, frames, 0, clock.iso(clock.now()))

    async def _execute(self, ctx: RunContext, live: _LiveRun) -> None:
        try:
            status, error = await self._run_agent(ctx)
            self._finish(ctx, live, status, error)
        finally:
            self._live.pop(ctx.run_id, None)
            live.log.finish()

    async def _run_agent(self, ctx: RunContext) -> tuple[str, AgentError | None]:
        ctx.emit(RunStartedEvent(thread_id=ctx.thread_id, run_id=ctx.run_id))
        try:
            await _AGENTS.choose(self._config, ctx.user_text)(ctx)
        except RunCancelled:
            return "cancelled", None
        except AgentError as exc:
            return "error", exc
        except Exception:
            logger.exception("run %s failed", ctx.run_id)
            return "error", AgentError(
                "The agent failed unexpectedly. Please try again.", "internal"
            )
        return "finished", None

    def _finish(
        self, ctx: RunContext, live: _LiveRun, status: str, error: AgentError | None
    ) -> None:
        ctx.close_open_message()
        if status == "cancelled" and self._stopping.is_set():  # not the person: the server
            status, error = INTERRUPTED, AgentError(STOPPED_MIDWAY, "internal", retryable=True)
        finished_at = clock.iso(clock.now())
        if ctx.content or ctx.cards or error is not None:
            # A failed answer is stored too, so the thread opened again shows the failure as it
            # was shown live (its events end with RUN_ERROR); a client that reads only `content`
            # gets the error's words when the run wrote none.
            content = ctx.content or (error.message if error is not None else "")
            self._storage.add_message(
                ctx.thread_id, ctx.answer_id, "assistant", content, finished_at, cards=ctx.cards
            )
            self._storage.set_answer_run(ctx.answer_id, ctx.run_id)
        tokens = estimate_tokens(ctx.user_text, ctx.content)
        self._storage.set_run_tokens(ctx.run_id, tokens)
        terminal: BaseEvent
        if error is not None:
            terminal = RunErrorEvent(
                message=error.message, code=error.code, metadata={"retryable": error.retryable}
            )
        elif status == "cancelled":
            terminal = RunFinishedEvent(
                thread_id=ctx.thread_id, run_id=ctx.run_id, outcome=RunFinishedCancelledOutcome()
            )
        else:
            usage = usage_items(self._storage, ctx.user_id, voice=self._config.fake_voice)
            ctx.emit(CustomEvent(name="talkie.usage", value={"usage": usage}))
            terminal = RunFinishedEvent(
                thread_id=ctx.thread_id, run_id=ctx.run_id, outcome=RunFinishedSuccessOutcome()
            )
        ctx.emit(terminal)
        self._storage.finish_run(ctx.run_id, status, live.log.frames, tokens, finished_at)
