"""Push-to-talk dictation (`capabilities.dictation`): speak, review the text, send it yourself.

F6 (or Ctrl+Space) starts a recording from the microphone, shown above the composer with its
time and level; F6 again or Enter stops it, Esc throws it away. The recording goes to the
server (`Dictates.transcribe`) and its text is put into the composer at the cursor, for the
person to read, correct and send: a dictation is never sent on its own. When that message is
sent, the server's key of the stored audio (`voice_input_key`) goes with it, so the history can
replay what was said; a second dictation before sending replaces the key, and a composer
emptied forgets it.

Terminals report no key release, so the key toggles (no holding). Talkie servers keep F5 for
their real-time calls; dictation is only where the server offers it. The audio stack
(`talkie_tui.voice`: numpy, PortAudio) is imported when a recording starts, never before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from textual.binding import Binding, BindingType

from talkie_tui.core.errors import TalkieError
from talkie_tui.i18n import N_, _
from talkie_tui.ui.chat import voice as voice_ui
from talkie_tui.ui.chat.recorder import MicrophoneRecorder, RecorderHost
from talkie_tui.ui.chat.recording import MAX_SECONDS, Recording

if TYPE_CHECKING:
    from talkie_tui.backends.base import Backend, Dictates
    from talkie_tui.voice.microphone import Microphone

__all__ = ["DICTATION_BINDINGS", "Dictation", "make_microphone"]

# Priority: the composer (a TextArea) binds F6 and Enter itself; these apply only when
# dictation can start, or while it records (the screen's `check_action` says when).
DICTATION_BINDINGS: list[BindingType] = [
    *voice_ui.talk_bindings("dictate", N_("Dictate")),
    Binding("enter", "dictation_stop", N_("Stop recording"), priority=True),
]
CANCEL_BINDING = Binding("escape", "dictation_cancel", N_("Cancel dictation"))


def make_microphone(options: voice_ui.VoiceOptions) -> Microphone:
    """The sound card's microphone (not yet started); tests replace this function."""
    from talkie_tui.voice.sound_card import DeviceMicrophone

    return DeviceMicrophone(options.input_device)


class Dictation(MicrophoneRecorder):
    """The one dictation of a chat screen: idle, recording, or transcribing."""

    NEEDS_MICROPHONE = N_("Dictation needs a microphone: {reason}")

    def __init__(self, host: RecorderHost, backend: Backend, options: voice_ui.VoiceOptions):
        super().__init__(host, backend, options)
        self.voice_key: str | None = None
        """The server's key of the audio of the text in the composer (None: typed)."""

    @property
    def offered(self) -> bool:
        """True when the server turns a recording into text."""
        return self._backend.info.capabilities.dictation

    def allows(self, action: str) -> bool | None:
        """Whether a dictation key does something now; None for another action."""
        if action == "dictate":
            return self.offered and self.state != "transcribing"
        if action == "dictation_stop":
            return self.state == "recording"
        if action == "dictation_cancel":
            return self.state != "idle"
        return None

    # --- the keys ------------------------------------------------------------------------

    def toggle(self) -> None:
        """F6: start recording, or stop and transcribe."""
        if self.state == "recording":
            self.stop()
        elif self.state == "idle" and self.offered:
            self._start("dictation")

    def cancel(self) -> None:
        """Esc: stop and throw the recording away (a transcription on its way is dropped)."""
        self._stopping = self._cancelled = True
        if self.state == "transcribing":
            self._end()

    def forget(self) -> None:
        """The composer's text is no longer dictated (emptied, sent, another thread)."""
        self.voice_key = None

    def extras(self) -> dict[str, Any]:
        """The keyword arguments of `prepare` for a dictated message ({} for a typed one)."""
        return {"voice_input_key": self.voice_key} if self.offered and self.voice_key else {}

    # --- the work ------------------------------------------------------------------------

    def _make_microphone(self) -> Microphone:
        return make_microphone(self._options)

    def _longest(self) -> float:
        return MAX_SECONDS

    async def _finished(self, recording: Recording, *, cut: bool) -> None:
        await self._transcribe(recording)

    async def _transcribe(self, recording: Recording) -> None:
        self._show("transcribing")
        dictates = cast("Dictates", self._backend)  # `capabilities.dictation` says it is one
        try:
            result = await dictates.transcribe(recording.wav())
        except TalkieError as error:
            if self.state != "idle":
                self._end()
                if not self._host.sign_in_needed(error):
                    self._fail(
                        _("The recording was not transcribed: {error} {hint}").format(
                            error=error.message, hint=error.retry_hint
                        )
                    )
            return
        if self.state == "idle":  # cancelled while it was on its way
            return
        self._end()
        text = " ".join(result.text.split())
        if not text:
            self._host.notify(
                _("Nothing was understood in the recording."), severity="warning", markup=False
            )
            return
        self._insert(text)
        self.voice_key = result.audio_key

    def _insert(self, text: str) -> None:
        """Put the text at the composer's cursor, spaced from what is around it."""
        composer = self._host.composer
        row, column = composer.cursor_location
        line = composer.document.get_line(row)
        before = line[:column]
        if before and not before.endswith((" ", "\n")):
            text = " " + text
        composer.insert(text)
        composer.focus()
        self._host.notify(_("Review the text, then press Enter to send it."), markup=False)
