"""Voice notes on a hub (`capabilities.voice_notes`): record one, review it, send it; play one.

Recording: F6 (or Ctrl+Space) starts the microphone, shown above the composer with its time and
level (the dictation's bar); F6 again or Enter stops, Esc throws it away. A note stops by itself
at the longest the server takes (`RecordsVoiceNotes.voice_note_seconds`: a hub's 16 MiB of WAV
last 8:44), and the screen says so. The backend makes the recording into the server's voice
note (its WAV, length and waveform) and uploads it; the note then waits in the tray above the
composer ("♪ voice note ▶ ▂▅▇▆▃ 0:07"), where Enter on its waveform plays it, for the person to
send with Enter in the composer (with words or none) or to drop with Delete on its row: a
recording is never sent on its own, as with dictation.

Playing: Enter on a voice note in the transcript (`VoiceNoteView.PlayAsked`) fetches its bytes
from the server, signed in, and plays them through the output device, the line drawing how far
it has come; Enter or Esc again stops it, as does playing another. The audio stack (numpy,
PortAudio) is imported when a recording or a playing starts, never before.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, cast

from textual.binding import Binding, BindingType

from talkie_tui.core.errors import TalkieError
from talkie_tui.i18n import N_, _
from talkie_tui.ui.chat import dictation
from talkie_tui.ui.chat import voice as voice_ui
from talkie_tui.ui.chat.recorder import MicrophoneRecorder, RecorderHost
from talkie_tui.ui.chat.recording import WAV_RATE, Recording

if TYPE_CHECKING:
    from textual.worker import Worker

    from talkie_tui.backends.base import Backend, RecordsVoiceNotes
    from talkie_tui.ui.chat.attaching import PendingAttachments
    from talkie_tui.ui.widgets.dictation_bar import DictationState
    from talkie_tui.ui.widgets.voice_note import VoiceNoteView
    from talkie_tui.voice.microphone import Microphone
    from talkie_tui.voice.speaker import Speaker

__all__ = ["VOICE_NOTE_BINDINGS", "VOICE_NOTE_ESCAPES", "VoiceNotes", "make_speaker"]

MAX_NOTE_BYTES = 17 * 1024 * 1024  # a hub's 16 MiB of audio, and room for its headers

# Priority, as dictation's: the composer binds F6 and Enter itself. They apply only on a
# server with voice notes (the screen's `check_action` asks `allows`).
VOICE_NOTE_BINDINGS: list[BindingType] = [
    *voice_ui.talk_bindings("voice_note", N_("Voice note")),
    Binding("enter", "voice_note_stop", N_("Stop recording"), priority=True),
]
VOICE_NOTE_ESCAPES: list[BindingType] = [
    Binding("escape", "voice_note_cancel", N_("Discard voice note")),
    Binding("escape", "voice_note_quiet", N_("Stop playing")),
]


def make_speaker(options: voice_ui.VoiceOptions) -> Speaker:
    """The sound card's speaker (not yet started); tests replace this function."""
    from talkie_tui.voice.sound_card import DeviceSpeaker

    return DeviceSpeaker(options.output_device, latency="high")


