"""The TUI's `Prompts`: what a protocol's sign-in asks the person, asked with screens.

Each question is a screen pushed with `push_screen_wait` (so the asking must run inside a
Textual worker): where to keep the sign-in, a confirmation, a gateway's token, a hub's e-mail
code, a Talkie server's browser sign-in. What the sign-in says goes to the connect screen's
status line when it is up (`status`), and to a toast otherwise.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Protocol

from textual.app import App

from talkie_tui.backends.prompts import BrowserServer, EmailCodes, FlowFactory, Severity, TokenCheck
from talkie_tui.core.tokens import TokenSource
from talkie_tui.ui.support.notify import notify_plain

__all__ = ["ScreenPrompts", "StatusLine"]


class StatusLine(Protocol):
    """Where connecting is said: the connect screen's status line and known servers."""

    @property
    def is_attached(self) -> bool:
        """False once the screen is gone (nothing is said on it then)."""
        ...

    def show_status(self, text: str, *, kind: str = "info", busy: bool = False) -> None:
        """Say something on the status line."""
        ...

    def refresh_known(self) -> None:
        """Show the known servers (and their sign-in state) as they are now."""
        ...


@dataclass
class ScreenPrompts:
    """`Prompts` for one app; `status` is the connect screen, when one is up."""

    app: App[Any]
    status: StatusLine | None = None

    def say(self, text: str, *, kind: str = "info", busy: bool = False) -> None:
        """On the status line (nothing without one: a sign-in over the chat says nothing)."""
        if self.status is not None and self.status.is_attached:
            self.status.show_status(text, kind=kind, busy=busy)

    def tell(self, text: str, severity: Severity = "information") -> None:
        """A toast, from the event loop or from a thread (a keyring look-up warns from one)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # a worker thread: hand it to the app's loop
            self.app.call_from_thread(notify_plain, self.app, text, severity=severity)
        else:
            notify_plain(self.app, text, severity=severity)

    def changed(self) -> None:
        """The known servers again, with their sign-in state."""
        if self.status is not None and self.status.is_attached:
            self.status.refresh_known()

    async def choose_store(self, name: str, reason: str) -> str | None:
        """The store choice (there is no keyring)."""
        from talkie_tui.ui.screens.store_choice import StoreChoiceScreen

        choice: str | None = await self.app.push_screen_wait(StoreChoiceScreen(name, reason))
        return choice

    async def confirm(self, title: str, body: str, *, accept: str, refuse: str) -> bool:
        """A confirmation dialog."""
        from talkie_tui.ui.screens.confirm import ConfirmScreen

        screen = ConfirmScreen(title, body, confirm_label=accept, cancel_label=refuse)
        return bool(await self.app.push_screen_wait(screen))

    async def ask_token(
        self, name: str, origin: str, check: TokenCheck, *, reason: str, kept_in: str
    ) -> str | None:
        """The token screen."""
        from talkie_tui.ui.screens.token_prompt import TokenScreen

        screen = TokenScreen(name, origin, check, reason=reason, kept_in=kept_in)
        token: str | None = await self.app.push_screen_wait(screen)
        return token

    async def ask_email_code(
        self, name: str, origin: str, codes: EmailCodes, *, reason: str, kept_in: str
    ) -> Any:
        """The e-mail sign-in screen."""
        from talkie_tui.ui.screens.email_sign_in import EmailSignInScreen

        screen = EmailSignInScreen(name, origin, codes, reason=reason, kept_in=kept_in)
        return await self.app.push_screen_wait(screen)

    async def ask_browser(
        self, server: BrowserServer, flow: FlowFactory | None, *, offer_dev_token: bool, reason: str
    ) -> TokenSource | None:
        """The sign-in screen (the browser, and the paste box for its answer)."""
        from talkie_tui.ui.screens.sign_in import SignInScreen

        screen = SignInScreen(server, flow, offer_dev_token=offer_dev_token, reason=reason)
        tokens: TokenSource | None = await self.app.push_screen_wait(screen)
        return tokens
