"""A yes/no question in a modal box; the safe answer has the focus, Esc always means no."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from talkie_tui.i18n import N_, _
from talkie_tui.ui.support.localized import LocalizedBindings
from talkie_tui.ui.support.stylesheets import own_stylesheet

__all__ = ["ConfirmScreen"]


class ConfirmScreen(LocalizedBindings, ModalScreen[bool]):
    """Ask the user to confirm something; dismisses with True only on the confirm button.

    `title` and `body` are shown as plain text (never markup), so they may quote server text.
    The cancel button has the focus, so an Enter already on its way cannot confirm.
    """

    CSS_PATH = own_stylesheet("confirm")  # type: ignore[assignment]  # loaded when first shown

    HELP_GROUP = N_("Confirmation")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", N_("Cancel")),
        Binding("left", "app.focus_previous", N_("Previous button"), show=False),
        Binding("right", "app.focus_next", N_("Next button"), show=False),
    ]

    def __init__(
        self,
        title: str,
        body: str = "",
        *,
        confirm_label: str | None = None,
        cancel_label: str | None = None,
        danger: bool = False,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.title_text = title
        self.body_text = body
        self.confirm_label = confirm_label or _("Confirm")
        self.cancel_label = cancel_label or _("Cancel")
        self.danger = danger

    def compose(self) -> ComposeResult:
        """The box: title, body, then Cancel and Confirm."""
        with Vertical(id="confirm-box", classes="confirm-box"):
            yield Static(Content(self.title_text), id="confirm-title", classes="confirm-title")
            if self.body_text:
                yield Static(Content(self.body_text), id="confirm-body", classes="confirm-body")
            with Horizontal(classes="confirm-buttons"):
                # Cancel first: it is the default, and it never moves between dialogs.
                yield Button(Content(self.cancel_label), id="cancel", variant="default")
                yield Button(
                    Content(self.confirm_label),
                    id="confirm",
                    variant="error" if self.danger else "primary",
                )

    def on_mount(self) -> None:
        """Focus the safe choice (once it is mounted: on a busy app the row of buttons may
        mount its children after the screen's own mount)."""
        buttons = self.query("#cancel").results(Button)
        cancel = next(buttons, None)
        if cancel is None:
            self.call_after_refresh(self.on_mount)
            return
        cancel.focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Answer with the button that was pressed."""
        event.stop()
        self.dismiss(event.button.id == "confirm")

    def action_cancel(self) -> None:
        """Esc: the answer is no."""
        self.dismiss(False)
