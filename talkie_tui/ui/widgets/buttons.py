"""What a hub's agent puts under its message: rows of buttons, quick replies, and the quote of
the message a message answers (Cuckoo `buttons`, `quick_replies`, `reply_to`).

Both keep the decision standard (`DecisionView`): the guard (armed again when the buttons
become tappable again after an error), the keys, the hint, the second step. Their own rules:

- A button in the `danger` style is the risky kind: its tap takes a second step.
- A button whose id carries a deadline (`core/button_deadlines`: the bridge's Undo) goes when
  the deadline passes: only what is still open is offered.
- A tap makes the row busy (its buttons disabled) until the screen says how it went, so one
  gesture cannot send two taps; a taken button shows as chosen and the others stay disabled,
  since a button is taken only once.
- A URL button opens nothing itself: it asks the screen, which opens `https`/`http` only on
  this gesture (the link rules of `links.py`) and copies `tel:` and `upi:` addresses instead.

Every label is the agent's text, cleaned by the reducer and placed as plain `Content` (never
markup); the colours live in `cuckoo.tcss`.
"""

from __future__ import annotations

import time
from typing import ClassVar

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.style import Style
from textual.widget import Widget
from textual.widgets import Button, Static

from talkie_tui.chat.turns import ButtonsPart, MessageButton, QuickRepliesPart, ReplyPart
from talkie_tui.core.button_deadlines import deadline_of, lapsed
from talkie_tui.core.sanitize import clean_text
from talkie_tui.i18n import _
from talkie_tui.ui.messages import QuickReplyChosen, TapRequested
from talkie_tui.ui.widgets.decision import DecisionView, Standing
from talkie_tui.ui.widgets.guard import Clock

__all__ = [
    "COPIED_SCHEMES",
    "ButtonsView",
    "MessageButtonWidget",
    "QuickRepliesView",
    "ReplyQuoteView",
    "url_scheme",
]

COPIED_SCHEMES = frozenset({"tel", "upi"})
"""URL buttons whose address is shown and copied, never opened (a call, a payment)."""
SHOWN_ADDRESS_CHARS = 40
CHOSEN = "✓"
OPENS = "↗"
QUOTE = "↱"
CHIP_FRAME = 3  # a chip's two half-block ends and the gap after it


def url_scheme(url: str) -> str:
    """The scheme of a button's URL, lower-cased ("" when it has none)."""
    head, colon, _rest = url.strip().partition(":")
    return head.lower() if colon and head.isascii() and head.replace("+", "").isalnum() else ""


def _shown_address(url: str) -> str:
    """A `tel:` or `upi:` address as shown on its button (cut when long)."""
    address = clean_text(url.strip())
    if len(address) > SHOWN_ADDRESS_CHARS:
        address = address[: SHOWN_ADDRESS_CHARS - 1] + "…"
    return address


class MessageButtonWidget(Button):
    """One button of a message: a tap (its id), or a link (its URL)."""

    def __init__(self, button: MessageButton) -> None:
        self.button = button
        variant = {"primary": "primary", "danger": "error"}.get(button.style, "default")
        classes = f"message-button -style-{button.style}"
        if button.url is not None:
            classes += " -link"
        super().__init__(self._label(False), variant=variant, compact=True, classes=classes)  # type: ignore[arg-type]
        if button.url is not None:
            self.tooltip = Content(clean_text(button.url))

    def _label(self, chosen: bool) -> Content:
        button = self.button
        if button.url is None:
            return Content(f"{CHOSEN} {button.label}" if chosen else button.label)
        if url_scheme(button.url) in COPIED_SCHEMES:
            return Content(f"{button.label} · {_shown_address(button.url)}")
        return Content(f"{button.label} {OPENS}")

    def show_chosen(self, chosen: bool) -> None:
        """Mark the button as the one taken (or not)."""
        self.set_class(chosen, "-chosen")
        label = self._label(chosen)
        if label != self.label:
            self.label = label
            # `Button.label` repaints without a new layout: its `width: auto` was measured for
            # the old label, and "✓ " would push the words out of it.
            self.refresh(layout=True)


