"""Which script answers a message, by the same rule on every reference server."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

ContextT = TypeVar("ContextT")


class AgentSwitches(Protocol):
    """The two settings of a server's config that decide who answers."""

    @property
    def test_mode(self) -> bool: ...

    @property
    def demo_agent(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class AgentChoice(Generic[ContextT]):
    """A server's scripts: the test-mode ones by message, its demo agent, and a placeholder
    that says the server runs without one. Each answers through the server's context."""

    test_script: Callable[[str], Callable[[ContextT], Awaitable[None]] | None]
    demo: Callable[[ContextT], Awaitable[None]]
    placeholder: Callable[[ContextT], Awaitable[None]]

    def choose(self, config: AgentSwitches, text: str) -> Callable[[ContextT], Awaitable[None]]:
        """The script answering a message: a test-mode script, the demo agent, or a placeholder."""
        if config.test_mode:
            script = self.test_script(text)
            if script is not None:
                return script
        return self.demo if config.demo_agent else self.placeholder
