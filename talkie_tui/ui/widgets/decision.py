"""The decision standard: what every widget that waits for the person's decision shares.

Talkie action cards, Minara questions and a hub's buttons and quick replies are decisions, and
they keep one promise on every protocol (the keyboard rule of docs/ARCHITECTURE.md):

- **Nothing takes the keyboard.** A decision never focuses itself; the composer keeps the
  keys. It announces itself (the header's ⚑ count, and its hint: "Ctrl+O to answer") and is
  reached only by a deliberate move: Ctrl+O, Tab / Shift+Tab, or a click.
- **Keys in flight decide nothing.** For GUARD_SECONDS after a decision appears, or becomes
  answerable again, every key and click on it is ignored (`InputGuard`).
- **The same keys everywhere.** ↑/← and ↓/→ move between its choices, Enter presses the one
  with the focus (Space toggles a box of a several-choice list), Esc leaves it for the
  composer, with the composer's text untouched.
- **Risky choices take a second step** (`SecondStep`): a high-risk action's Confirm, a Minara
  confirm's go-ahead, a hub's `danger` button. The first press only asks; the same press again,
  past the guard and within ASK_AGAIN_SECONDS, goes ahead. A single Enter never decides.
- **Only what is still open is offered**: Ctrl+O visits the views that are `decidable`; a view
  that closes while it holds the focus gives it back to the composer (`Left`).
- **One look** for where a decision stands: the classes `-waiting`, `-decided`, `-expired` and
  `-elsewhere` (decisions.tcss).
"""

from __future__ import annotations

import time
from typing import ClassVar, Literal

from textual import events
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Label

from talkie_tui.i18n import N_, _
from talkie_tui.ui.widgets.guard import ASK_AGAIN_SECONDS, GUARD_SECONDS, Clock, InputGuard

__all__ = ["OPEN_HINT", "DecisionView", "SecondStep", "Standing"]

Standing = Literal["waiting", "decided", "expired", "elsewhere"]
"""Where a decision stands, as every protocol's views show it."""
STANDINGS: tuple[Standing, ...] = ("waiting", "decided", "expired", "elsewhere")
OPEN_HINT = N_("Ctrl+O to answer")
LEAVE_HINT = N_("Esc back")
CONTROLS = "Button, Checkbox, Input"
"""The widgets of a decision that take the focus (the first one takes Ctrl+O)."""


class SecondStep:
    """The second step of a risky choice: the first press asks, the same one again goes ahead.

    Asking arms the view's guard, so a key repeated at once cannot answer the question; the
    question lapses after ASK_AGAIN_SECONDS, so a stray key much later cannot complete it.
    """

    def __init__(self, guard: InputGuard, monotonic: Clock = time.monotonic) -> None:
        self._guard = guard
        self._monotonic = monotonic
        self._asked: tuple[str, float] | None = None  # (choice, until)

    def confirmed(self, choice: str) -> bool:
        """True when `choice` was asked for and is pressed again: go ahead; else ask now."""
        if self.asking_for(choice):
            self._asked = None
            return True
        self._asked = (choice, self._monotonic() + ASK_AGAIN_SECONDS)
        self._guard.arm()  # a repeated key must not answer the second question
        return False

    @property
    def asking(self) -> bool:
        """True while a choice waits for its second press."""
        return self._asked is not None and self._monotonic() < self._asked[1]

    @property
    def choice(self) -> str | None:
        """The choice waiting for its second press, if any."""
        return self._asked[0] if self._asked is not None and self.asking else None

    def asking_for(self, choice: str) -> bool:
        """True while `choice` waits for its second press."""
        return self.choice == choice

    def clear(self) -> None:
        """Forget the question (an error, the server's word, another choice)."""
        self._asked = None


