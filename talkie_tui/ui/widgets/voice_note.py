"""Voice notes (a hub's): the note in the transcript, and the recording above the composer.

`VoiceNoteView` draws a received or sent note as one line, its waveform and its length
(`♪ ▂▅▇█▆▃▁ 0:07`); it takes the focus, and Enter (or a click) asks the screen to play it
(`PlayAsked`), Enter or Esc again to stop (`StopAsked`); while it plays, the part already heard
is lit and the time runs (`show_progress`). A note being recorded shows in the dictation's bar
(`DictationBar`), with the microphone's level.
"""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.content import Content
from textual.events import Click
from textual.message import Message
from textual.widget import Widget

from talkie_tui.chat.turns import AttachmentPart
from talkie_tui.chat.voice_notes import voice_length
from talkie_tui.i18n import N_

__all__ = ["VoiceNoteView", "waveform_cells"]

_BARS = "▁▂▃▄▅▆▇█"
WAVE_CELLS = 32  # two of the hub's 64 values a cell


def waveform_cells(values: tuple[int, ...], cells: int = WAVE_CELLS) -> str:
    """The waveform as `cells` rising bars (each the loudest of the values it covers)."""
    if not values:
        return _BARS[0] * cells
    out = []
    for cell in range(cells):
        start = cell * len(values) // cells
        end = max(start + 1, (cell + 1) * len(values) // cells)
        level = max(values[start:end]) if start < len(values) else 0
        out.append(_BARS[min(len(_BARS) - 1, level * len(_BARS) // 101)])
    return "".join(out)


class VoiceNoteView(Widget):
    """A voice note on a turn: its waveform and length; Enter plays it."""

    HELP_GROUP = N_("Voice note")
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "voice-note--icon",
        "voice-note--played",
        "voice-note--wave",
        "voice-note--length",
    }
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "play", N_("Play or stop")),
        Binding("escape", "stop", N_("Stop playing")),
    ]

    class PlayAsked(Message):
        """The person asked to hear the note (Enter or a click on it)."""

        def __init__(self, view: VoiceNoteView) -> None:
            super().__init__()
            self.view = view

        @property
        def control(self) -> VoiceNoteView:
            """The note's line."""
            return self.view

    class StopAsked(PlayAsked):
        """The person asked to stop hearing the note (Esc, or Enter while it plays)."""

    def __init__(self, part: AttachmentPart) -> None:
        super().__init__(classes="voice-note")
        self.part = part
        self.progress: float | None = None
        """How much has been played, 0..1, while it plays; None otherwise."""
        self.can_focus = bool(part.url)

    @property
    def playing(self) -> bool:
        """True while the note plays."""
        return self.progress is not None

    def show_progress(self, progress: float | None) -> None:
        """Draw how far playing has come (None: it is not playing)."""
        self.progress = None if progress is None else min(1.0, max(0.0, progress))
        self.set_class(self.playing, "-playing")
        self.refresh()
        if self.is_attached:  # a redrawn turn may have replaced it while it played
            self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Esc stops only a note that plays (else it is the screen's)."""
        return self.playing if action == "stop" else True

    def action_play(self) -> None:
        """Enter: play the note, or stop it while it plays."""
        if self.playing:
            self.post_message(self.StopAsked(self))
        elif self.part.url:
            self.post_message(self.PlayAsked(self))

    def action_stop(self) -> None:
        """Esc while it plays: stop."""
        self.post_message(self.StopAsked(self))

    def on_click(self, event: Click) -> None:
        """A click is a gesture just like Enter."""
        event.stop()
        self.action_play()

    def render(self) -> Content:
        """Icon, waveform (the part heard lit), then the length (and the time while playing)."""
        duration = self.part.duration_ms or 0
        wave = waveform_cells(self.part.waveform)
        heard = round(len(wave) * self.progress) if self.progress is not None else 0
        length = voice_length(duration)
        if self.progress is not None:
            length = f"{voice_length(round(duration * self.progress))} / {length}"
        return Content.assemble(
            ("■ " if self.playing else "▶ ", self.get_visual_style("voice-note--icon")),
            (wave[:heard], self.get_visual_style("voice-note--played")),
            (wave[heard:], self.get_visual_style("voice-note--wave")),
            (f" {length}", self.get_visual_style("voice-note--length")),
        )
