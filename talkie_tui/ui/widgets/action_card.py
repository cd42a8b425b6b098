"""The action card (§8): a person confirms or cancels what the agent proposes.

It keeps the decision standard (`DecisionView`): the guard, the keys, the hint, the second
step. Its own rules:

- The guard is armed again when the card becomes decidable again (pending again, an undo
  window opening, changed parameters).
- `high` risk is the risky kind: its Confirm takes a second step.
- Posting a decision marks the card busy (buttons disabled) until the screen calls
  `set_busy(False)`, `show_error`, or `update_action` with a changed status, so one gesture
  cannot send two decisions.
- An Undo goes when its window ends: the card is open only while it can be decided or undone.
"""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime
from typing import ClassVar, Literal

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.content import Content
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Button, Label, Static

from talkie_tui.chat.vocabulary import Action
from talkie_tui.core.errors import (
    ConflictError,
    ExpiredError,
    ForbiddenError,
    NotFoundError,
    StaleError,
    TalkieError,
    TransportError,
    UnauthorizedError,
)
from talkie_tui.i18n import N_, _
from talkie_tui.ui.messages import DecisionRequested
from talkie_tui.ui.widgets.decision import DecisionView, Standing
from talkie_tui.ui.widgets.durations import clock_text
from talkie_tui.ui.widgets.guard import ASK_AGAIN_SECONDS, GUARD_SECONDS, Clock

__all__ = [
    "ASK_AGAIN_SECONDS",
    "GUARD_SECONDS",
    "ActionCard",
    "Clock",
    "explain_decision_error",
    "format_remaining",
]

Decision = Literal["confirm", "cancel"]

_RISK_TEXT = {"low": N_("LOW RISK"), "medium": N_("MEDIUM RISK"), "high": N_("HIGH RISK")}
_STATUS_TEXT = {
    "pending": N_("waiting for your decision"),
    "running": N_("running…"),
    "done": N_("✓ done"),
    "failed": N_("✗ failed"),
    "cancelled": N_("cancelled"),
    "expired": N_("expired"),
}
_STATES = tuple(f"-{status}" for status in _STATUS_TEXT)
_RISKS = tuple(f"-risk-{risk}" for risk in _RISK_TEXT)
ASK_AGAIN_TEXT = N_("High risk: press Confirm (y) again to go ahead, or Cancel (n).")


def format_remaining(seconds: float) -> str:
    """Time left for people: `42s`, `9:58`, `1:02:03` (rounded up, never negative)."""
    left = max(0, math.ceil(seconds))
    if left < 60:
        return _("{seconds}s").format(seconds=left)
    return clock_text(left)


def explain_decision_error(error: BaseException) -> str:
    """A plain-words explanation of why a decision was not accepted (409, 410, …)."""
    if isinstance(error, StaleError):
        return _(
            "The action changed after it was shown to you, so nothing was done. "
            "Check the new details before deciding again. (The server: {message})"
        ).format(message=error.message)
    if isinstance(error, ConflictError):
        return _(
            "This action was already decided the other way (perhaps on another device); "
            "your decision was not applied. (The server: {message})"
        ).format(message=error.message)
    if isinstance(error, ExpiredError):
        return _(
            "This action expired before your decision arrived; nothing was done. "
            "(The server: {message})"
        ).format(message=error.message)
    if isinstance(error, NotFoundError):
        return _("The server no longer knows this action (its thread may have been deleted).")
    if isinstance(error, UnauthorizedError):
        return _("You are signed out; sign in again, then decide.")
    if isinstance(error, ForbiddenError):
        return _("You may not decide this action: {message}").format(message=error.message)
    if isinstance(error, TransportError):
        return _(
            "Your decision may not have reached the server ({message}). Deciding again is safe."
        ).format(message=error.message)
    if isinstance(error, TalkieError):
        return f"{error.message} {error.retry_hint}"
    return _("Something went wrong while sending your decision. Deciding again is safe.")


def _timestamp(moment: datetime | None) -> float | None:
    if moment is None:
        return None
    # A time without a zone is read as UTC, the protocol's convention.
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


