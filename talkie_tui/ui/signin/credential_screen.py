"""What the screens that ask for a credential share (a gateway's token, a hub's e-mail code):
whom they sign in to, where, why, where it will be kept, a status line, and Esc."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.widgets import Static

from talkie_tui.core.sanitize import clean_text
from talkie_tui.i18n import N_, _
from talkie_tui.ui.support.localized import LocalizedBindings, ResultType

__all__ = ["CredentialScreen"]


class CredentialScreen(LocalizedBindings[ResultType]):
    """A sign-in screen for one server; `PREFIX` names its widgets (`<prefix>-status`…)."""

    PREFIX: ClassVar[str]
    WORK_GROUP: ClassVar[str]  # the workers that ask the server: Esc cancels them
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", N_("Cancel"))]

    def __init__(self, name: str, origin: str, *, reason: str, kept_in: str) -> None:
        super().__init__()
        self.server_name = clean_text(name)
        self.origin = clean_text(origin)
        self.reason = clean_text(reason)
        self.kept_in = kept_in

    def heading(self) -> ComposeResult:
        """ "Sign in to <name>", the server's address, and why it is asked (if it says)."""
        prefix = self.PREFIX
        title = _("Sign in to {name}").format(name=self.server_name)
        yield Static(Content(title), id=f"{prefix}-title")
        yield Static(Content(self.origin), id=f"{prefix}-origin")
        if self.reason:
            yield Static(Content(self.reason), id=f"{prefix}-reason")

    def kept_in_line(self) -> ComposeResult:
        """Where the sign-in will be kept, said before it is given (nothing when unknown)."""
        if self.kept_in:
            kept = _("It will be kept in {store}.").format(store=self.kept_in)
            yield Static(Content(kept), id=f"{self.PREFIX}-kept-in")

    @property
    def status_text(self) -> str:
        """What the status line says now (plain text; for tests and screen readers)."""
        return str(self.query_one(f"#{self.PREFIX}-status", Static).content)

    def _set_status(self, text: str, kind: str) -> None:
        status = self.query_one(f"#{self.PREFIX}-status", Static)
        status.update(Content(text))
        status.set_classes(f"{self.PREFIX}-{kind}")

    def action_cancel(self) -> None:
        """Leave without signing in."""
        self.workers.cancel_group(self, self.WORK_GROUP)
        self.dismiss(None)
