"""The wait for a broken stream's answer: "reconnecting… N s" in the header until it is in."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from textual.screen import Screen
    from textual.timer import Timer

    from talkie_tui.ui.widgets.header import TalkieHeader

__all__ = ["AnswerWait"]


class AnswerWait:
    """Counts the seconds waited in the header; the screen's Esc stops the wait while it runs."""

    def __init__(
        self,
        screen: Screen[None],
        header: Callable[[], TalkieHeader],
        changed: Callable[[], None],
    ) -> None:
        self._screen = screen  # its timer counts, its bindings follow the wait
        self._header = header
        self._changed = changed  # the header's state reads `waiting` again
        self._timer: Timer | None = None

    @property
    def waiting(self) -> bool:
        """True while the answer is awaited."""
        return self._timer is not None

    def start(self) -> None:
        """The stream broke: "reconnecting", with the seconds waited, until the answer is in."""
        began = time.monotonic()
        self._header().waited = 0

        def tick() -> None:
            self._header().waited = int(time.monotonic() - began)

        self._timer = self._screen.set_interval(1.0, tick)
        self._changed()
        self._screen.refresh_bindings()

    def end(self) -> None:
        """The answer is in, or no longer awaited."""
        if self._timer is None:
            return
        self._timer.stop()
        self._timer = None
        self._changed()
        self._screen.refresh_bindings()
