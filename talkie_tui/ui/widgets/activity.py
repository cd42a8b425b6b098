"""The line under the conversation: what the agent is doing now, and whether it can be reached.

A hub says that an agent thinks or works (with a label) until a moment (`activity`, shown for
about ten seconds unless renewed), and whether it is connected or unreachable (`agent.status`).
The conversation keeps both beside its turns (where it `ShowsAgents`); this line reads them,
through `ActivitySource`, after every change and twice a second, so an activity that lapses
goes away on its own even when nothing else happens.
An agent that is unreachable is "away": what the person sends waits at the hub for it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, ClassVar

from textual.content import Content
from textual.timer import Timer
from textual.widget import Widget

from talkie_tui.backends.parts.activity import AgentActivity, ShowsAgents
from talkie_tui.core.sanitize import clean_text
from talkie_tui.i18n import _

__all__ = ["ACTIVITY_SECONDS", "ActivityLine", "activity_words", "away_words"]

ACTIVITY_SECONDS = 10.0
"""How long an activity shows when the hub gave no `expires_at` (the hub's own expiry)."""
TICK_SECONDS = 0.5

ActivitySource = Callable[[], Any]
"""Gives the conversation on screen (its agents shown where it `ShowsAgents`)."""


def away_words() -> str:
    """What an unreachable agent's line says."""
    return _("The agent is away; what you send is delivered when it is back.")


def activity_words(state: str, label: str | None) -> str:
    """ "thinking…", "working: label", or "" for idle or an unknown state."""
    if state == "thinking":
        return _("thinking…")
    if state == "working":
        label = " ".join(clean_text(label or "").split())
        return _("working: {label}").format(label=label) if label else _("working…")
    return ""


def _timestamp(moment: object) -> float | None:
    if not isinstance(moment, datetime):
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


class ActivityLine(Widget):
    """One line: the agent's activity while it lasts, and "away" while it is unreachable."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"activity--away", "activity--doing"}

    def __init__(
        self,
        source: ActivitySource,
        *,
        clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id, classes="activity-line -empty")
        self._source = source
        self._clock = clock
        self._monotonic = monotonic
        self._seen: dict[int, tuple[object, float]] = {}  # an activity without expiry: when seen
        self._words: tuple[str, str] = ("", "")
        self._ticker: Timer | None = None

    def on_mount(self) -> None:
        """Read the conversation now and twice a second."""
        self._ticker = self.set_interval(TICK_SECONDS, self.refresh_now)
        self.refresh_now()

    @property
    def text(self) -> str:
        """What the line says now (plain; for tests and screen readers)."""
        return "  ·  ".join(words for words in self._words if words)

    def refresh_now(self) -> None:
        """Read the conversation again and redraw when the words changed."""
        conversation = self._source()
        away = self._away(conversation)
        doing = self._doing(conversation)
        words = (away_words() if away else "", doing)
        if words == self._words:
            return
        self._words = words
        self.set_class(away, "-away")
        self.set_class(bool(doing), "-doing")
        self.set_class(not (away or doing), "-empty")
        self.refresh()

    def _away(self, conversation: object) -> bool:
        return isinstance(conversation, ShowsAgents) and conversation.agents_away

    def _doing(self, conversation: object) -> str:
        if not isinstance(conversation, ShowsAgents):
            return ""
        now = self._clock()
        shown: list[str] = []
        for activity in conversation.agent_activities:
            words = activity_words(activity.state, activity.label)
            if words and not self._lapsed(activity, now):
                shown.append(words)
        return " · ".join(dict.fromkeys(shown))

    def _lapsed(self, activity: AgentActivity, now: float) -> bool:
        until = _timestamp(activity.expires_at)
        if until is not None:
            return now >= until
        seen = self._seen.get(id(activity))
        if seen is None or seen[0] is not activity:
            self._seen[id(activity)] = (activity, self._monotonic())
            return False
        return self._monotonic() - seen[1] >= ACTIVITY_SECONDS

    def render(self) -> Content:
        """The words, styled by what they say (plain text, never markup)."""
        away, doing = self._words
        parts: list[tuple[str, Any]] = []
        if away:
            parts.append((away, self.get_visual_style("activity--away")))
        if doing:
            if parts:
                parts.append(("  ·  ", ""))
            parts.append((doing, self.get_visual_style("activity--doing")))
        return Content.assemble(*parts)
