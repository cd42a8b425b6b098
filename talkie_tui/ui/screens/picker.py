"""Pick a link to open, or a code block or an answer to copy, from the keyboard."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from talkie_tui.i18n import N_, _
from talkie_tui.ui.support.localized import LocalizedBindings

__all__ = ["PickItem", "PickerScreen"]


@dataclass(frozen=True, slots=True)
class PickItem:
    """One choice: a link (its URL) or text to copy."""

    kind: Literal["link", "code", "answer"]
    label: str
    value: str

    def row(self) -> Text:
        """The row as plain text (server text is never markup)."""
        first_line = self.label.splitlines()[0] if self.label else ""
        if self.kind == "link":
            return Text.assemble(("↗ ", "bold"), first_line, ("  " + self.value, "dim"))
        kind = _("code") if self.kind == "code" else _("answer")
        marker = f"⧉ {kind}  "
        return Text.assemble((marker, "bold"), first_line[:100])


class PickerScreen(LocalizedBindings[PickItem | None], ModalScreen[PickItem | None]):
    """A list of links and copyable pieces of the conversation; Enter picks, Esc closes."""

    HELP_GROUP = N_("Picker screen")
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", N_("Close"))]

    def __init__(self, items: list[PickItem]) -> None:
        super().__init__()
        self.items = items

    def compose(self) -> ComposeResult:
        with Vertical(classes="picker-box"):
            yield Static(
                Text(_("Links open in the browser · code and answers are copied")),
                classes="picker-title",
            )
            yield OptionList(
                *(Option(item.row(), id=str(index)) for index, item in enumerate(self.items)),
                markup=False,
                classes="picker-list",
            )

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(self.items[int(event.option.id or 0)])
