"""The token screen: a server that signs in with a bearer token asks for it (a Minara gateway's
`GATEWAY_AUTH_TOKEN`). The token is tried before the screen closes, so a wrong one is said so
at once, in the server's own words; the screen dismisses with the token, or None on Esc.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Input, Static

from talkie_tui.core.errors import TalkieError
from talkie_tui.core.sanitize import clean_text
from talkie_tui.i18n import N_, _
from talkie_tui.ui.signin.credential_screen import CredentialScreen
from talkie_tui.ui.support.stylesheets import own_stylesheet

__all__ = ["TokenCheck", "TokenScreen"]

TokenCheck = Callable[[str], Awaitable[None]]
"""Tries a token against the server; raises a `TalkieError` (401: the server refused it)."""


class TokenScreen(CredentialScreen[str | None]):
    """Ask for one server's bearer token; dismisses with the token once the server took it."""

    CSS_PATH = own_stylesheet("token_prompt")  # type: ignore[assignment]  # loaded when first shown

    HELP_GROUP = N_("Token screen")
    PREFIX = "token"
    WORK_GROUP = "token"

    def __init__(
        self,
        name: str,
        origin: str,
        check: TokenCheck,
        *,
        reason: str = "",
        kept_in: str = "",
    ) -> None:
        super().__init__(name, origin, reason=reason, kept_in=kept_in)
        self._check = check

    def compose(self) -> ComposeResult:
        """Title, why the token is needed, the password box, the status, the hints."""
        with VerticalScroll(id="token-scroll"), Vertical(id="token-box"):
            yield from self.heading()
            yield Static(
                Content(
                    _(
                        "This gateway asks for its access token: the value it was started with "
                        "as GATEWAY_AUTH_TOKEN. It is sent to {origin} only."
                    ).format(origin=self.origin)
                ),
                classes="token-step",
            )
            yield Input(placeholder=_("Gateway token"), password=True, id="token-input")
            yield Static(Content(""), id="token-status")
            yield from self.kept_in_line()
            yield Static(Content(_("Enter signs in · Esc cancels · F1 help")), id="token-hints")

    def on_mount(self) -> None:
        """The box takes the keys at once."""
        self.query_one("#token-input", Input).focus()

    @on(Input.Submitted, "#token-input")
    def _submitted(self, event: Input.Submitted) -> None:
        token = event.value.strip()
        if not token:
            self._set_status(_("Paste the gateway's token first."), "error")
            return
        self._set_status(_("Checking the token…"), "busy")
        self._try(token)

    @work(exclusive=True, group="token", exit_on_error=False)
    async def _try(self, token: str) -> None:
        try:
            await self._check(token)
        except TalkieError as error:
            self._set_status(
                "✗ " + _("Not signed in: {error}").format(error=clean_text(error.message)),
                "error",
            )
            self.query_one("#token-input", Input).focus()
            return
        self.dismiss(token)
