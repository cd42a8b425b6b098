"""The sign-in screen: OAuth in a browser (§2.1), with a paste box for the answer, or a token.

The browser comes back to talkie's loopback receiver on 127.0.0.1 when it runs on this
machine. Over SSH that redirect fails in the remote browser, but its address bar still holds
the answer: the person pastes it here. Whichever arrives first finishes the sign-in. The
screen dismisses with the new `TokenSource`, or None when the person cancels.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Button, Input, Static
from textual.worker import Worker, WorkerState

from talkie_tui import browser
from talkie_tui.auth.signin import SIGN_IN_TIMEOUT
from talkie_tui.backends.prompts import BrowserFlow, BrowserServer
from talkie_tui.core.errors import TalkieError
from talkie_tui.core.sanitize import clean_text
from talkie_tui.core.tokens import StaticToken, TokenSource
from talkie_tui.i18n import N_, _, ngettext
from talkie_tui.ui.support.localized import LocalizedBindings
from talkie_tui.ui.support.notify import notify_plain
from talkie_tui.ui.support.stylesheets import own_stylesheet

__all__ = ["SignInFlow", "SignInScreen"]

_SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
_TICK_SECONDS = 0.1


SignInFlow = BrowserFlow
"""One authorization-code flow, as `talkie_tui.auth.signin.SignIn` runs it."""


def _elapsed(seconds: float) -> str:
    whole = max(0, int(seconds))
    return f"{whole // 60}:{whole % 60:02d}"


def _no_browser_reason() -> str:
    """Why no browser will be opened, in words ("this is an SSH session, so …")."""
    description = browser.browser_description()
    return description.removeprefix("none:").strip() or _("no graphical browser was found")


class SignInScreen(LocalizedBindings[TokenSource | None], Screen[TokenSource | None]):
    """Sign in to one server; dismisses with the token source, or None when cancelled."""

    CSS_PATH = own_stylesheet("sign_in")  # type: ignore[assignment]  # loaded when first shown

    HELP_GROUP = N_("Sign-in screen")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", N_("Cancel the sign-in")),
        Binding("ctrl+t", "copy_url", N_("Copy the sign-in address")),
        Binding("ctrl+o", "open_browser", N_("Open the browser")),
        Binding("ctrl+r", "retry", N_("Retry")),
    ]

    def __init__(
        self,
        server: BrowserServer,
        flow_factory: Callable[[], SignInFlow] | None,
        *,
        offer_dev_token: bool = False,
        reason: str = "",
        clock: Callable[[], float] = time.monotonic,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.server = server
        self._flow_factory = flow_factory
        self.offer_dev_token = offer_dev_token
        self.reason = reason
        self._clock = clock
        self._flow: SignInFlow | None = None
        self._worker: Worker[None] | None = None
        self._url = ""
        self._browser_ok = False
        self._auto_opened = False
        self._failed = False
        self._waiting_since: float | None = None
        self._ticker: Timer | None = None

    # --- what the screen shows -----------------------------------------------------------

    @property
    def server_name(self) -> str:
        """The server's name, cleaned (it is server text)."""
        return clean_text(self.server.manifest.name)

    @property
    def issuer(self) -> str:
        """The authorization server the manifest names, cleaned; empty for a token sign-in."""
        offer = self.server.manifest.auth.oauth
        return clean_text(offer.issuer) if offer is not None and self.uses_oauth else ""

    @property
    def uses_oauth(self) -> bool:
        """True when this screen runs a browser sign-in (not only a development token)."""
        return self._flow_factory is not None

    @property
    def flow(self) -> SignInFlow | None:
        """The sign-in flow running now (for tests and diagnostics)."""
        return self._flow

    @property
    def url(self) -> str:
        """The authorization URL shown (empty until the flow has started)."""
        return self._url

    @property
    def failed(self) -> bool:
        """True while an error is shown and Retry is offered."""
        return self._failed

    def compose(self) -> ComposeResult:
        """Title, the address to open, the paste box, the waiting state, the buttons."""
        with VerticalScroll(id="sign-in-scroll"), Vertical(id="sign-in-box"):
            yield Static(Content(self._title()), id="sign-in-title")
            if self.issuer:
                yield Static(
                    Content(
                        _("through its sign-in service at {issuer}").format(issuer=self.issuer)
                    ),
                    id="sign-in-issuer",
                )
            if self.reason:
                yield Static(Content(self.reason), id="sign-in-reason")
            if self.uses_oauth:
                yield from self._compose_oauth()
            if self.offer_dev_token:
                yield from self._compose_dev_token()
            with Horizontal(id="sign-in-actions"):
                yield Button(Content(_("Retry")), id="sign-in-retry", variant="primary")
                yield Button(Content(_("Cancel")), id="sign-in-cancel", variant="default")
            yield Static(Content(self._hints()), id="sign-in-hints")

    def _title(self) -> str:
        if self.uses_oauth:
            return _("Sign in to {name}").format(name=self.server_name)
        return _("Sign in to {name} with a development token").format(name=self.server_name)

    def _hints(self) -> str:
        if self.uses_oauth:
            return _("Esc cancels · Ctrl+T copies the address · Ctrl+O opens the browser · F1 help")
        return _("Enter signs in · Esc cancels · F1 help")

    def _compose_oauth(self) -> ComposeResult:
        yield Static(
            Content(_("1. Open this address in a browser and sign in:")), classes="sign-in-step"
        )
        yield Static(Content(_("Preparing the sign-in address…")), id="sign-in-url")
        with Horizontal(id="sign-in-url-buttons"):
            yield Button(Content(_("Open browser")), id="sign-in-open", disabled=True)
            yield Button(Content(_("Copy address")), id="sign-in-copy", disabled=True)
            yield Static(Content(""), id="sign-in-copied")
        yield Static(Content(""), id="sign-in-browser-note")
        yield Static(
            Content(
                _(
                    "2. When you have signed in, talkie continues by itself. If the browser ends "
                    "on a page that cannot be reached (common over SSH), copy the whole address "
                    "from its address bar and paste it here, then press Enter:"
                )
            ),
            classes="sign-in-step",
        )
        yield Input(placeholder=_("Paste the address your browser ended on"), id="sign-in-paste")
        yield Static(Content(""), id="sign-in-paste-error")
        with Horizontal(id="sign-in-status-row"):
            yield Static(Content(""), id="sign-in-spinner")
            yield Static(Content(""), id="sign-in-status")

    def _compose_dev_token(self) -> ComposeResult:
        token = self.server.manifest.auth.token
        hint = clean_text(token.hint) if token is not None and token.hint else ""
        if self.uses_oauth:
            text = (
                _("Or paste a development token ({hint}):").format(hint=hint)
                if hint
                else _("Or paste a development token:")
            )
        else:
            text = (
                _("Development token ({hint}):").format(hint=hint)
                if hint
                else _("Development token:")
            )
        yield Static(Content(text), classes="sign-in-step", id="sign-in-token-label")
        yield Input(placeholder=_("Development token"), password=True, id="sign-in-token")

    @property
    def status_text(self) -> str:
        """What the status line says now (plain text; for tests and screen readers)."""
        if not self.uses_oauth:
            return ""
        return str(self.query_one("#sign-in-status", Static).content)

    @property
    def paste_error(self) -> str:
        """Why the last pasted address was refused (empty when it was not)."""
        return str(self.query_one("#sign-in-paste-error", Static).content)

    @property
    def browser_note(self) -> str:
        """What the screen says about the browser (opened, or why it cannot be)."""
        return str(self.query_one("#sign-in-browser-note", Static).content)

    def on_mount(self) -> None:
        """Start the flow (or wait for a token)."""
        self.query_one("#sign-in-retry", Button).display = False
        if self.uses_oauth:
            self.query_one("#sign-in-paste-error", Static).display = False
            self._ticker = self.set_interval(_TICK_SECONDS, self._tick, pause=True)
            self.query_one("#sign-in-paste", Input).focus()
            self.start()
        else:
            self.query_one("#sign-in-token", Input).focus()

    # --- the flow ------------------------------------------------------------------------

    def start(self) -> None:
        """Start a new sign-in (the previous one, if any, is closed first)."""
        self._failed = False
        self.query_one("#sign-in-retry", Button).display = False
        self._show_paste_error("")
        self._worker = self._run_flow()

    @work(exclusive=True, group="sign-in", exit_on_error=False)
    async def _run_flow(self) -> None:
        """Start the flow, show the address, open the browser once, wait for the answer."""
        previous, self._flow = self._flow, None
        if previous is not None:
            await previous.aclose()
        assert self._flow_factory is not None
        flow = self._flow = self._flow_factory()
        delivered = False
        try:
            self._set_status(
                _("Finding the sign-in service of {name}…").format(name=self.server_name),
                busy=True,
            )
            self._browser_ok = await asyncio.to_thread(browser.graphical_browser_available)
            url = await flow.start()
            self._show_url(url)
            if self._browser_ok and not self._auto_opened:
                self._auto_opened = True
                await self._open_browser(url)
            self._waiting_since = self._clock()
            self._tick()
            tokens = await flow.wait()
            self._set_status(_("Signed in."), busy=False)
            delivered = True
            self.dismiss(tokens)
        except TalkieError as error:  # the timeout (SignInCancelled) too: Retry starts anew
            self._fail(error.message, error.retry_hint)
        finally:
            if not delivered:
                # Never leave the loopback port open behind a failure or a cancellation.
                await flow.aclose()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A bug in the flow is shown with Retry, never a crash."""
        if event.worker is self._worker and event.state is WorkerState.ERROR:
            error = event.worker.error
            self._fail(
                _("Something unexpected went wrong: {kind}: {error}").format(
                    kind=type(error).__name__, error=error
                ),
                _("This is a bug in talkie; please report it. Retry starts a new sign-in."),
            )

    def _fail(self, message: str, hint: str) -> None:
        self._failed = True
        self._waiting_since = None
        text = "✗ " + clean_text(message)
        if hint:
            text += f" {hint}"
        self._set_status(text, busy=False, kind="error")
        retry = self.query_one("#sign-in-retry", Button)
        retry.display = True
        self.call_after_refresh(retry.focus)  # focusable once it is laid out

    async def on_unmount(self) -> None:
        """Close whatever flow is still open (its loopback port above all)."""
        flow, self._flow = self._flow, None
        if flow is not None:
            await flow.aclose()

    # --- showing state -------------------------------------------------------------------

    def _show_url(self, url: str) -> None:
        self._url = url
        self.query_one("#sign-in-url", Static).update(Content(clean_text(url)))
        self.query_one("#sign-in-copy", Button).disabled = False
        opener = self.query_one("#sign-in-open", Button)
        opener.disabled = not self._browser_ok
        if not self._browser_ok:
            self._set_browser_note(
                _(
                    "Talkie cannot open a browser here: {reason}. Open the address "
                    "in a browser on any computer (Ctrl+T copies it)."
                ).format(reason=_no_browser_reason())
            )

    def _set_browser_note(self, text: str) -> None:
        self.query_one("#sign-in-browser-note", Static).update(Content(text))

    def _set_status(self, text: str, *, busy: bool, kind: str = "info") -> None:
        status = self.query_one("#sign-in-status", Static)
        status.update(Content(text))
        for name in ("info", "error", "busy"):
            status.set_class(name == ("busy" if busy else kind), f"-{name}")
        spinner = self.query_one("#sign-in-spinner", Static)
        spinner.display = busy
        if self._ticker is not None:
            if busy:
                self._ticker.resume()
            else:
                self._ticker.pause()

    def _tick(self) -> None:
        """Advance the spinner; while waiting, show how long it has been."""
        now = self._clock()
        frame = int(now / _TICK_SECONDS) % len(_SPINNER)
        self.query_one("#sign-in-spinner", Static).update(Content(_SPINNER[frame]))
        if self._waiting_since is not None and not self._failed:
            minutes = int(SIGN_IN_TIMEOUT // 60)
            self.query_one("#sign-in-status", Static).update(
                Content(
                    ngettext(
                        "Waiting for you to sign in… {elapsed} "
                        "(the address works for {minutes} minute)",
                        "Waiting for you to sign in… {elapsed} "
                        "(the address works for {minutes} minutes)",
                        minutes,
                    ).format(elapsed=_elapsed(now - self._waiting_since), minutes=minutes)
                )
            )

    def _show_paste_error(self, text: str) -> None:
        if not self.uses_oauth:
            return
        note = self.query_one("#sign-in-paste-error", Static)
        note.update(Content(text))
        note.display = bool(text)

    async def _open_browser(self, url: str) -> None:
        opened = await asyncio.to_thread(browser.open_url, url)
        if opened:
            self._set_browser_note(
                _(
                    "Your browser should now show the sign-in page. If it does not, press Open "
                    "browser again, or copy the address."
                )
            )
        else:
            self._set_browser_note(
                _(
                    "The browser could not be opened; copy the address (Ctrl+T) "
                    "and open it yourself."
                )
            )

    # --- the person's gestures -----------------------------------------------------------

    @on(Input.Submitted, "#sign-in-paste")
    def _pasted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        if not text:
            self._show_paste_error(_("Paste the whole address from the browser's address bar."))
            return
        flow = self._flow
        if flow is None or self._failed or not self._url:
            self._show_paste_error(
                _("No sign-in is waiting for an answer now; press Retry to start a new one.")
            )
            return
        outcome = flow.submit(text)
        if outcome.ok:
            self._show_paste_error("")
            self._set_status(_("Signed in; finishing…"), busy=True)
            self._waiting_since = None
        elif not outcome.finished:
            # Refused, but the flow goes on: keep the text so it can be fixed.
            self._show_paste_error("✗ " + clean_text(outcome.message))
            event.input.focus()
        else:
            self._show_paste_error("")  # the flow reports the failure on the status line

    @on(Input.Submitted, "#sign-in-token")
    def _token_given(self, event: Input.Submitted) -> None:
        event.stop()
        token = event.value.strip()
        if not token:
            return
        self.dismiss(StaticToken(token))

    @on(Button.Pressed, "#sign-in-open")
    def _open_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_open_browser()

    @on(Button.Pressed, "#sign-in-copy")
    def _copy_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_copy_url()

    @on(Button.Pressed, "#sign-in-retry")
    def _retry_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_retry()

    @on(Button.Pressed, "#sign-in-cancel")
    async def _cancel_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        await self.action_cancel()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Copy and open only with an address; Retry only after a failure."""
        if action in ("copy_url", "open_browser"):
            return self.uses_oauth and bool(self._url)
        if action == "retry":
            return self.uses_oauth and self._failed
        return True

    def action_copy_url(self) -> None:
        """Copy the sign-in address to the clipboard."""
        if not self._url:
            return
        self.app.copy_to_clipboard(self._url)
        self.query_one("#sign-in-copied", Static).update(Content(_("✓ Copied")))
        notify_plain(self, _("The sign-in address was copied to the clipboard."))

    def action_open_browser(self) -> None:
        """Open the sign-in address in a graphical browser."""
        if not self._url:
            return
        if not self._browser_ok:
            notify_plain(
                self,
                _("No browser can be opened here: {reason}.").format(reason=_no_browser_reason()),
                severity="warning",
            )
            return
        self.run_worker(self._open_browser(self._url), group="browser", exit_on_error=False)

    def action_retry(self) -> None:
        """Start a new sign-in after a failure."""
        if self.uses_oauth and self._failed:
            self.start()

    async def action_cancel(self) -> None:
        """Stop signing in: the loopback port closes; back to where the person came from."""
        if self._worker is not None:
            self._worker.cancel()
        flow, self._flow = self._flow, None
        if flow is not None:
            await flow.aclose()
        self.dismiss(None)
