"""The voice bar: above the composer while a call is on; what the call is doing, in words.

It renders state only: the chat screen gives it each `CallStatus`, and ~10 times a second
`tick()` with the microphone level, the call's elapsed time and the clock the consent deadline
is measured on. Built with fixed values it draws the same every time (snapshots).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, ClassVar

from textual.content import Content
from textual.style import Style
from textual.widget import Widget

from talkie_tui.i18n import N_, _, ngettext
from talkie_tui.ui.chat.voice import BARGE_IN_KEY, CALL_KEY, MODE_KEY, TALK_KEYS
from talkie_tui.ui.screens.help import describe_key
from talkie_tui.ui.widgets.durations import clock_text
from talkie_tui.ui.widgets.tool_status import SPINNER_FRAMES

if TYPE_CHECKING:
    from talkie_tui.voice.call_updates import CallStatus

__all__ = ["METER_CELLS", "VoiceBar", "format_clock", "format_left", "meter"]

METER_CELLS = 6
_METER_BLOCKS = "▂▃▄▅▆▇"
_STATES = ("connecting", "listening", "talking", "assistant_speaking", "consent", "ended")
_ICONS = {
    "connecting": "◌",
    "listening": "○",
    "talking": "●",
    "assistant_speaking": "♪",
    "consent": "⚑",
    "ended": "■",
}
_WORDS = {
    "connecting": N_("Connecting…"),
    "listening": N_("Listening"),
    "talking": N_("Talking"),
    "assistant_speaking": N_("Assistant speaking"),
    "ended": N_("Ended"),
}
_MODES = {"push_to_talk": N_("push-to-talk"), "hands_free": N_("hands-free")}


def _key(keys: str) -> str:
    return describe_key(keys.split(",")[0])


def format_clock(seconds: float) -> str:
    """Elapsed time as mm:ss (h:mm:ss from an hour)."""
    return clock_text(max(0, int(seconds)), pad_minutes=True)


def format_left(seconds: float) -> str:
    """Voice time left: "14 min left", or seconds in the last minute."""
    left = max(0, math.ceil(seconds))
    if left < 60:
        return ngettext("{count} s left", "{count} s left", left).format(count=left)
    minutes = math.ceil(left / 60)
    return ngettext("{count} min left", "{count} min left", minutes).format(count=minutes)


def meter(fraction: float, cells: int = METER_CELLS) -> tuple[str, str]:
    """The level meter as (lit blocks, unlit blocks): rising bars, lit up to `fraction`."""
    lit = max(0, min(cells, round(fraction * cells)))
    blocks = _METER_BLOCKS[:cells].ljust(cells, _METER_BLOCKS[-1])
    return blocks[:lit], blocks[lit:]


class VoiceBar(Widget):
    """State, time, microphone level and keys of the voice call."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "voice-bar--state",
        "voice-bar--countdown",
        "voice-bar--meter",
        "voice-bar--meter-off",
        "voice-bar--time",
        "voice-bar--mode",
        "voice-bar--keys",
        "voice-bar--info",
    }

    def __init__(
        self,
        status: CallStatus | None = None,
        *,
        level: float = 0.0,
        elapsed: float = 0.0,
        now: float = 0.0,
        max_seconds: float | None = None,
        consent_words: tuple[str, str] = ("yes", "no"),
        id: str | None = None,
    ) -> None:
        super().__init__(id=id, classes="voice-bar")
        self.status = status
        self.level = level
        self.elapsed = elapsed
        self.now = now
        self.max_seconds = max_seconds
        self.consent_words = consent_words
        self.tool_label = ""
        self.heard = ""
        self._frame = 0

    def on_mount(self) -> None:
        """Draw the state classes of the status given at construction."""
        self._sync_classes()

    # --- what the screen tells the bar --------------------------------------------------------

    @property
    def state(self) -> str:
        """The call's state (connecting until the first status)."""
        return self.status.state if self.status is not None else "connecting"

    def show_status(self, status: CallStatus, consent_words: tuple[str, str] | None = None) -> None:
        """A new status of the call; `consent_words` are what to say while consent is open."""
        if status.state == "talking":
            self.heard = ""  # a new utterance: the explanation of the last one is done
        self.status = status
        self.elapsed = max(self.elapsed, status.elapsed)
        if consent_words is not None:
            self.consent_words = consent_words
        self._sync_classes()
        self.refresh(layout=True)

    def tick(self, level: float, elapsed: float, now: float) -> None:
        """The live values: microphone level 0..1, call time, and the monotonic clock."""
        self.level, self.elapsed, self.now = level, elapsed, now
        if self.tool_label:
            self._frame = (self._frame + 1) % len(SPINNER_FRAMES)
        self.refresh()

    def show_tool(self, label: str) -> None:
        """A tool is running (its label), or none when empty."""
        self.tool_label = label
        self._frame = 0
        self.refresh(layout=True)

    def show_heard(self, text: str) -> None:
        """Why the last utterance did not decide the action (empty to clear)."""
        self.heard = text
        self.refresh(layout=True)

    def _sync_classes(self) -> None:
        for name in _STATES:
            self.set_class(name == self.state, f"-{name}")

    # --- rendering ------------------------------------------------------------------------------

    @property
    def consent_left(self) -> float | None:
        """Seconds left in the consent window, when one is open."""
        status = self.status
        if status is None or status.state != "consent" or status.consent_deadline is None:
            return None
        return max(0.0, status.consent_deadline - self.now)

    @property
    def time_left(self) -> float | None:
        """Voice seconds left: the server's last figure, moved on by the time since."""
        status = self.status
        if status is not None and status.remaining is not None:
            return status.remaining - max(0.0, self.elapsed - status.elapsed)
        if self.max_seconds is not None:
            return self.max_seconds - self.elapsed
        return None

    def state_text(self) -> str:
        """The state in words, as the first line shows it."""
        state = self.state
        if state == "consent":
            # The words are in the call's language; the sentence around them in the UI's.
            text = _("Say “{words}” to confirm").format(words=self.consent_words[0])
            left = self.consent_left
            return text if left is None else f"{text} · {math.ceil(left)} s"
        return _(_WORDS[state]) if state in _WORDS else state

    def keys_text(self) -> str:
        """The keys that do something now."""
        state = self.state
        push_to_talk = self.status is None or self.status.mode == "push_to_talk"
        talk, mode, call = _key(TALK_KEYS), _key(MODE_KEY), _key(CALL_KEY)
        hang_up = _("{key} hang up").format(key=call)
        if state == "connecting":
            return _("{key} cancel").format(key=call)
        if state == "ended":
            return ""
        switch = (
            _("{key} hands-free").format(key=mode)
            if push_to_talk
            else _("{key} push-to-talk").format(key=mode)
        )
        parts: list[str] = []
        if state == "assistant_speaking":
            parts.append(_("{key} interrupt").format(key=_key(BARGE_IN_KEY)))
        if push_to_talk:
            talking = state == "talking"
            parts.append((_("{key} send") if talking else _("{key} talk")).format(key=talk))
        elif state != "talking":
            parts.append(_("just speak"))
        if state == "consent":
            no = self.consent_words[1]
            parts.append(_("“{words}” cancels · y/n on the card").format(words=no))
        else:
            parts.append(switch)
        parts.append(hang_up)
        return " · ".join(parts)

    def lines(self) -> list[list[tuple[str, str]]]:
        """What the bar shows: lines of (text, component class) pieces."""
        state = self.state
        lit, unlit = meter(self.level if state not in ("connecting", "ended") else 0.0)
        icon = _ICONS.get(state, "·")
        if state == "listening" and self.status is not None and self.status.mode == "hands_free":
            icon = "◉"  # the microphone is open
        first = [
            (f"{icon} {self.state_text()}", "voice-bar--state"),
            ("  ", ""),
            (lit, "voice-bar--meter"),
            (unlit, "voice-bar--meter-off"),
            ("  ", ""),
            (format_clock(self.elapsed), "voice-bar--time"),
        ]
        left = self.time_left
        if left is not None:
            first.append((f" · {format_left(left)}", "voice-bar--time"))
        if self.status is not None:
            mode = self.status.mode
            first.append((f" · {_(_MODES[mode]) if mode in _MODES else ''}", "voice-bar--mode"))
        lines = [first]
        if self.tool_label:
            lines.append([(f"{SPINNER_FRAMES[self._frame]} {self.tool_label}", "voice-bar--info")])
        elif self.heard:
            lines.append([(self.heard, "voice-bar--info")])
        keys = self.keys_text()
        if keys:
            lines.append([(keys, "voice-bar--keys")])
        return lines

    @property
    def plain(self) -> str:
        """The bar as plain text (tests, the report)."""
        return "\n".join("".join(text for text, _style in line) for line in self.lines())

    def render(self) -> Content:
        """Up to three lines: state, level and time; a running tool or an explanation; keys."""
        styles: dict[str, Style] = {}

        def style(name: str) -> Style:
            if name not in styles:
                styles[name] = self.get_visual_style(name) if name else Style()
            return styles[name]

        return Content("\n").join(
            Content.assemble(*[(text, style(name)) for text, name in line]) for line in self.lines()
        )
