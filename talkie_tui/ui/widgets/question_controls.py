"""The controls of a question's view: a password box whose value travels in no message, and
the buttons and checkboxes that stand for an option."""

from __future__ import annotations

from textual.content import Content
from textual.message import Message
from textual.widgets import Button, Checkbox, Input

from talkie_tui.chat.turns import QuestionOption

__all__ = ["OptionBox", "OptionButton", "SecretInput"]


class SecretInput(Input):
    """A password box whose value never travels in a message.

    Textual's `Changed`, `Submitted` and `Blurred` carry the value, so they are not posted;
    Enter posts a bare `Entered`. Copy and cut do nothing (the clipboard is not a safe place).
    """

    class Entered(Message):
        """Enter was pressed in the box (read the value from the box, then clear it)."""

        def __init__(self, box: SecretInput) -> None:
            super().__init__()
            self.box = box

        @property
        def control(self) -> SecretInput:
            """The box."""
            return self.box

    def __init__(self, *, placeholder: str = "", classes: str | None = None) -> None:
        super().__init__(placeholder=placeholder, password=True, classes=classes)

    def post_message(self, message: Message) -> bool:
        """Every message but the ones that would carry the value."""
        if isinstance(message, Input.Changed | Input.Submitted | Input.Blurred):
            return False
        return super().post_message(message)

    async def action_submit(self) -> None:
        """Enter: say so, without the value."""
        self.post_message(self.Entered(self))

    def action_copy(self) -> None:
        """Nothing: a secret is not copied."""

    def action_cut(self) -> None:
        """Nothing: a secret is not cut to the clipboard."""


class OptionButton(Button):
    """A button that stands for one option of one question."""

    def __init__(self, index: int, option: QuestionOption, shown: str, classes: str) -> None:
        super().__init__(Content(shown), compact=True, classes=classes)
        self.question_index = index
        self.answer_label = option.label


class OptionBox(Checkbox):
    """A checkbox for one option of a question that takes several."""

    def __init__(self, index: int, option: QuestionOption) -> None:
        super().__init__(Content(option.label), compact=True, classes="question--check")
        self.question_index = index
        self.answer_label = option.label