class ButtonsView(DecisionView):
    """A `ButtonsPart`: its rows of buttons, a message line, and whether one was taken."""

    def __init__(
        self,
        part: ButtonsPart,
        *,
        monotonic: Clock | None = None,
        clock: Clock = time.time,
    ) -> None:
        super().__init__(monotonic=monotonic, classes="message-buttons")
        self.part = part
        self._clock = clock  # wall time, for the deadlines of buttons
        self._busy = False
        self._error: str | None = None
        self._taken_here: str | None = None  # tapped here, before the hub's word came
        self.shown_taken: str | None = None  # the taken button as last drawn
        self._ready = False

    def compose(self) -> ComposeResult:
        """The rows as the agent laid them out, then the message line."""
        for row in self.part.rows:
            with Horizontal(classes="message-buttons--row"):
                for button in row:
                    yield MessageButtonWidget(button)
        yield Static(classes="message-buttons--message", markup=False)
        yield self.hint_label()

    def on_mount(self) -> None:
        """Arm the input guard, draw the current state, and redraw when a deadline passes."""
        self._ready = True
        self.arm_guard()
        self._sync()
        now = self._clock()
        for until in sorted({d for d in map(deadline_of, self._tap_ids()) if d and d > now}):
            self.set_timer(until - now + 0.05, self._sync)

    def _tap_ids(self) -> list[str]:
        return [b.button_id for row in self.part.rows for b in row if b.button_id is not None]

    def _lapsed(self, button: MessageButton) -> bool:
        """True for a button whose deadline has passed (it is taken away)."""
        return lapsed(button.button_id, self._clock())

    # --- what the controller and the transcript call ---------------------------------------

    @property
    def is_busy(self) -> bool:
        """True while a tap is on its way."""
        return self._busy

    @property
    def taken(self) -> str | None:
        """The id of the button taken (here or elsewhere), or None."""
        return self.part.selected_button_id or self._taken_here

    @property
    def is_open(self) -> bool:
        """True while a button with an id may still be tapped (and its deadline, if any, has not
        passed)."""
        rows = self.part.rows
        has_taps = any(b.button_id is not None and not self._lapsed(b) for row in rows for b in row)
        return has_taps and self.taken is None

    def keys_hint(self) -> str:
        """The arrows between the buttons, Enter taps."""
        return _("←→ move · Enter taps")

    def show_taken(self, button_id: str) -> None:
        """The hub took the tap: shown as chosen at once (its message confirms it)."""
        self._busy = False
        self._error = None
        self._taken_here = button_id
        self._sync()

    def refresh_part(self) -> None:
        """Redraw after the part changed (a tap seen on another device, or confirmed)."""
        if self.part.selected_button_id is not None:
            self._busy = False
        self._sync()

    # --- input -----------------------------------------------------------------------------

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """A tap, through the guard; a link button asks the screen, which decides."""
        event.stop()
        widget = event.button
        if not isinstance(widget, MessageButtonWidget) or self.is_guarded:
            return
        button = widget.button
        if button.url is not None:
            self.post_message(TapRequested(self.part, button, self))
            return
        if self._busy or not self.is_open or self._lapsed(button):
            return
        if button.style == "danger" and not self.second_step.confirmed(button.button_id or ""):
            self._error = None
            self._sync()
            return
        self.second_step.clear()
        self._busy, self._error = True, None
        self._sync()
        self.post_message(TapRequested(self.part, button, self))

    # --- drawing ---------------------------------------------------------------------------

    def _message_text(self) -> str:
        if self._error:
            return self._error
        asked = self._asked_button()
        if asked is not None:
            return _("Press “{label}” again to go ahead.").format(label=asked.label)
        if self._busy:
            return _("Sending your choice…")
        return ""

    def _asked_button(self) -> MessageButton | None:
        """The danger button waiting for its second press, if any."""
        choice = self.second_step.choice
        if choice is None:
            return None
        rows = self.part.rows
        return next((b for row in rows for b in row if b.button_id == choice), None)

    def _sync(self) -> None:
        if not self._ready:
            return
        taken = self.shown_taken = self.taken
        self.set_class(taken is not None, "-taken")
        self.set_class(self._busy, "-busy")
        message = self._message_text()
        self.set_class(bool(message), "-has-message")
        self.set_class(bool(self._error), "-has-error")
        self.query_one(".message-buttons--message", Static).update(Content(message))
        asked = self._asked_button()
        for widget in self.query(MessageButtonWidget):
            button = widget.button
            widget.show_chosen(taken is not None and button.button_id == taken)
            widget.set_class(asked is button, "-asking")
            if button.url is not None:
                continue  # a link stays usable: it takes nothing
            lapsed = self._lapsed(button) and button.button_id != taken
            widget.set_class(lapsed, "-lapsed")
            off = self._busy or taken is not None or lapsed
            if off:
                self.keep_focus_near(widget)
            widget.disabled = off
        buttons = [b for row in self.part.rows for b in row]
        self.set_class(bool(buttons) and all(map(self._lapsed, buttons)), "-all-lapsed")
        standing = self._standing()
        self.show_standing(standing)
        if standing in ("decided", "expired") and not self._busy:
            self.give_back_focus()

    def _standing(self) -> Standing | None:
        if self.is_open:
            return "waiting"
        if self.taken is not None:
            return "decided"
        return "expired" if any(map(deadline_of, self._tap_ids())) else None


