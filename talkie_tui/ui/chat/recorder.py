"""What dictation and a voice note share: a recording from the microphone, shown in the bar
above the composer with its time and level, until it is stopped, thrown away, or long enough.

`MicrophoneRecorder` records; its subclass says what the recording becomes (`_finished`): a
dictation's text (`dictation.Dictation`), a hub's voice note (`voice_notes.VoiceNotes`). The
audio stack is imported when a recording starts, never before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from talkie_tui.i18n import _
from talkie_tui.ui.chat import voice as voice_ui
from talkie_tui.ui.chat.host import ChatHost
from talkie_tui.ui.chat.recording import Recording

if TYPE_CHECKING:
    from textual.timer import Timer

    from talkie_tui.backends.base import Backend
    from talkie_tui.ui.widgets.dictation_bar import DictationBar, DictationState
    from talkie_tui.voice.microphone import Microphone

__all__ = ["TICK", "MicrophoneRecorder", "RecorderHost"]

TICK = 0.1  # the bar's clock and meter: ten redraws a second, only while recording


class RecorderHost(ChatHost, Protocol):
    """What a recording needs of the screen; `ChatScreen` is one."""

    @property
    def dictation_bar(self) -> DictationBar:
        """Where the recording shows."""


class MicrophoneRecorder:
    """One recording at a time of a chat screen, shown in the dictation's bar."""

    NEEDS_MICROPHONE = ""
    """What the person is told when there is no microphone (`{reason}`: why)."""

    def __init__(self, host: RecorderHost, backend: Backend, options: voice_ui.VoiceOptions):
        self._host = host
        self._backend = backend
        self._options = options
        self.state: DictationState = "idle"
        self._microphone: Microphone | None = None
        self._recording: Recording | None = None
        self._stopping = False
        self._cancelled = False
        self._timer: Timer | None = None

    def _make_microphone(self) -> Microphone:
        """The microphone to record from (not yet started)."""
        raise NotImplementedError

    def _longest(self) -> float:
        """How many seconds a recording may last: it stops there."""
        raise NotImplementedError

    async def _finished(self, recording: Recording, *, cut: bool) -> None:
        """What the recording becomes (`cut`: it stopped at `_longest`)."""
        raise NotImplementedError

    def _start(self, name: str) -> None:
        """Start recording (in a worker named `name`)."""
        self._stopping = self._cancelled = False
        self._recording = Recording()
        self._show("recording")
        self._timer = self._host.set_interval(TICK, self._tick)
        self._host.run_worker(self._run, name=name, group=name, exclusive=True, exit_on_error=False)

    def stop(self) -> None:
        """Enter (or F6): stop recording; what was heard is used."""
        self._stopping = True

    async def _run(self) -> None:
        from talkie_tui.voice.sound import AudioError, AudioStopped, AudioUnavailable

        recording = self._recording
        assert recording is not None
        longest = self._longest()
        try:
            microphone = self._microphone = self._make_microphone()
            await microphone.start()
        except AudioUnavailable as error:
            self._end()
            self._fail(_(self.NEEDS_MICROPHONE).format(reason=error.reason))
            return
        try:
            while not self._stopping and recording.seconds < longest:
                recording.add(await microphone.read_frame())
        except AudioStopped:
            pass
        except AudioError as error:
            self._cancelled = True
            self._fail(_("The microphone stopped: {reason}").format(reason=error))
        finally:
            self._microphone = None
            await microphone.stop()
        if self._cancelled:
            self._end()
            return
        await self._finished(recording, cut=not self._stopping)

    # --- the bar -------------------------------------------------------------------------

    def _tick(self) -> None:
        if self.state == "recording":
            self._show("recording")

    def _show(self, state: DictationState) -> None:
        self.state = state
        recording, microphone = self._recording, self._microphone
        seconds = recording.seconds if recording is not None else 0.0
        level = microphone.level.fraction if microphone is not None else 0.0
        self._host.dictation_bar.show_state(state, seconds, level)

    def _end(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self._recording = None
        self._show("idle")

    def _fail(self, text: str) -> None:
        self._host.notify(text, severity="error", markup=False, timeout=10)
