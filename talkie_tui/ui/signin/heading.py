"""What the credential screens share: whom they sign in to, where, why, and where it is kept."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.content import Content
from textual.widgets import Static

from talkie_tui.i18n import _

__all__ = ["heading", "kept_in_line"]


def heading(prefix: str, name: str, origin: str, reason: str) -> ComposeResult:
    """ "Sign in to <name>", the server's address, and why it is asked again (if it is)."""
    yield Static(Content(_("Sign in to {name}").format(name=name)), id=f"{prefix}-title")
    yield Static(Content(origin), id=f"{prefix}-origin")
    if reason:
        yield Static(Content(reason), id=f"{prefix}-reason")


def kept_in_line(prefix: str, kept_in: str) -> ComposeResult:
    """Where the sign-in will be kept, said before it is given (nothing when unknown)."""
    if kept_in:
        yield Static(
            Content(_("It will be kept in {store}.").format(store=kept_in)), id=f"{prefix}-kept-in"
        )
