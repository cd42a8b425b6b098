"""The agent asks back (Minara questions): select, confirm, input or secret, then its outcome.

It keeps the decision standard (`DecisionView`): the guard (armed again when the view becomes
answerable again after an error), the keys, the hint, the second step. Its own rules:

- Every `confirm` is the risky kind: Minara asks for a confirmation before an action that
  moves funds, and a client cannot judge stakes from free text in any language. Any option but
  a plain refusal ("Cancel", "No"…) takes a second step.
- A secret is typed into a password box that posts no message carrying its value; on Enter the
  value is handed on in a `SecretValue` and the box is cleared at once.
- After an answer is sent the view is busy (controls disabled) until the controller says how
  it went; once the question is closed it shrinks to one line with its outcome.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Button, Input, Label, Static

from talkie_tui.chat.block_text import question_outcome
from talkie_tui.chat.turns import Question, QuestionOption, QuestionPart
from talkie_tui.i18n import N_, _, pgettext
from talkie_tui.ui.messages import AnswerRequested, SecretProvided, SecretValue
from talkie_tui.ui.widgets.action_card import format_remaining
from talkie_tui.ui.widgets.decision import DecisionView, Standing
from talkie_tui.ui.widgets.guard import Clock
from talkie_tui.ui.widgets.question_controls import OptionBox, OptionButton, SecretInput

__all__ = ["OUTCOMES", "REFUSALS", "QuestionView", "SecretInput", "expires_at"]

OUTCOMES = ("answered", "elsewhere", "timeout", "cancelled")
# Labels that refuse: pressing one moves nothing, so it needs no second press.
REFUSALS = frozenset(
    {"cancel", "no", "decline", "reject", "deny", "abort", "stop", "not now", "zrušit", "ne"}
)
# A confirm that names no options is answered with these (the wire's words, shown translated).
DEFAULT_CONFIRM = (QuestionOption("Confirm"), QuestionOption("Cancel"))
DAY = 24 * 3600.0
_SHOWN_DEFAULTS = {"Confirm": N_("Confirm"), "Cancel": N_("Cancel")}


def expires_at(part: QuestionPart) -> float | None:
    """When the question expires (seconds since the epoch), or None when it does not say."""
    if not part.expires_at:
        return None
    try:
        moment = datetime.fromisoformat(part.expires_at.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


class QuestionView(DecisionView):
    """One `QuestionPart`: who asks, each question, the controls of its kind, and its state."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "yes", N_("Yes (a confirm: its go-ahead, asked twice)")),
        Binding("n", "no", N_("No (a confirm: its refusal)")),
    ]

    def __init__(
        self,
        part: QuestionPart,
        *,
        clock: Clock = time.time,
        monotonic: Clock | None = None,
    ) -> None:
        super().__init__(monotonic=monotonic, classes=f"question -{part.kind}")
        self.part = part
        self._clock = clock
        self._busy = False
        self._error: str | None = None
        self._selected: dict[int, str] = {}  # single-choice answers picked so far
        self._ticker: Timer | None = None
        self._ready = False
        self.border_title = Content(pgettext("question", "Question"))

    # --- composition -----------------------------------------------------------------------

    @property
    def _answers_at_once(self) -> bool:
        """One single-choice question: pressing an option answers it (no Send)."""
        part = self.part
        return part.kind == "select" and len(part.questions) == 1 and not part.questions[0].multi

    def _confirm_options(self) -> tuple[QuestionOption, ...]:
        for question in self.part.questions:
            if question.options:
                return question.options
        return DEFAULT_CONFIRM

    def compose(self) -> ComposeResult:
        """Asked-by and countdown, each question with its controls, a message, the buttons."""
        part = self.part
        with Horizontal(classes="question--meta"):
            yield Label(Content(self._asked_by()), classes="question--asked-by")
            yield Label(classes="question--countdown")
        with Vertical(classes="question--body"):
            for index, question in enumerate(part.questions):
                yield Static(Content(question.text), markup=False, classes="question--text")
                yield from self._controls(index, question)
            if part.kind == "confirm":
                with Horizontal(classes="question--choices"):
                    for number, option in enumerate(self._confirm_options()):
                        shown = (
                            _(_SHOWN_DEFAULTS[option.label])
                            if (self._confirm_options() is DEFAULT_CONFIRM)
                            else option.label
                        )
                        variant = "question--option -first" if number == 0 else "question--option"
                        yield OptionButton(0, option, shown, variant)
                for option in self._confirm_options():
                    if option.description:
                        text = f"{option.label}: {option.description}"
                        yield Static(Content(text), markup=False, classes="question--description")
            yield Static(classes="question--message", markup=False)
            if not self._answers_at_once and part.kind != "confirm":
                with Horizontal(classes="question--buttons"):
                    yield Button(
                        Content(pgettext("question", "Send")),
                        classes="question--send",
                        compact=True,
                    )
                    if part.kind == "secret":
                        yield Button(
                            Content(pgettext("question", "Decline")),
                            classes="question--decline",
                            compact=True,
                        )
            yield self.hint_label()
        yield Static(classes="question--state", markup=False)

    def _controls(self, index: int, question: Question) -> Iterator[Widget]:
        kind = self.part.kind
        if kind == "select":
            for option in question.options:
                with Horizontal(classes="question--row"):
                    if question.multi:
                        yield OptionBox(index, option)
                    else:
                        yield OptionButton(index, option, option.label, "question--option")
                    if option.description:
                        yield Static(
                            Content(option.description),
                            markup=False,
                            classes="question--description",
                        )
        elif kind == "input":
            box = Input(placeholder=question.placeholder or "", classes="question--input")
            box.question_index = index  # type: ignore[attr-defined]
            yield box
        elif kind == "secret" and index == 0:  # one value per secret, whatever the text says
            yield SecretInput(placeholder=question.placeholder or "", classes="question--secret")

    def _asked_by(self) -> str:
        """A title for people: `asked_by` names the gateway's inner agent and tool (ids such as
        `planner · price_alerts`), which go to the debug log, not on screen."""
        if self.part.asked_by:
            self.log.debug(f"question {self.part.question_id} asked by {self.part.asked_by!r}")
        return _("The agent asks")

    def keys_hint(self) -> str:
        """What the keys do in this kind of question."""
        kind = self.part.kind
        if kind in ("input", "secret"):
            return _("Enter sends")
        if kind == "confirm":
            return _("←→ move · Enter presses")
        if self._answers_at_once:
            return _("↑↓ move · Enter picks")
        return _("↑↓ move · Space picks · Send sends")

    def on_mount(self) -> None:
        """Arm the input guard, line up the options and draw the current state."""
        self._ready = True
        self.arm_guard()
        self._align_options()
        self._sync()

    def _align_options(self) -> None:
        """Each question's options as one column: every control as wide as its widest, so that
        the descriptions beside them start at one place ("Ether (ETH)" beside "Bitcoin (BTC)")."""
        columns: dict[int, list[Widget]] = {}
        for control in self.query(".question--row > .question--option, .question--check"):
            columns.setdefault(getattr(control, "question_index", 0), []).append(control)
        for controls in columns.values():
            widest = max(self._width_of(control) for control in controls)
            for control in controls:
                control.styles.min_width = widest

    def _width_of(self, control: Widget) -> int:
        """The cells `control` takes on its own: its content and gutter, or its minimum."""
        own = control.get_content_width(self.app.size, self.app.size) + control.styles.gutter.width
        least = control.styles.min_width
        return max(own, int(least.value) if least is not None and least.is_cells else 0)

    # --- what the controller and the transcript call ---------------------------------------

    @property
    def is_busy(self) -> bool:
        """True while an answer is on its way."""
        return self._busy

    @property
    def is_open(self) -> bool:
        """True while the question waits for an answer (the server has not closed it)."""
        return self.part.outcome is None

    @property
    def decidable(self) -> bool:
        """True while an answer can still be given here (not past `expires_at`)."""
        return self.is_open and not self.locally_expired

    @property
    def locally_expired(self) -> bool:
        """True when an open question is past `expires_at` by our clock."""
        until = expires_at(self.part)
        return self.part.outcome is None and until is not None and self._clock() >= until

    @property
    def asking_again(self) -> bool:
        """True while a confirm waits for its second press."""
        return self.second_step.asking

    def first_control(self) -> Widget | None:
        """The first control that takes an answer (where Ctrl+O puts the focus)."""
        for widget in self.controls():
            if not widget.has_class("question--decline"):
                return widget
        return None

    def refresh_part(self) -> None:
        """Redraw after the part changed (closed by the server, or settled here)."""
        if not self.is_open:
            self._busy = False
        self._sync()

    def refresh_countdown(self) -> None:
        """Redraw the countdown; called every second while one runs."""
        self._sync()

    # --- input -----------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """y and n only on a confirm (elsewhere they are typed into its boxes, or nothing)."""
        if action in ("yes", "no"):
            return self.part.kind == "confirm"
        return True

    def action_yes(self) -> None:
        """y: press the confirm's go-ahead (its first option that is not a refusal)."""
        self._press_option(refusal=False)

    def action_no(self) -> None:
        """n: press the confirm's refusal, where it has one."""
        self._press_option(refusal=True)

    def _press_option(self, *, refusal: bool) -> None:
        for button in self.query(OptionButton):
            if (button.answer_label.strip().casefold() in REFUSALS) == refusal:
                button.focus()
                button.press()
                return

    def _can_answer(self) -> bool:
        return self.is_open and not self._busy and not self.locally_expired

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Options, Send and Decline, all through the guard."""
        event.stop()
        button = event.button
        if self.is_guarded or not self._can_answer():
            return
        if isinstance(button, OptionButton):
            self._option_pressed(button)
        elif button.has_class("question--send"):
            self._send()
        elif button.has_class("question--decline"):
            self._decline()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter in an answer box: the next box, or send from the last one."""
        event.stop()
        if self.is_guarded or not self._can_answer():
            return
        boxes = list(self.query(".question--input").results(Input))
        if event.input in boxes and event.input is not boxes[-1]:
            boxes[boxes.index(event.input) + 1].focus()
            return
        self._send()

    def on_secret_input_entered(self, event: SecretInput.Entered) -> None:
        """Enter in the secret box: hand the value on and clear the box at once."""
        event.stop()
        if self.is_guarded or not self._can_answer():
            return
        self._send()

    def _option_pressed(self, button: OptionButton) -> None:
        kind = self.part.kind
        if kind == "confirm":
            label = button.answer_label
            risky = label.strip().casefold() not in REFUSALS
            if risky and not self.second_step.confirmed(label):
                self._error = None
                self._sync()
                return
            self.second_step.clear()
            self._post_answer([[label] for _q in self.part.questions] or [[label]])
            return
        if self._answers_at_once:
            self._post_answer([[button.answer_label]])
            return
        self._selected[button.question_index] = button.answer_label
        self._sync()

    def _collect(self) -> list[list[str]] | None:
        """The answers of every question, or None (with a message) when one is missing."""
        answers: list[list[str]] = []
        kind = self.part.kind
        for index, question in enumerate(self.part.questions):
            if kind == "input":
                box = next(
                    b
                    for b in self.query(".question--input").results(Input)
                    if getattr(b, "question_index", None) == index
                )
                text = box.value.strip()
                if not text:
                    self._complain(_("Type an answer first."))
                    return None
                answers.append([text])
            elif question.multi:
                picked = [
                    box.answer_label
                    for box in self.query(OptionBox)
                    if box.question_index == index and box.value
                ]
                if not picked:
                    self._complain(_("Choose at least one answer for each question."))
                    return None
                answers.append(picked)
            else:
                chosen = self._selected.get(index)
                if chosen is None:
                    self._complain(_("Choose an answer for each question."))
                    return None
                answers.append([chosen])
        return answers

    def _complain(self, text: str) -> None:
        self._error = text
        self._sync()

    def _send(self) -> None:
        if self.part.kind == "secret":
            box = self.query_one(SecretInput)
            value = box.value
            box.value = ""  # gone from the widget before anything else happens
            if not value:
                self._complain(_("Type the secret first, or press Decline."))
                return
            self._busy, self._error = True, None
            self._sync()
            self.post_message(SecretProvided(self.part, SecretValue(value), self))
            return
        answers = self._collect()
        if answers is not None:
            self._post_answer(answers)

    def _decline(self) -> None:
        for box in self.query(SecretInput):
            box.value = ""
        self._busy, self._error = True, None
        self._sync()
        self.post_message(SecretProvided(self.part, None, self))

    def _post_answer(self, answers: list[list[str]]) -> None:
        self._busy, self._error = True, None
        self._sync()
        self.post_message(AnswerRequested(self.part, answers, self))

    # --- drawing ---------------------------------------------------------------------------

    def _message_text(self) -> str:
        if self._error:
            return self._error
        if (label := self.second_step.choice) is not None:
            return _("Press “{label}” again to go ahead.").format(label=label)
        if self._busy:
            return _("Sending your answer…")
        if self.locally_expired:
            return _("The time to answer is over.")
        return ""

    def _countdown_text(self) -> str:
        until = expires_at(self.part)
        if not self.is_open or until is None or self.locally_expired:
            return ""
        left = until - self._clock()
        if left >= DAY:  # a countdown of hundreds of hours says less than the moment
            when = datetime.fromtimestamp(until).strftime("%Y-%m-%d %H:%M")
            return _("open until {when}").format(when=when)
        return _("expires in {time}").format(time=format_remaining(left))

    def _state_text(self) -> str:
        outcome = self.part.outcome
        if outcome is None:
            return ""
        state = question_outcome(outcome, self.part.answered_with)
        first = self.part.questions[0].text if self.part.questions else ""
        return f"{state} · {first}" if first else state

    def _sync(self) -> None:
        """Bring every child in line with the part, the clock and the view's own state."""
        if not self._ready:
            return
        is_open = self.is_open
        self.set_class(not is_open, "-closed")
        for outcome in (*OUTCOMES, "other"):
            self.set_class(self.part.outcome == outcome, f"-{outcome}")
        self.set_class(self._busy, "-busy")
        self.set_class(self.locally_expired, "-locally-expired")
        self.set_class(self.asking_again, "-asking-again")
        message = self._message_text()
        self.set_class(bool(message), "-has-message")
        self.set_class(bool(self._error), "-has-error")
        self.query_one(".question--message", Static).update(Content(message))
        self.query_one(".question--countdown", Label).update(Content(self._countdown_text()))
        self.query_one(".question--state", Static).update(Content(self._state_text()))
        enabled = self._can_answer()
        for control in self.query("Button, Checkbox, Input"):
            if not enabled:
                self.keep_focus_near(control)
            control.disabled = not enabled
        for button in self.query(OptionButton):
            picked = self._selected.get(button.question_index) == button.answer_label
            pending = self.second_step.asking_for(button.answer_label)
            button.set_class(picked, "-selected")
            button.set_class(bool(pending), "-asking")
        counting = is_open and expires_at(self.part) is not None and not self.locally_expired
        if (counting or self.asking_again) and self._ticker is None:
            self._ticker = self.set_interval(1.0, self.refresh_countdown)
        elif not (counting or self.asking_again) and self._ticker is not None:
            self._ticker.stop()
            self._ticker = None
        self.show_standing(self._standing())
        if not self.decidable and not self._busy:
            self.give_back_focus()

    def _standing(self) -> Standing:
        outcome = self.part.outcome
        if outcome is None:
            return "expired" if self.locally_expired else "waiting"
        if outcome == "timeout":
            return "expired"
        return "elsewhere" if outcome == "elsewhere" else "decided"
