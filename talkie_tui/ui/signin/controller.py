"""Signing in again and out while connected: the app's part of a protocol's `SignIn`.

The connect screen hands the app the sign-in it connected with; a backend given to the app
directly gets its protocol's (`backends.signing.sign_in_for`). A server that refuses the chat's
sign-in, or Ctrl+P → Sign in, runs it again over the chat (once at a time; the conversation and
the draft stay); Sign out runs its sign-out once the connect screen is back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.app import App

from talkie_tui.backends.signing import SignIn, SignInOptions, sign_in_for
from talkie_tui.core.sanitize import clean_text
from talkie_tui.i18n import _
from talkie_tui.ui.signin.prompts import ScreenPrompts, StatusLine
from talkie_tui.ui.support.notify import notify_plain

if TYPE_CHECKING:
    from talkie_tui.backends.base import Backend
    from talkie_tui.ui.chat.screen import ChatScreen

__all__ = ["SignInController"]


class SignInController:
    """The sign-in of the server the app is connected to."""

    def __init__(self, app: App[Any], options: SignInOptions) -> None:
        self._app = app
        self._options = options
        self._sign_in: SignIn | None = None
        self._running = False  # a sign-in is asked for (or on its way) over the chat

    def use(self, sign_in: SignIn | None) -> None:
        """The sign-in the app connected with (None: forget it, the app left the server)."""
        self._sign_in = sign_in

    def of(self, backend: Backend | None) -> SignIn | None:
        """The sign-in of `backend` (None when it has none here)."""
        if backend is None:
            return None
        if self._sign_in is None or not self._sign_in.handles(backend):
            sign_in = sign_in_for(backend.info.protocol, self._options)
            self._sign_in = sign_in if sign_in.handles(backend) else None
        return self._sign_in

    def allows(self, action: str, backend: Backend | None) -> bool:
        """Sign out of a server with a sign-in here; sign in where it offers that again."""
        sign_in = self.of(backend)
        if sign_in is None or backend is None:
            return False
        return action == "sign_out" or sign_in.offers_sign_in(backend)

    def offer(self, chat: ChatScreen, message: str, *, asked: bool) -> None:
        """Sign in again over `chat`: the server refused (`message`), or the person asked."""
        sign_in = self.of(chat.backend)
        if self._running or sign_in is None:
            return
        self._running = True
        again = self._again(chat, sign_in, message, asked=asked)
        self._app.run_worker(again, group="sign-in", exit_on_error=False)

    async def _again(self, chat: ChatScreen, sign_in: SignIn, message: str, *, asked: bool) -> None:
        """Run the sign-in again and say how it went; the chat reloads what needs it."""
        app = self._app
        name = clean_text(chat.backend.info.name)
        try:
            taken = await sign_in.again(chat.backend, message, ScreenPrompts(app), asked=asked)
        except Exception as error:  # a store that failed: words, never a crash
            text = getattr(error, "message", None) or str(error)
            notify_plain(app, _("Could not sign in: {error}").format(error=text), severity="error")
            return
        finally:
            self._running = False
        if taken is None:
            return  # nothing was asked: the sign-in said why
        if not taken:
            notify_plain(
                app,
                _("Not signed in to {name}. Sign in later with Ctrl+P → Sign in.").format(
                    name=name
                ),
                severity="warning",
            )
            return
        if chat.is_attached:
            chat.signed_in_again()
        notify_plain(
            app,
            _("Signed in to {name} again. What failed meanwhile can be retried.").format(name=name),
        )

    def sign_out(self, backend: Backend, sign_in: SignIn, screen: StatusLine) -> None:
        """End `backend`'s sign-in (the app left it already); `screen` says how it went."""
        signing_out = sign_in.sign_out(backend, ScreenPrompts(self._app, screen))
        self._app.run_worker(signing_out, group="sign-out", exit_on_error=False)