class DecisionView(Widget, can_focus=True):
    """The base of every view that waits for a decision: guard, keys, hint, standing."""

    guard_seconds: ClassVar[float] = GUARD_SECONDS  # a class default tests may lengthen
    clock: ClassVar[Clock] = time.monotonic  # the guard's clock, unless one is given; tests may
    # set one that moves only when told, so "a key at once" is not a matter of the machine's load

    HELP_GROUP = N_("Decisions")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,left", "move(-1)", N_("Previous choice"), show=False),
        Binding("down,right", "move(1)", N_("Next choice"), show=False),
        Binding("escape", "leave", N_("Back to your message"), show=False),
    ]

    class Left(Message):
        """The person left the decision (Esc), or it closed under the focus."""

    class Changed(Message):
        """Where the decision stands changed (the header's count of what waits may too)."""

    def __init__(
        self,
        *,
        monotonic: Clock | None = None,
        guard_seconds: float | None = None,
        classes: str = "",
    ) -> None:
        super().__init__(classes=f"decision {classes}".strip())
        monotonic = monotonic or type(self).clock
        self._monotonic = monotonic
        self._guard = InputGuard(
            self.guard_seconds if guard_seconds is None else guard_seconds, monotonic
        )
        self.second_step = SecondStep(self._guard, monotonic)
        self._shown_standing: Standing | None = None

    # --- what each protocol's view says ----------------------------------------------------

    @property
    def is_open(self) -> bool:
        """True while the decision waits (nobody made it, and it has not ended)."""
        raise NotImplementedError

    @property
    def decidable(self) -> bool:
        """True while the decision can still be made here: Ctrl+O visits only these."""
        return self.is_open

    def keys_hint(self) -> str:
        """The keys that work on this view while it has the focus."""
        return _("↑↓ move · Enter picks")

    # --- the guard ---------------------------------------------------------------------------

    @property
    def is_guarded(self) -> bool:
        """True while keys and clicks on the view are ignored."""
        return self._guard.active

    @property
    def guard_left(self) -> float:
        """Seconds until keys and clicks count again (0 when they already do)."""
        return self._guard.left

    def arm_guard(self) -> None:
        """Ignore input for the guard period from now (the view is shown, or answerable again)."""
        self._guard.arm()

    # --- the focus ---------------------------------------------------------------------------

    def controls(self) -> list[Widget]:
        """The controls that take the focus now, in the order they are drawn."""
        return [widget for widget in self.query(CONTROLS) if widget.focusable]

    def first_control(self) -> Widget | None:
        """Where Ctrl+O puts the focus: the first control that takes it now."""
        controls = self.controls()
        return controls[0] if controls else None

    def action_move(self, step: int) -> None:
        """↑/↓ (and ←/→): the previous or next choice of this view, round the ends."""
        controls = self.controls()
        if not controls:
            return
        focused = self.screen.focused
        index = controls.index(focused) if focused in controls else (-1 if step > 0 else 0)
        # At once, not by `focus()` (which waits for the next turn of the loop): keys that came
        # in one burst (→ Enter, over a slow link) must reach the choice the arrow moved to.
        self.screen.set_focus(controls[(index + step) % len(controls)])

    def take_focus(self) -> None:
        """Ctrl+O: the focus to the first control, at once (keys right after it land here)."""
        self.screen.set_focus(self.first_control() or self)
        self.scroll_visible()

    def action_leave(self) -> None:
        """Esc: back to the composer; the decision waits, and a second step it asked for
        lapses (coming back, a risky choice takes its two steps again)."""
        if self.second_step.asking:
            self.second_step.clear()
            self._sync()
        self.post_message(self.Left())

    def give_back_focus(self) -> None:
        """The view closed (or its controls went off): the focus it held goes to the composer."""
        if self.is_attached and self.has_focus_within:
            self.post_message(self.Left())

    def keep_focus_near(self, control: Widget) -> None:
        """`control` is about to be disabled while it has the focus: keep it on the view.

        At once, not by `focus()` (which waits for the next turn of the loop): a disabled
        control hands its focus to the next widget of the chain, wherever that is."""
        if control.has_focus:
            self.screen.set_focus(self, scroll_visible=False)

    # --- a decision in flight ---------------------------------------------------------------

    # Set by each view: busy while its decision is on its way, else why the last one failed.
    _busy: bool
    _error: str | None

    def set_busy(self, busy: bool) -> None:
        """Disable (or enable) the controls while a decision is in flight."""
        self._busy = busy
        if busy:
            self._error = None
        self._sync()

    def show_error(self, text: str) -> None:
        """Show why the decision did not go through, and take it again (after the guard)."""
        self._busy = False
        self._error = text
        self.second_step.clear()
        self.arm_guard()
        self._sync()

    def _sync(self) -> None:
        """Draw the view's state again."""
        raise NotImplementedError

    # --- drawing -----------------------------------------------------------------------------

    def hint_label(self) -> Label:
        """The line that says how to reach the decision, or which keys work in it."""
        return Label(classes="decision--hint")

    def show_standing(self, standing: Standing | None) -> None:
        """Mark where the decision stands (one look on every protocol), and its hint."""
        for name in STANDINGS:
            self.set_class(name == standing, f"-{name}")
        self._show_hint()
        if standing != self._shown_standing:
            self._shown_standing = standing
            self.post_message(self.Changed())

    def _show_hint(self) -> None:
        hint = ""
        if self.decidable:
            within = self.has_focus_within
            hint = f"{self.keys_hint()} · {_(LEAVE_HINT)}" if within else _(OPEN_HINT)
        self.set_class(bool(hint), "-hinted")
        for label in self.query(".decision--hint").results(Label):
            label.update(Content(hint))

    def _on_descendant_focus(self, event: events.DescendantFocus) -> None:
        self._show_hint()

    def _on_descendant_blur(self, event: events.DescendantBlur) -> None:
        self.call_after_refresh(self._show_hint)

    def _on_focus(self, event: events.Focus) -> None:
        self._show_hint()

    def _on_blur(self, event: events.Blur) -> None:
        self.call_after_refresh(self._show_hint)
