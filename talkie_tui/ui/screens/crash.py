"""The screen shown instead of a traceback when talkie itself fails."""

from __future__ import annotations

from pathlib import Path
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

__all__ = ["CrashScreen"]


class CrashScreen(LocalizedBindings, ModalScreen[bool]):
    """Say what failed and where the report is; dismisses True to quit, False to go on.

    Quit has the focus: after an error nobody expected, leaving is the safe choice. Going on is
    offered only when `can_continue` (the failure harmed nothing else); Esc then closes the box
    like any other, and otherwise quits.
    """

    CSS_PATH = own_stylesheet("crash")  # type: ignore[assignment]  # loaded when first shown

    AUTO_FOCUS = "#quit"
    HELP_GROUP = N_("Unexpected error")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "keep_going", N_("Close")),
        Binding("left", "app.focus_previous", N_("Previous button"), show=False),
        Binding("right", "app.focus_next", N_("Next button"), show=False),
    ]

    def __init__(self, summary: str, report: Path | None, *, can_continue: bool) -> None:
        super().__init__()
        self.summary = summary
        self.report = report
        self.can_continue = can_continue

    def compose(self) -> ComposeResult:
        """The box: what happened, that drafts are safe, the report's path, Quit and Continue."""
        if self.report is not None:
            where = _("The details are in {path}. Please attach that file to a bug report.")
            where = where.format(path=self.report)
        else:
            where = _("The details could not be written to the log folder.")
        with Vertical(classes="crash-box"):
            yield Static(_("talkie ran into an unexpected error"), classes="crash-title")
            yield Static(Content(self.summary), classes="crash-summary")
            yield Static(
                _("What you typed is kept as a draft and comes back with its thread.")
                if self.can_continue
                else _(
                    "talkie has to close. What you typed is kept as a draft and comes back "
                    "with its thread when you start it again."
                ),
                classes="crash-body",
            )
            yield Static(Content(where), id="crash-report", classes="crash-body")
            with Horizontal(classes="crash-buttons"):
                if self.can_continue:
                    yield Button(_("Continue anyway"), id="continue", variant="default")
                yield Button(_("Quit"), id="quit", variant="error")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Quit or go on, by the button pressed."""
        event.stop()
        self.dismiss(event.button.id == "quit")

    def action_keep_going(self) -> None:
        """Esc: close the box and go on, where that is offered; else quit."""
        self.dismiss(not self.can_continue)
