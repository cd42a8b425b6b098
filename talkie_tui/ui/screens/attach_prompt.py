"""Ask for the path of a file to attach (Ctrl+F): a box that completes paths as they are typed."""

from __future__ import annotations

import os
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.suggester import Suggester
from textual.widgets import Input, Static

from talkie_tui.i18n import N_, _
from talkie_tui.ui.support.localized import LocalizedBindings

__all__ = ["AttachPromptScreen", "PathSuggester", "complete_path"]

_MAX_ENTRIES = 2000  # a huge folder is not listed for a suggestion


def complete_path(typed: str) -> str | None:
    """The first entry of the typed path's folder that starts with its last part (a folder
    gets its "/"); None when nothing matches. Hidden entries only when asked for with a dot."""
    if not typed:
        return None
    path = Path(typed).expanduser()
    folder, prefix = (path, "") if typed.endswith(os.sep) else (path.parent, path.name)
    hidden = prefix.startswith(".")
    try:
        with os.scandir(folder) as entries:
            names = sorted(
                (entry.name + (os.sep if entry.is_dir() else ""))
                for _index, entry in zip(range(_MAX_ENTRIES), entries, strict=False)
                if entry.name.startswith(prefix) and (hidden or not entry.name.startswith("."))
            )
    except OSError:
        return None
    if not names or names[0] == prefix:
        return None
    return typed + names[0][len(prefix) :]


class PathSuggester(Suggester):
    """Suggests the rest of a path from the file system (Right or End takes it)."""

    def __init__(self) -> None:
        super().__init__(use_cache=False, case_sensitive=True)

    async def get_suggestion(self, value: str) -> str | None:
        """The typed path completed to its first match."""
        return complete_path(value)


class AttachPromptScreen(LocalizedBindings, ModalScreen[Path | None]):
    """The path of a file to attach; Enter attaches it, Esc closes."""

    HELP_GROUP = N_("Attach a file")
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", N_("Close"))]

    def compose(self) -> ComposeResult:
        with Vertical(classes="picker-box attach-box"):
            yield Static(
                Text(_("The file to send with the next message (→ completes the path)")),
                classes="picker-title",
            )
            yield Input(
                placeholder=_("~/Documents/report.pdf"),
                suggester=PathSuggester(),
                id="attach-path",
            )

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        value = event.value.strip()
        self.dismiss(Path(value).expanduser() if value else None)
