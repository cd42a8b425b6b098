"""Where to keep a sign-in when there is no system keyring: the person chooses, never talkie."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from talkie_tui.config import config_dir, settings_path

__all__ = ["StoreChoiceScreen"]


class StoreChoiceScreen(ModalScreen[str | None]):
    """Dismisses with "file", "session", or None (cancel); Cancel has the focus."""

    HELP_GROUP = "Where to keep the sign-in"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        Binding("up", "app.focus_previous", "Previous choice", show=False),
        Binding("down", "app.focus_next", "Next choice", show=False),
    ]

    def __init__(
        self,
        server_name: str,
        reason: str,
        *,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.server_name = server_name
        self.reason = reason

    @property
    def choices(self) -> list[str]:
        """The labels of the buttons, top to bottom."""
        return [str(button.label) for button in self.query(Button)]

    def compose(self) -> ComposeResult:
        """The reason, the two places, Cancel, and how to choose for good."""
        with Vertical(id="store-choice-box"):
            yield Static(Content("There is no system keyring here"), id="store-choice-title")
            yield Static(
                Content(
                    "Talkie keeps sign-ins in the system keyring, but none is usable here: "
                    f"{self.reason.rstrip('.')}.\n\n"
                    f"Where should talkie keep your sign-in to {self.server_name}?"
                ),
                id="store-choice-body",
            )
            yield Button(
                Content(f"Keep it in a private file (0600) in {config_dir()}"),
                id="store-choice-file",
                classes="store-choice",
            )
            yield Button(
                Content("This session only (sign in again next time)"),
                id="store-choice-session",
                classes="store-choice",
            )
            yield Button(Content("Cancel"), id="store-choice-cancel", classes="store-choice")
            yield Static(
                Content(
                    'To choose for good, set token_storage = "file" (or "session") in '
                    f"{settings_path()}."
                ),
                id="store-choice-hint",
            )

    def on_mount(self) -> None:
        """Nothing is chosen by a stray Enter: Cancel has the focus."""
        self.query_one("#store-choice-cancel", Button).focus()

    @on(Button.Pressed)
    def _chosen(self, event: Button.Pressed) -> None:
        event.stop()
        choice = (event.button.id or "").removeprefix("store-choice-")
        self.dismiss(choice if choice in ("file", "session") else None)

    def action_cancel(self) -> None:
        """Esc: nothing is kept, the sign-in does not start."""
        self.dismiss(None)
