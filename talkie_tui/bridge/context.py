"""What the parts of a bridge share: the Talkie backend, the hub (its ops and its stored
messages), the state file, who is served, how people and the operator are told, and the
bridge's tasks. `cuckoo.CuckooBridge` makes one and hands it to `answers`, `decisions` and
`reply`, which never reach back to the bridge itself."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from talkie_tui.backends.parts.actions import Decides
from talkie_tui.bridge import render

if TYPE_CHECKING:
    from talkie_tui.backends.base import Backend
    from talkie_tui.bridge.ops import HubOps
    from talkie_tui.bridge.state import BridgeState

__all__ = ["BridgeContext", "MessageTexts", "Served"]


@dataclass(frozen=True, slots=True)
class Served:
    """Who the bridge serves: the agent, and the people it answers."""

    agent_id: str
    handle: str
    display_name: str
    allowed: frozenset[str]
    owner_id: str | None


class MessageTexts(Protocol):
    """The hub's copy of a message's text (what a reply reads after a delta was dropped)."""

    async def message_text(self, conversation_id: str, message_id: str) -> str | None:
        """The text the hub holds for a message, None when it has none."""
        ...


class BridgeContext:
    """The backend, the hub, the state file and the tasks one bridge's parts share."""

    def __init__(
        self,
        *,
        backend: Backend,
        ops: HubOps,
        api: MessageTexts,
        open_state: Callable[[str], BridgeState],
        say: Callable[[str], None],
        warn: Callable[[str], None],
        flush_interval: float,
    ) -> None:
        self.backend = backend
        self.ops = ops
        self.api = api
        self.say = say
        self.warn = warn
        self.flush_interval = flush_interval
        # What people on the hub are told is in the agent's language (see `render.speech`).
        self.speak: render.Speak = render.speech(backend.info.locale)
        self.served: Served | None = None
        self._open_state = open_state
        self._state: BridgeState | None = None
        self.tasks: set[asyncio.Task[None]] = set()

    @property
    def decides(self) -> Decides | None:
        """The backend's actions (a Talkie server's), or None where it has none."""
        return self.backend if isinstance(self.backend, Decides) else None

    @property
    def state(self) -> BridgeState:
        """The state file (open once the bridge learned the agent's id)."""
        if self._state is None:
            raise RuntimeError("the bridge has not started")
        return self._state

    def serve(self, served: Served) -> None:
        """The bridge learned whom it serves: its state file opens (once)."""
        self.served = served
        if self._state is None:
            self._state = self._open_state(served.agent_id)

    def keep(self, task: asyncio.Task[None]) -> None:
        """A task the bridge cancels when it stops."""
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def spawn(self, coroutine: Awaitable[None]) -> None:
        """Run a coroutine as a task the bridge cancels when it stops."""
        self.keep(asyncio.ensure_future(coroutine))
