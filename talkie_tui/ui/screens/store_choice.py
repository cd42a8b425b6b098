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
from talkie_tui.i18n import N_, _
from talkie_tui.ui.support.localized import LocalizedBindings
from talkie_tui.ui.support.stylesheets import own_stylesheet

__all__ = ["StoreChoiceScreen"]


class StoreChoiceScreen(LocalizedBindings[str | None], ModalScreen[str | None]):
    """Dismisses with "file", "session", or None (cancel); the recommended choice, this session
    only, has the focus: Enter takes it, and it writes nothing to disk."""

    CSS_PATH = own_stylesheet("store_choice")  # type: ignore[assignment]  # loaded when first shown

    HELP_GROUP = N_("Where to keep the sign-in")
    # The recommendation is focused as the screen appears: with Textual's default the first
    # button (the file) held the focus until `on_mount` moved it, and a stray Enter chose it.
    # Only Esc or the Cancel button cancels.
    AUTO_FOCUS = "#store-choice-session"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", N_("Cancel")),
        Binding("up", "app.focus_previous", N_("Previous choice"), show=False),
        Binding("down", "app.focus_next", N_("Next choice"), show=False),
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
            yield Static(Content(_("There is no system keyring here")), id="store-choice-title")
            yield Static(
                Content(
                    _(
                        "Talkie keeps sign-ins in the system keyring, but none is usable here: "
                        "{reason}.\n\n"
                        "Where should talkie keep your sign-in to {name}?"
                    ).format(reason=self.reason.rstrip("."), name=self.server_name)
                ),
                id="store-choice-body",
            )
            yield Button(
                Content(_("Keep it in a private file (0600) in {path}").format(path=config_dir())),
                id="store-choice-file",
                classes="store-choice",
            )
            yield Button(
                Content(_("This session only (sign in again next time) · recommended")),
                id="store-choice-session",
                classes="store-choice",
                variant="primary",
            )
            yield Button(Content(_("Cancel")), id="store-choice-cancel", classes="store-choice")
            yield Static(
                Content(
                    _(
                        'To choose for good, set token_storage = "file" (or "session") in {path}.'
                    ).format(path=settings_path())
                ),
                id="store-choice-hint",
            )

    def on_mount(self) -> None:
        """Enter takes the recommendation, which keeps nothing on disk."""
        self.query_one("#store-choice-session", Button).focus()

    @on(Button.Pressed)
    def _chosen(self, event: Button.Pressed) -> None:
        event.stop()
        choice = (event.button.id or "").removeprefix("store-choice-")
        self.dismiss(choice if choice in ("file", "session") else None)

    def action_cancel(self) -> None:
        """Esc: nothing is kept, the sign-in does not start."""
        self.dismiss(None)
