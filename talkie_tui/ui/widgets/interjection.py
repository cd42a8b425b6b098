"""What the person said into a running answer, shown inside the agent's turn as their words."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from talkie_tui.chat.turns import InterjectionPart
from talkie_tui.core.sanitize import clean_text
from talkie_tui.i18n import _
from talkie_tui.ui.widgets.markdown_view import MarkdownView

__all__ = ["InterjectionView"]


class InterjectionView(Vertical):
    """An `InterjectionPart`: "You" and the words, styled like the person's own message."""

    def __init__(self, part: InterjectionPart) -> None:
        super().__init__(classes="interjection")
        self.part = part

    def compose(self) -> ComposeResult:
        """The person's role line and text, as a message of theirs would show them."""
        yield Static(Text(_("You, while the agent worked")), classes="interjection--role")
        # Like the person's own message: the Markdown subset, never markup; cleaned again
        # since it is their pasted text as the server echoed it.
        yield MarkdownView(clean_text(self.part.text), classes="interjection--text")
