"""The actions of the composer's extras' keys and messages, handed to their controllers.

A mixin of the chat screen, as `CallKeys` is: Textual finds a key's action and a message's
`on_*` handler on the screen, so they are the screen's own; they are written here, beside the
extras, because each only hands its key or message to the screen's `PendingAttachments` (files),
`ThreadModels` (the thread's model), `Dictation` (a message spoken) or `VoiceNotes` (a hub's
voice notes, recorded and played).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from talkie_tui.ui.chat.attaching import PendingAttachments
    from talkie_tui.ui.chat.dictation import Dictation
    from talkie_tui.ui.chat.model_choice import ThreadModels
    from talkie_tui.ui.chat.voice_notes import VoiceNotes
    from talkie_tui.ui.widgets.attachment import AttachmentView
    from talkie_tui.ui.widgets.attachment_tray import AttachmentTray
    from talkie_tui.ui.widgets.composer import Composer
    from talkie_tui.ui.widgets.voice_note import VoiceNoteView

__all__ = ["ExtrasKeys"]


class ExtrasKeys:
    """Ctrl+F attaches a file, the palette chooses the model, dictation records a message."""

    attachments: PendingAttachments
    models: ThreadModels
    dictation: Dictation
    voice_notes: VoiceNotes

    def action_attach(self) -> None:
        """Ask for a file to send with the next message."""
        self.attachments.ask()

    def on_composer_path_pasted(self, event: Composer.PathPasted) -> None:
        """A pasted path of a file: offer to attach it, else it is typed in as pasted."""
        self.attachments.offer(event.path, event.text)

    def on_attachment_tray_remove_requested(self, event: AttachmentTray.RemoveRequested) -> None:
        """✕ on a file of the next message: it goes."""
        event.stop()
        self.attachments.remove(event.item)

    def on_attachment_view_download_asked(self, event: AttachmentView.DownloadAsked) -> None:
        """Enter on a file sent with a message: download it."""
        event.stop()
        self.attachments.download(event.part)

    def action_choose_model(self) -> None:
        """Choose the model (and reasoning effort) of this thread's next messages."""
        self.models.pick()

    def action_dictate(self) -> None:
        """Start recording the next message, or stop and transcribe it."""
        self.dictation.toggle()

    def action_dictation_stop(self) -> None:
        """Enter while recording: stop, and transcribe what was said."""
        self.dictation.stop()

    def action_dictation_cancel(self) -> None:
        """Esc while dictating: throw the recording away."""
        self.dictation.cancel()

    def action_voice_note(self) -> None:
        """Start recording a voice note, or stop it for review."""
        self.voice_notes.toggle()

    def action_voice_note_stop(self) -> None:
        """Enter while recording a voice note: stop, and prepare it for review."""
        self.voice_notes.stop()

    def action_voice_note_cancel(self) -> None:
        """Esc while recording a voice note: throw it away."""
        self.voice_notes.cancel()

    def action_voice_note_quiet(self) -> None:
        """Esc while a voice note plays: stop it."""
        self.voice_notes.quiet()

    def on_voice_note_view_play_asked(self, event: VoiceNoteView.PlayAsked) -> None:
        """Enter on a voice note: play it."""
        event.stop()
        self.voice_notes.play(event.view)

    def on_voice_note_view_stop_asked(self, event: VoiceNoteView.StopAsked) -> None:
        """Enter or Esc on the voice note playing: stop it."""
        event.stop()
        self.voice_notes.quiet(event.view)
