"""The input guard of widgets that decide something (action cards, the agent's questions).

A keystroke already in flight when such a widget appears, or becomes answerable again, must not
decide it: for `GUARD_SECONDS` every key and click on it is ignored. A risky choice asks once
more, and that second question lapses after `ASK_AGAIN_SECONDS`, so a stray key much later
cannot complete it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

__all__ = ["ASK_AGAIN_SECONDS", "GUARD_SECONDS", "Clock", "InputGuard"]

Clock = Callable[[], float]

GUARD_SECONDS = 0.7
ASK_AGAIN_SECONDS = 10.0


class InputGuard:
    """Ignores input until `seconds` after it was last armed (never before the first arming)."""

    def __init__(self, seconds: float = GUARD_SECONDS, monotonic: Clock = time.monotonic) -> None:
        self.seconds = seconds
        self._monotonic = monotonic
        self._armed_at = math.inf  # nothing counts before the widget is on screen

    def arm(self) -> None:
        """Ignore input for the guard period from now."""
        self._armed_at = self._monotonic() + self.seconds

    @property
    def active(self) -> bool:
        """True while keys and clicks are to be ignored."""
        return self._monotonic() < self._armed_at

    @property
    def left(self) -> float:
        """Seconds until input counts again (0 when it already does)."""
        return max(0.0, self._armed_at - self._monotonic())