class VoiceNotes(MicrophoneRecorder):
    """The voice notes of one chat screen: one recording, and one note playing, at a time."""

    NEEDS_MICROPHONE = N_("A voice note needs a microphone: {reason}")

    def __init__(
        self,
        host: RecorderHost,
        backend: Backend,
        options: voice_ui.VoiceOptions,
        attachments: PendingAttachments,
    ) -> None:
        super().__init__(host, backend, options)
        self._attachments = attachments
        self.playing: VoiceNoteView | None = None
        self._player: Worker[None] | None = None

    @property
    def offered(self) -> bool:
        """True when the server takes voice notes."""
        return self._backend.info.capabilities.voice_notes

    @property
    def _notes(self) -> RecordsVoiceNotes:
        return cast("RecordsVoiceNotes", self._backend)  # `capabilities.voice_notes` says so

    def allows(self, action: str) -> bool | None:
        """Whether a voice note's key does something now; None for another action."""
        if action == "voice_note":
            return self.offered and self.state != "preparing"
        if action in ("voice_note_stop", "voice_note_cancel"):
            return self.state == "recording"
        if action == "voice_note_quiet":
            return self.playing is not None
        return None

    # --- recording -----------------------------------------------------------------------

    def toggle(self) -> None:
        """F6: start recording a note, or stop it (it is then prepared for review)."""
        if self.state == "recording":
            self.stop()
        elif self.state == "idle" and self.offered:
            self.quiet()
            self._start("voice_note")

    def cancel(self) -> None:
        """Esc: stop and throw the recording away."""
        self._stopping = self._cancelled = True

    def _make_microphone(self) -> Microphone:
        return dictation.make_microphone(self._options)

    def _longest(self) -> float:
        return self._notes.voice_note_seconds

    async def _finished(self, recording: Recording, *, cut: bool) -> None:
        if recording.seconds <= 0:
            self._end()
            return
        if cut:
            longest = self._notes.voice_note_seconds
            self._host.notify(
                _("The voice note stopped at {length}, the longest this server takes.").format(
                    length=f"{longest // 60}:{longest % 60:02d}"
                ),
                severity="warning",
                markup=False,
            )
        self._show("preparing")
        try:
            attachment = await self._notes.upload_voice_note(recording.pcm(), WAV_RATE)
        except TalkieError as error:
            self._end()
            if not self._host.sign_in_needed(error):
                self._fail(
                    _("The voice note was not uploaded: {error} {hint}").format(
                        error=error.message, hint=error.retry_hint
                    )
                )
            return
        self._end()
        self._attachments.add_uploaded(attachment)
        composer = self._host.composer
        composer.sends_without_text = lambda: bool(self._attachments.ready_count())
        composer.focus()
        self._host.notify(
            _("Review the voice note above the message: Enter sends it, Delete on it drops it."),
            markup=False,
        )

    def _show(self, state: DictationState) -> None:
        super()._show(state)
        self._host.refresh_bindings()  # F6 does nothing while the note is prepared

    # --- playing -------------------------------------------------------------------------

    def play(self, view: VoiceNoteView) -> None:
        """Enter on a note: play it (another one playing stops first)."""
        self.quiet()
        self.playing = view
        view.show_progress(0.0)
        self._host.refresh_bindings()
        self._player = self._host.run_worker(
            partial(self._play, view),
            name="voice_note_play",
            group="voice_note_play",
            exit_on_error=False,
        )

    def quiet(self, view: VoiceNoteView | None = None) -> None:
        """Stop the note playing (only `view`, when given)."""
        playing = self.playing
        if playing is None or (view is not None and view is not playing):
            return
        if self._player is not None:
            self._player.cancel()
        self._stopped(playing)

    def _stopped(self, view: VoiceNoteView) -> None:
        if self.playing is view:
            self.playing = self._player = None
        view.show_progress(None)
        self._host.refresh_bindings()

    async def _play(self, view: VoiceNoteView) -> None:
        from talkie_tui.voice.note_player import decode_wav, play_note
        from talkie_tui.voice.sound import AudioError

        try:
            data = await self._fetch(view)
            samples = decode_wav(data)
            speaker = make_speaker(self._options)
            await speaker.start()
        except (TalkieError, ValueError, AudioError) as error:
            self._stopped(view)
            words = error.message if isinstance(error, TalkieError) else str(error)
            self._fail(_("The voice note cannot be played: {reason}").format(reason=words))
            return
        try:
            await play_note(speaker, samples, view.show_progress)
        finally:
            await speaker.stop()
            self._stopped(view)

    async def _fetch(self, view: VoiceNoteView) -> bytes:
        """The note's bytes from the server (its own origin only, signed in)."""
        url = self._backend.resolve_url(view.part.url or "")
        if not self._backend.is_same_origin(url):
            raise TalkieError(_("it is not on this server"))
        async with self._backend.download(url) as response:
            data = bytearray()
            async for chunk in response.aiter_bytes():
                data += chunk
                if len(data) > MAX_NOTE_BYTES:
                    raise TalkieError(_("it is larger than a voice note may be"))
        return bytes(data)
