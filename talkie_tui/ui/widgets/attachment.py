"""A file the person sent with a message: kind icon, name, kind and size on one line.

One the server serves back (its part has a URL) takes the focus, and Enter or a click asks the
screen to download it (`AttachmentView.DownloadAsked`): only then, and the screen decides where
it may come from.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.content import Content
from textual.events import Click
from textual.message import Message
from textual.widget import Widget

from talkie_tui.chat.turns import AttachmentPart
from talkie_tui.core.sanitize import clean_text
from talkie_tui.i18n import N_, pgettext
from talkie_tui.ui.widgets.card import human_size

__all__ = ["ICONS", "OTHER_ICON", "AttachmentView", "attachment_line"]

ICONS = {
    "image": "▣",
    "pdf": "▤",
    "spreadsheet": "▦",
    "text": "≡",
    "office": "▧",
    "audio": "♪",
    "video": "▶",
}
OTHER_ICON = "□"
_KIND_NAMES: dict[str, Callable[[], str]] = {
    "image": lambda: pgettext("attachment kind", "image"),
    "pdf": lambda: pgettext("attachment kind", "PDF"),
    "spreadsheet": lambda: pgettext("attachment kind", "spreadsheet"),
    "text": lambda: pgettext("attachment kind", "text"),
    "office": lambda: pgettext("attachment kind", "document"),
    "audio": lambda: pgettext("attachment kind", "audio"),
    "video": lambda: pgettext("attachment kind", "video"),
    "file": lambda: pgettext("attachment kind", "file"),
}


def attachment_line(part: AttachmentPart) -> tuple[str, str]:
    """The icon and the words of an attachment: "chart.png · image · 48.2 kB"."""
    name = _KIND_NAMES.get(part.kind)
    kind = name() if name is not None else clean_text(part.kind)
    pieces = [clean_text(part.filename), kind, human_size(max(0, part.size))]
    return ICONS.get(part.kind, OTHER_ICON), " · ".join(piece for piece in pieces if piece)


class AttachmentView(Widget):
    """An `AttachmentPart` on the person's turn."""

    HELP_GROUP = N_("Attachment")
    COMPONENT_CLASSES: ClassVar[set[str]] = {"attachment--icon", "attachment--name"}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "download", N_("Download"), show=False)
    ]

    class DownloadAsked(Message):
        """The person asked for the file (Enter or a click on its row)."""

        def __init__(self, view: AttachmentView) -> None:
            super().__init__()
            self.view = view

        @property
        def control(self) -> AttachmentView:
            """The attachment's row."""
            return self.view

        @property
        def part(self) -> AttachmentPart:
            """The file asked for."""
            return self.view.part

    def __init__(self, part: AttachmentPart) -> None:
        super().__init__(classes="attachment")
        self.part = part
        self.can_focus = bool(part.url)  # only a file the server serves back can be fetched

    def action_download(self) -> None:
        """Enter on the focused row: ask for the file."""
        if self.part.url:
            self.post_message(self.DownloadAsked(self))

    def on_click(self, event: Click) -> None:
        """A click is a gesture just like Enter."""
        event.stop()
        self.action_download()

    def render(self) -> Content:
        """Icon, then the name, kind and size as plain text (never markup)."""
        icon, words = attachment_line(self.part)
        return Content.assemble(
            (f"{icon} ", self.get_visual_style("attachment--icon")),
            (words, self.get_visual_style("attachment--name")),
        )
