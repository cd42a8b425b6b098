"""The actions of the composer's extras' keys and messages, handed to their controllers.

A mixin of the chat screen, as `CallKeys` is: Textual finds a key's action and a message's
`on_*` handler on the screen, so they are the screen's own; they are written here, beside the
extras, because each only hands its key or message to the screen's `PendingAttachments` (files),
`ThreadModels` (the thread's model) or `Dictation` (a message spoken).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from talkie_tui.ui.chat.attaching import PendingAttachments
    from talkie_tui.ui.chat.dictation import Dictation
    from talkie_tui.ui.chat.model_choice import ThreadModels
    from talkie_tui.ui.widgets.attachment_tray import AttachmentTray
    from talkie_tui.ui.widgets.composer import Composer

__all__ = ["ExtrasKeys"]


class ExtrasKeys:
    """Ctrl+F attaches a file, the palette chooses the model, dictation records a message."""

    attachments: PendingAttachments
    models: ThreadModels
    dictation: Dictation

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
