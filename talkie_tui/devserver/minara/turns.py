"""Turns as background tasks: each emits its events into the session's channel (and its SSE
followers), and once it ends its assistant row is folded from exactly those events.

A turn is not tied to any connection: a client that goes away misses nothing it cannot replay.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from talkie_tui.devserver.common import clock
from talkie_tui.devserver.common.agent_choice import AgentChoice
from talkie_tui.devserver.common.ids import new_id
from talkie_tui.devserver.common.live_work import LiveWorks
from talkie_tui.devserver.minara import demo_agent, testmode
from talkie_tui.devserver.minara.channels import Channel, Channels, Event
from talkie_tui.devserver.minara.config import GatewayConfig
from talkie_tui.devserver.minara.live_turn import LiveTurn, TurnRequestInfo
from talkie_tui.devserver.minara.questions import QuestionBoard
from talkie_tui.devserver.minara.record import TurnRecord
from talkie_tui.devserver.minara.storage import Storage
from talkie_tui.devserver.minara.turn_context import (
    AgentFailed,
    Emit,
    TurnContext,
    TurnInterrupted,
)

logger = logging.getLogger(__name__)

PROTOCOL_VERSION = 1
RESTARTED = {
    "code": "interrupted",
    "message": "The answer is incomplete: the gateway restarted before it was finished.",
    "retryable": True,
}
STOPPED_MIDWAY = {
    "code": "interrupted",
    "message": "The answer is incomplete: the gateway stopped before it was finished.",
    "retryable": True,
}


async def _no_agent(ctx: TurnContext) -> None:
    ctx.delta("This gateway runs without an agent; only the `minara-test:` messages answer.")


_AGENTS = AgentChoice(testmode.script_for, demo_agent.answer, _no_agent)


def size_in_kb(size: int) -> int:
    """Bytes as whole kB (1000 bytes), halves rounded up: 48213 -> 48."""
    return (size + 500) // 1000


class TurnManager(LiveWorks[LiveTurn]):
    """Starts, interrupts and finishes turns. Create it inside the server's event loop."""

    def __init__(
        self,
        storage: Storage,
        channels: Channels,
        questions: QuestionBoard,
        config: GatewayConfig,
    ) -> None:
        super().__init__()
        self._storage = storage
        self._channels = channels
        self._questions = questions
        self._config = config
        self._emitters: dict[str, Emit] = {}

    def active(self, session_id: str) -> LiveTurn | None:
        """The turn running in a session, if any."""
        return self._live.get(session_id)

    def start(self, session_id: str, request: TurnRequestInfo) -> LiveTurn:
        """Launch a turn answering `request` in a stored session; returns its live state."""
        channel = self._channels.get(session_id)
        assert channel is not None, "the session is stored before its turn starts"
        channel.begin_turn()
        turn = LiveTurn(new_id("turn"), session_id, request)
        self._storage.set_active_turn(session_id, turn.turn_id, channel.last_seq)
        record = TurnRecord()
        emit = self._emitter(turn, channel, record)
        self._live[session_id] = turn
        self._emitters[session_id] = emit
        turn.task = asyncio.create_task(
            self._execute(turn, channel, record, emit), name=f"minara-turn-{turn.turn_id}"
        )
        return turn

    def interrupt(self, session_id: str) -> bool:
        """Ask the session's turn to stop; False when none runs."""
        turn = self._live.get(session_id)
        if turn is None:
            return False
        turn.interrupted.set()
        return True

    def interject(self, session_id: str, message: str) -> bool:
        """Steer the running turn: echoed now, or (too late) returned in `done`; False: none."""
        turn = self._live.get(session_id)
        if turn is None:
            return False
        if turn.window_open and not turn.interrupted.is_set():
            turn.interjections.append(message)
            self._emitters[session_id](
                "user_interjection", {"message": message, "ts_ms": clock.epoch_ms()}
            )
        else:
            turn.late_interjections.append(message)
        return True

    def _stop(self, key: str) -> None:
        self.interrupt(key)

    def recover_unfinished(self) -> None:
        """Close turns a previous gateway process left running: an assistant row with an error."""
        now = clock.iso(clock.now())
        for row in self._storage.unfinished_turns():
            metadata = {"segments": [], "error": dict(RESTARTED)}
            if self._storage.get_message(row["active_turn"]) is None:
                self._storage.add_message(
                    row["id"], row["active_turn"], "assistant", "", now, metadata=metadata
                )
            self._storage.set_active_turn(row["id"], None, int(row["last_seq"]))

    def _emitter(self, turn: LiveTurn, channel: Channel, record: TurnRecord) -> Emit:
        def emit(event_type: str, data: dict[str, Any]) -> None:
            event: Event = {"type": event_type, "data": data}
            record.apply(event)
            channel.append(event)
            turn.add_frame(event)

        return emit

    async def _execute(
        self, turn: LiveTurn, channel: Channel, record: TurnRecord, emit: Emit
    ) -> None:
        terminal: Event = {"type": "done", "data": {}}
        try:
            terminal = await self._run_agent(turn, emit)
        except asyncio.CancelledError:
            terminal = {"type": "done", "data": {"interrupted": True}}
            raise
        finally:
            self._finish(turn, channel, record, terminal)

    async def _run_agent(self, turn: LiveTurn, emit: Emit) -> Event:
        ctx = TurnContext(turn, self._config, self._questions, emit)
        version = 2 if turn.request.message == testmode.VERSION2 and self._config.test_mode else 1
        emit(
            "start",
            {"session_id": turn.session_id, "protocol_version": version, "turn_id": turn.turn_id},
        )
        try:
            for attachment in turn.request.attachments:
                size = size_in_kb(int(attachment["size"]))
                ctx.delta(f"I received {attachment['filename']}, {size} kB\n")
            await _AGENTS.choose(self._config, turn.request.message)(ctx)
        except TurnInterrupted:
            if self._stopping.is_set():  # not the person: the gateway is going away
                return {"type": "error", "data": dict(STOPPED_MIDWAY)}
            return {"type": "done", "data": self._done_data(turn, interrupted=True)}
        except AgentFailed as exc:
            data = {"code": exc.code, "message": exc.message, "retryable": exc.retryable}
            return {"type": "error", "data": data}
        except Exception:
            logger.exception("turn %s failed", turn.turn_id)
            data = {
                "code": "internal",
                "message": "The agent failed unexpectedly. Please try again.",
                "retryable": True,
            }
            return {"type": "error", "data": data}
        return {"type": "done", "data": self._done_data(turn, interrupted=False)}

    @staticmethod
    def _done_data(turn: LiveTurn, *, interrupted: bool) -> dict[str, Any]:
        data: dict[str, Any] = {}
        if interrupted:
            data["interrupted"] = True
        if turn.late_interjections:
            data["pending_interjections"] = list(turn.late_interjections)
        return data

    def _finish(
        self, turn: LiveTurn, channel: Channel, record: TurnRecord, terminal: Event
    ) -> None:
        # Questions still open end with their turn.
        for payload in self._questions.pending_for(turn.session_id):
            self._questions.close(str(payload["id"]), "cancelled")
        record.apply(terminal)
        extra: dict[str, Any] = {}
        if turn.request.model is not None:
            extra["model"] = turn.request.model
        if turn.request.reasoning_effort is not None:
            extra["reasoning_effort"] = turn.request.reasoning_effort
        # The row is stored and the turn marked ended before `done` goes out, so a client that
        # reloads the session on `done` finds the row and `is_streaming: false`.
        self._storage.add_message(
            turn.session_id,
            turn.turn_id,
            "assistant",
            record.content,
            clock.iso(clock.now()),
            metadata=record.metadata(extra),
        )
        self._live.pop(turn.session_id, None)
        self._emitters.pop(turn.session_id, None)
        self._storage.set_active_turn(turn.session_id, None, channel.last_seq + 1)
        channel.append(terminal)
        turn.add_frame(terminal)
        turn.log.finish()
        self._channels.end_turn(channel)
