"""The e-mail sign-in screen of a hub (Cuckoo): the address, then the six-digit code it mailed.

Step one takes the e-mail address and asks the hub to send a code ("code sent"); step two takes
the code and signs in, and the screen dismisses with what the sign-in gave (the session, kept
by the caller like every other sign-in), or None on Esc. What the hub says goes on the screen in
its own words: an address it refuses, a wrong or expired code, too many codes (with how long to
wait). Nothing typed is lost: a refused address or code stays in its box to be corrected, going
back to the address keeps the code's box, and a new code can be asked for (once the wait the
hub gave is over).

The hub is reached through `EmailCodes` (`backends.prompts`), which the hub's sign-in gives.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Button, Input, Static

from talkie_tui.backends.prompts import EmailCodes
from talkie_tui.core.errors import RateLimitedError, TalkieError
from talkie_tui.core.sanitize import clean_text
from talkie_tui.i18n import N_, _
from talkie_tui.ui.signin.credential_screen import CredentialScreen
from talkie_tui.ui.support.stylesheets import own_stylesheet
from talkie_tui.ui.widgets.action_card import format_remaining

__all__ = ["CODE_DIGITS", "EmailCodeSignIn", "EmailSignInScreen"]

CODE_DIGITS = 6


EmailCodeSignIn = EmailCodes
"""A hub's e-mail sign-in: a code mailed to an address, then traded for a session."""


class EmailSignInScreen(CredentialScreen[Any]):
    """Sign in to a hub with an e-mailed code; dismisses with the sign-in, or None on Esc."""

    CSS_PATH = own_stylesheet("email_sign_in")  # type: ignore[assignment]  # loaded when first shown

    HELP_GROUP = N_("E-mail sign-in")
    PREFIX = "email"
    WORK_GROUP = "email-sign-in"
    AUTO_FOCUS = "#email-address"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+r", "send_again", N_("Send a new code")),
    ]

    def __init__(
        self,
        name: str,
        origin: str,
        sign_in: EmailCodeSignIn,
        *,
        email: str = "",
        reason: str = "",
        kept_in: str = "",
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(name, origin, reason=reason, kept_in=kept_in)
        self._sign_in = sign_in
        self._email = email
        self._monotonic = monotonic
        self._sent_to: str | None = None  # the address the last code went to
        self._wait_until = 0.0  # no new code before this (the hub's Retry-After)

    def compose(self) -> ComposeResult:
        """Title, the address step, the code step, the status, the hints."""
        with VerticalScroll(id="email-scroll"), Vertical(id="email-box"):
            yield from self.heading()
            yield Static(
                Content(_("Your e-mail address: the hub mails you a code to sign in with.")),
                classes="email-step",
            )
            yield Input(
                value=self._email,
                placeholder=_("name@example.com"),
                id="email-address",
                max_length=320,
            )
            with Vertical(id="email-code-step"):
                yield Static(Content(""), id="email-sent")
                yield Input(
                    placeholder=_("6-digit code"),
                    id="email-code",
                    max_length=CODE_DIGITS,
                    restrict=r"[0-9]*",
                )
                yield Button(Content(_("Send a new code")), id="email-again", compact=True)
            yield Static(Content(""), id="email-status")
            yield from self.kept_in_line()
            yield Static(Content(""), id="email-hints")

    def on_mount(self) -> None:
        """The address box takes the keys at once."""
        self._show_step()
        self.query_one("#email-address", Input).focus()

    # --- what tests and screen readers read --------------------------------------------------

    @property
    def step(self) -> str:
        """ "email" until a code was sent, then "code"."""
        return "code" if self._sent_to is not None else "email"

    # --- drawing -----------------------------------------------------------------------------

    def _show_step(self) -> None:
        code_step = self._sent_to is not None
        self.query_one("#email-code-step").display = code_step
        if code_step:
            sent = _("Code sent to {email}. It is valid for 10 minutes.").format(
                email=self._sent_to
            )
            self.query_one("#email-sent", Static).update(Content(sent))
            hints = _("Enter signs in · Ctrl+R sends a new code · Esc cancels")
        else:
            hints = _("Enter sends the code · Esc cancels")
        self.query_one("#email-hints", Static).update(Content(hints))

    def _failed(self, error: TalkieError) -> str:
        message = clean_text(error.message)
        if isinstance(error, RateLimitedError) and error.retry_after:
            self._wait_until = self._monotonic() + error.retry_after
            wait = format_remaining(error.retry_after)
            return "✗ " + _("{message} Try again in {time}.").format(message=message, time=wait)
        return "✗ " + f"{message} {error.retry_hint}".strip()

    # --- step one: the address ---------------------------------------------------------------

    @on(Input.Submitted, "#email-address")
    def _address_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._send(event.value)

    def _send(self, value: str) -> None:
        email = value.strip()
        if "@" not in email:
            self._set_status(_("Type your e-mail address first."), "error")
            return
        left = self._wait_until - self._monotonic()
        if left > 0:
            self._set_status(
                _("Wait {time} before asking for a new code.").format(time=format_remaining(left)),
                "error",
            )
            return
        self._set_status(_("Sending the code…"), "busy")
        self._request_code(email)

    @work(exclusive=True, group="email-sign-in", exit_on_error=False)
    async def _request_code(self, email: str) -> None:
        try:
            await self._sign_in.send_code(email)
        except TalkieError as error:
            self._set_status(self._failed(error), "error")
            box = self.query_one("#email-code" if self._sent_to else "#email-address", Input)
            box.focus()
            return
        self._sent_to = email
        self._show_step()
        self._set_status("", "info")
        self.query_one("#email-code", Input).focus()

    def action_send_again(self) -> None:
        """Ask for a new code (to the address in the box)."""
        self._send(self.query_one("#email-address", Input).value)

    @on(Button.Pressed, "#email-again")
    def _again_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_send_again()

    @on(Input.Changed, "#email-address")
    def _address_changed(self, event: Input.Changed) -> None:
        """Another address needs its own code: the code step goes until one is sent to it."""
        if self._sent_to is not None and event.value.strip() != self._sent_to:
            self._sent_to = None
            self._show_step()

    # --- step two: the code ------------------------------------------------------------------

    @on(Input.Submitted, "#email-code")
    def _code_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        code = event.value.strip()
        if len(code) != CODE_DIGITS or not code.isdigit():
            self._set_status(_("Type the 6 digits of the code from the e-mail."), "error")
            return
        assert self._sent_to is not None
        self._set_status(_("Signing in…"), "busy")
        self._verify(self._sent_to, code)

    @work(exclusive=True, group="email-sign-in", exit_on_error=False)
    async def _verify(self, email: str, code: str) -> None:
        try:
            signed_in = await self._sign_in.verify(email, code)
        except TalkieError as error:
            self._set_status(self._failed(error), "error")
            self.query_one("#email-code", Input).focus()
            return
        self.dismiss(signed_in)

    def wait_left(self) -> float:
        """Seconds before the hub takes another request for a code (0 when it does)."""
        return max(0.0, math.ceil(self._wait_until - self._monotonic()))