class QuickRepliesView(DecisionView):
    """A `QuickRepliesPart`: a row of chips; choosing one sends its words as the next message.

    The chips are offered until the person says something after them: then they are
    `retire`d (hidden), as the words would answer something no longer asked.
    """

    def __init__(self, part: QuickRepliesPart, *, monotonic: Clock | None = None) -> None:
        super().__init__(monotonic=monotonic, classes="quick-replies")
        self.part = part
        self.chosen: str | None = None

    def compose(self) -> ComposeResult:
        """One chip per reply."""
        with Horizontal(classes="quick-replies--row"):
            for label in self.part.labels:
                chip = Button(Content(label), compact=True, classes="quick-reply")
                chip.reply_text = label  # type: ignore[attr-defined]
                yield chip
        yield self.hint_label()

    def on_mount(self) -> None:
        """Arm the input guard."""
        self.arm_guard()
        self.show_standing("waiting")

    def on_resize(self, event: events.Resize) -> None:
        """Chips that do not all fit in one row go one under another, none cut."""
        needed = sum(cell_len(label) + CHIP_FRAME for label in self.part.labels)
        self.set_class(needed > event.size.width, "-stacked")

    @property
    def is_open(self) -> bool:
        """True while a chip may be chosen."""
        return self.chosen is None and not self.has_class("-retired")

    def keys_hint(self) -> str:
        """The arrows between the chips, Enter sends one."""
        return _("←→ move · Enter sends")

    def reopen(self) -> None:
        """The reply was not sent (an answer still streams): the chips take a choice again."""
        self.chosen = None
        self.arm_guard()
        for chip in self.query(".quick-reply"):
            chip.disabled = False
            chip.remove_class("-chosen")
        self.show_standing("waiting")

    def retire(self, retired: bool = True) -> None:
        """Hide the chips: the conversation moved on."""
        self.set_class(retired, "-retired")
        self.show_standing(None if retired else "waiting")
        if retired:
            self.give_back_focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """A chip, through the guard: its words go as the next message (once)."""
        event.stop()
        text = getattr(event.button, "reply_text", None)
        if text is None or self.is_guarded or not self.is_open:
            return
        self.chosen = text
        for chip in self.query(".quick-reply").results(Button):
            chip.set_class(getattr(chip, "reply_text", None) == text, "-chosen")
            self.keep_focus_near(chip)
            chip.disabled = True
        self.show_standing("decided")
        self.post_message(QuickReplyChosen(text, self))


class ReplyQuoteView(Widget):
    """A `ReplyPart`: on top of a message, who wrote the message it answers, and its start."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"reply-quote--mark", "reply-quote--who"}

    def __init__(self, part: ReplyPart) -> None:
        super().__init__(classes="reply-quote")
        self.part = part

    def render(self) -> Content:
        """`↱ Agent: the start of its text…` as plain text (never markup)."""
        role = self.part.role
        who = _("You") if role == "user" else _("Agent") if role == "assistant" else ""
        preview = " ".join(clean_text(self.part.preview).split()) or _("(a message)")
        parts: list[str | tuple[str, Style]] = [
            (f"{QUOTE} ", self.get_visual_style("reply-quote--mark"))
        ]
        if who:
            parts.append((f"{who}: ", self.get_visual_style("reply-quote--who")))
        parts.append(preview)
        return Content.assemble(*parts)
