"""The files waiting to go with the next message, above the composer: one row each.

A row shows the file's name, kind and size, then its upload: a percentage while it goes up, ✓
once the server holds it, ✗ with the reason when it failed. Its ✕ button (or Delete on it)
asks to remove the file; the screen's `PendingAttachments` does the removing. The tray is
hidden while nothing is attached.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Literal

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, Static

from talkie_tui.chat.turns import AttachmentPart
from talkie_tui.core.sanitize import clean_text
from talkie_tui.i18n import N_, _
from talkie_tui.ui.widgets.attachment import attachment_line
from talkie_tui.ui.widgets.voice_note import VoiceNoteView

if TYPE_CHECKING:
    from talkie_tui.backends.base import Attachment
    from talkie_tui.chat.attachments import CheckedFile

__all__ = ["AttachmentRow", "AttachmentTray", "Pending", "UploadState"]

UploadState = Literal["uploading", "ready", "failed"]

_BAR_CELLS = 8


@dataclass(eq=False)
class Pending:
    """One file of the next message: checked, then uploading, ready or failed."""

    file: CheckedFile
    state: UploadState = "uploading"
    sent: int = 0
    total: int = 0
    attachment: Attachment | None = None
    error: str = ""
    row: AttachmentRow | None = field(default=None, repr=False)

    @property
    def fraction(self) -> float:
        """How much of the file went up, 0..1."""
        total = self.total or self.file.size
        return min(1.0, self.sent / total) if total else 0.0


def describe(item: Pending) -> Text:
    """A row's words: icon, name · kind · size as on the sent turn, then the upload's
    progress, ✓, or ✗ and why."""
    file = item.file
    # Once uploaded, the server's word for the kind (a hub's "file" for a spreadsheet): the
    # row says what the sent turn will say.
    attached = item.attachment
    kind = attached.kind if attached is not None else file.kind
    part = AttachmentPart("", file.filename, file.media_type, file.size, kind)
    icon, words = attachment_line(part)
    if attached is not None and attached.duration_ms is not None:
        icon, words = "♪", _("voice note")  # its waveform and length follow (`AttachmentRow`)
    text = Text.assemble((f"{icon} ", "bold"), words)
    if item.state == "uploading":
        lit = round(item.fraction * _BAR_CELLS)
        bar = "▰" * lit + "▱" * (_BAR_CELLS - lit)
        percent = round(item.fraction * 100)
        text.append(f"  ⇡ {bar} ", "dim")
        text.append(_("{percent}% uploading").format(percent=percent))
    elif item.state == "ready":
        text.append("  ✓ ", "green")
        text.append(_("uploaded"), "dim")
    else:
        text.append("  ✗ ", "red")
        text.append(_("not uploaded: {error}").format(error=clean_text(item.error)))
    return text


class AttachmentRow(Horizontal):
    """One pending file: what it is and how its upload goes, and ✕ to remove it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("delete,backspace", "remove", N_("Remove file")),
    ]

    def __init__(self, item: Pending) -> None:
        super().__init__(classes=f"attachment-row -{item.state}")
        self.item = item
        self._label = Static(describe(item), classes="attachment-label")

    def compose(self) -> ComposeResult:
        yield self._label
        attached = self.item.attachment
        if attached is not None and attached.duration_ms is not None:
            # A voice note to review: Enter on its waveform plays it before it is sent.
            self.add_class("-voice")
            yield VoiceNoteView(attached.as_part())
        yield Button(
            "✕",
            classes="attachment-remove",
            tooltip=_("Remove {name}").format(name=clean_text(self.item.file.filename)),
        )

    def show(self) -> None:
        """Draw the item's state again (progress, done, failed)."""
        for state in ("uploading", "ready", "failed"):
            self.set_class(self.item.state == state, f"-{state}")
        self._label.update(describe(self.item))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_remove()

    def action_remove(self) -> None:
        """Ask the screen to remove this file from the next message."""
        self.post_message(AttachmentTray.RemoveRequested(self.item))


class AttachmentTray(Vertical):
    """The pending files of the next message, one `AttachmentRow` each; hidden when empty."""

    class RemoveRequested(Message):
        """The person asked to remove a pending file (its ✕, or Delete)."""

        def __init__(self, item: Pending) -> None:
            super().__init__()
            self.item = item

    class Progress(Message):
        """An upload went on (posted from the upload's progress callback, any thread)."""

        def __init__(self, item: Pending) -> None:
            super().__init__()
            self.item = item

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._rows = 0  # counted here: mounting and removing finish after the call

    def on_mount(self) -> None:
        self.border_title = _("Files for the next message")
        self.display = self._rows > 0

    def add(self, item: Pending, *, first: bool = False) -> None:
        """Show a new pending file (at the top with `first`: a failed send gave it back)."""
        row = item.row = AttachmentRow(item)
        rows = list(self.query(AttachmentRow))
        if first and rows:
            self.mount(row, before=rows[0])
        else:
            self.mount(row)
        self._rows += 1
        self.display = True

    def drop(self, item: Pending) -> None:
        """Stop showing a file."""
        row, item.row = item.row, None
        if row is None:
            return
        row.remove()
        self._rows -= 1
        self.display = self._rows > 0

    def show(self, item: Pending) -> None:
        """Draw one file's state again."""
        if item.row is not None:
            item.row.show()

    def on_attachment_tray_progress(self, event: AttachmentTray.Progress) -> None:
        event.stop()
        self.show(event.item)
