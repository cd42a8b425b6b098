"""Ask for one line of text in a modal box (palette: Change your name): Enter gives it, Esc
gives None. The box starts with the current value, selected, so typing replaces it."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from talkie_tui.i18n import N_
from talkie_tui.ui.support.localized import LocalizedBindings

__all__ = ["LinePromptScreen"]


class LinePromptScreen(LocalizedBindings, ModalScreen[str | None]):
    """One line: `title` above it, `value` in it, at most `max_length` characters."""

    HELP_GROUP = N_("A line to type")
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", N_("Cancel"))]

    def __init__(self, title: str, value: str = "", *, max_length: int = 0) -> None:
        super().__init__()
        self.title_text = title
        self.value = value
        self.max_length = max_length

    def compose(self) -> ComposeResult:
        with Vertical(classes="picker-box line-prompt-box"):
            yield Static(Content(self.title_text), classes="picker-title")
            yield Input(self.value, max_length=self.max_length, id="line-prompt")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter: the line typed (None when it is blank)."""
        event.stop()
        value = " ".join(event.value.split())
        self.dismiss(value or None)