class ActionCard(DecisionView):
    """One proposed action: summary, risk, status, countdown and Confirm / Cancel / Undo.

    `clock` (wall time, seconds since the epoch) drives the expiry and undo countdowns;
    `monotonic` drives the input guard. Both are injectable for tests.
    """

    HELP_GROUP = N_("Decisions")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "confirm", N_("Confirm")),
        Binding("n", "decline", N_("Cancel")),
    ]

    def __init__(
        self,
        action: Action,
        *,
        clock: Clock = time.time,
        monotonic: Clock | None = None,
        guard_seconds: float | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(
            monotonic=monotonic,
            guard_seconds=guard_seconds,
            classes=f"action-card {classes or ''}".strip(),
        )
        if id is not None:
            self.id = id
        self.action = action
        self._clock = clock
        self._busy = False
        self._error: str | None = None
        self._ticker: Timer | None = None
        self._ready = False  # `is_mounted` turns true only after on_mount returns
        self.border_title = Content(_("Action"))

    # --- composition -----------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        """Summary, a line of risk/status/countdown, a message line and the buttons."""
        yield Static(Content(self.action.summary), markup=False, classes="action--summary")
        with Horizontal(classes="action--meta"):
            yield Label(classes="action--risk")
            yield Label(classes="action--status")
            yield Label(classes="action--countdown")
        yield Static(classes="action--message", markup=False)
        with Horizontal(classes="action--buttons"):
            yield Button(Content(_("Confirm")), classes="action--confirm", variant="success")
            yield Button(Content(_("Cancel")), classes="action--cancel", variant="default")
            yield Button(Content(_("Undo")), classes="action--undo", variant="warning")
        yield self.hint_label()

    def on_mount(self) -> None:
        """Arm the input guard and draw the current state."""
        self._ready = True
        self.arm_guard()
        self._sync()

    # --- public API ------------------------------------------------------------------------

    @property
    def is_busy(self) -> bool:
        """True while a decision is on its way to the server."""
        return self._busy

    @property
    def asking_again(self) -> bool:
        """True while a high-risk card waits for the second Confirm."""
        return self.second_step.asking_for("confirm")

    @property
    def locally_expired(self) -> bool:
        """True when a pending action is past `expiresAt` by our clock."""
        expires = _timestamp(self.action.expires_at)
        return self.action.status == "pending" and expires is not None and self._clock() >= expires

    @property
    def can_decide(self) -> bool:
        """True when Confirm / Cancel apply (pending and not expired)."""
        return self.action.status == "pending" and not self.locally_expired

    @property
    def can_undo(self) -> bool:
        """True while a running action may still be cancelled (`undoUntil` not passed)."""
        until = _timestamp(self.action.undo_until)
        return self.action.status == "running" and until is not None and self._clock() < until

    @property
    def is_open(self) -> bool:
        """True while the action can be decided, or undone, here."""
        return self.can_decide or self.can_undo

    def keys_hint(self) -> str:
        """y / n, or n for Undo, and the arrows."""
        if self.can_decide:
            return _("y confirm · n cancel · ←→ move")
        return _("n undo")

    def first_control(self) -> Widget | None:
        """Confirm, or Undo in its window (where Ctrl+O puts the focus)."""
        for button in self.query(Button):
            if button.display and not button.disabled:
                return button
        return None

    def set_busy(self, busy: bool) -> None:
        """Disable (or enable) the buttons while a decision is in flight."""
        self._busy = busy
        self._sync()

    def update_action(self, action: Action) -> None:
        """Show the server's new state of the action (after a decision or a refresh)."""
        before, old = self._choices(), self.action
        self.action = action
        changed = action.status != old.status or action.params_hash != old.params_hash
        if changed:
            # The decision in flight (if any) has its answer. An unchanged refresh, e.g. a
            # `GET action` arriving meanwhile, must not re-enable buttons under a pending send.
            self._busy = False
            self._error = None
            self.second_step.clear()
        after = self._choices()
        # New choices, or the same choice about changed parameters, must be read first.
        if after and (after != before or action.params_hash != old.params_hash):
            self.arm_guard()
        self.query_one(".action--summary", Static).update(Content(action.summary))
        self._sync()
        if old.status == "pending" and action.status != "pending":
            self.give_back_focus()  # decided: back to writing (an Undo waits for Ctrl+O)

    def show_error(self, text: str) -> None:
        """Show why the decision failed (see explain_decision_error) and re-enable the card."""
        self._busy = False
        self._error = text
        self.second_step.clear()
        self._sync()

    def refresh_countdown(self) -> None:
        """Redraw the countdowns; called every second while one runs."""
        self._sync()

    # --- input -----------------------------------------------------------------------------

    def action_confirm(self) -> None:
        """`y`: confirm (asking once more for high risk)."""
        self._request("confirm")

    def action_decline(self) -> None:
        """`n`: cancel, or undo while the undo window is open."""
        self._request("cancel")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Buttons go through the same guard as keys."""
        event.stop()
        self._request("confirm" if event.button.has_class("action--confirm") else "cancel")

    def _request(self, decision: Decision) -> None:
        if self.is_guarded or self._busy:
            return
        if decision == "confirm":
            if not self.can_decide:
                return
            if self.action.risk_level == "high" and not self.second_step.confirmed(decision):
                self._error = None
                self._sync()
                return
        elif not (self.can_decide or self.can_undo):
            return
        self.second_step.clear()
        self._error = None
        self._busy = True
        self._sync()
        self.post_message(DecisionRequested(self.action, decision, self))

    # --- drawing ---------------------------------------------------------------------------

    def _choices(self) -> str:
        if self.can_decide:
            return "decide"
        return "undo" if self.can_undo else ""

    def _status_text(self) -> str:
        if self.locally_expired:
            return _(_STATUS_TEXT["expired"])
        if self.action.status == "running" and self.can_undo:
            return _("running (can still be undone)")
        return _(_STATUS_TEXT[self.action.status])

    def _countdown_text(self) -> str:
        expires = _timestamp(self.action.expires_at)
        if self.can_decide and expires is not None:
            return _("expires in {time}").format(time=format_remaining(expires - self._clock()))
        return ""

    def _message_text(self) -> str:
        if self._error:
            return self._error
        if self.asking_again:
            return _(ASK_AGAIN_TEXT)
        if self._busy:
            return _("Sending your decision…")
        return ""

    def _sync(self) -> None:
        """Bring every child in line with the action, the clock and the card's own state."""
        if not self._ready:
            return
        action = self.action
        can_decide, can_undo = self.can_decide, self.can_undo
        for name in _STATES:
            self.set_class(name == f"-{action.status}", name)
        # Past expiresAt the buttons stay in view, disabled, until the server says "expired".
        self.set_class(self.locally_expired, "-locally-expired")
        for name in _RISKS:
            self.set_class(name == f"-risk-{action.risk_level}", name)
        self.set_class(can_decide, "-can-decide")
        self.set_class(can_undo, "-can-undo")
        self.set_class(self.asking_again, "-asking-again")
        self.set_class(self._busy, "-busy")
        message = self._message_text()
        self.set_class(bool(message), "-has-message")
        self.set_class(bool(self._error), "-has-error")

        risk = _(_RISK_TEXT[action.risk_level])
        self.query_one(".action--risk", Label).update(Content(risk))
        self.query_one(".action--status", Label).update(Content(self._status_text()))
        self.query_one(".action--countdown", Label).update(Content(self._countdown_text()))
        self.query_one(".action--message", Static).update(Content(message))
        self._sync_buttons(can_decide, can_undo)
        self._sync_ticker(can_decide, can_undo)
        self.show_standing(self._standing())
        if not self.is_open and not self._busy:
            self.give_back_focus()

    def _standing(self) -> Standing | None:
        if self.can_decide:
            return "waiting"
        status = self.action.status
        if status == "expired" or self.locally_expired:
            return "expired"
        return "decided" if status != "pending" else None

    def _sync_buttons(self, can_decide: bool, can_undo: bool) -> None:
        confirm = self.query_one(".action--confirm", Button)
        cancel = self.query_one(".action--cancel", Button)
        undo = self.query_one(".action--undo", Button)
        undo_until = _timestamp(self.action.undo_until)
        confirm.variant = "error" if self.action.risk_level == "high" else "success"
        if can_undo and undo_until is not None:
            left = format_remaining(undo_until - self._clock())
            undo.label = Content(_("Undo ({time})").format(time=left))
        decide_on = can_decide and not self._busy
        wanted = {confirm: decide_on, cancel: decide_on, undo: can_undo and not self._busy}
        for button, on in wanted.items():
            if not on:
                self.keep_focus_near(button)  # the person was working in this card
            button.disabled = not on

    def _sync_ticker(self, can_decide: bool, can_undo: bool) -> None:
        counting = (can_decide and self.action.expires_at is not None) or can_undo
        if counting or self.asking_again:
            if self._ticker is None:
                self._ticker = self.set_interval(1.0, self.refresh_countdown)
        elif self._ticker is not None:
            self._ticker.stop()
            self._ticker = None
