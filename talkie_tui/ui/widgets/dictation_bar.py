"""The dictation's state above the composer: recording (time and level), or transcribing."""

from __future__ import annotations

from typing import Literal

from rich.text import Text
from textual.widgets import Static

from talkie_tui.i18n import _
from talkie_tui.ui.widgets.voice_bar import format_clock, meter

__all__ = ["DictationBar", "DictationState"]

DictationState = Literal["idle", "recording", "transcribing", "preparing"]
"""`preparing`: a voice note (a hub's) is made and uploaded, for review before it is sent."""


class DictationBar(Static):
    """ "● Recording 0:03 ▂▄▆ · F6 or Enter: stop · Esc: cancel"; hidden while idle."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.state: DictationState = "idle"
        self.seconds = 0.0
        self.level = 0.0

    def on_mount(self) -> None:
        self.display = False

    def show_state(self, state: DictationState, seconds: float = 0.0, level: float = 0.0) -> None:
        """Draw the dictation now: its state, how long it records and how loud it hears."""
        self.state, self.seconds, self.level = state, seconds, level
        self.display = state != "idle"
        for name in ("recording", "transcribing", "preparing"):
            self.set_class(state == name, f"-{name}")
        self.update(self._words())

    def _words(self) -> Text:
        if self.state == "preparing":
            return Text.assemble(
                ("⋯ ", "bold"), _("Preparing the voice note… it waits above the message to review.")
            )
        if self.state == "transcribing":
            return Text.assemble(
                ("⋯ ", "bold"), _("Transcribing… the text comes into the message to review.")
            )
        lit, unlit = meter(self.level)
        return Text.assemble(
            ("● ", "bold red"),
            (_("Recording {time}").format(time=format_clock(self.seconds)), "bold"),
            "  ",
            (lit, "green"),
            (unlit, "dim"),
            ("  " + _("F6 or Enter: stop · Esc: cancel"), "dim"),
        )
