"""Messages widgets post to the screen; the screen does the work (HTTP, browser, files)."""

from __future__ import annotations

from typing import Literal

import rich.repr
from textual.message import Message
from textual.widget import Widget

from talkie_tui.chat.turns import ButtonsPart, MessageButton, NoticePart, QuestionPart, Turn
from talkie_tui.chat.vocabulary import Action, FileBlock

__all__ = [
    "AnswerRequested",
    "DecisionRequested",
    "DownloadRequested",
    "OpenLinkRequested",
    "QuickReplyChosen",
    "ReplyRequested",
    "RetryRequested",
    "SecretProvided",
    "SecretValue",
    "TapRequested",
]


class OpenLinkRequested(Message):
    """The user clicked or pressed Enter on a link; the screen checks and opens it."""

    def __init__(self, url: str, label: str = "") -> None:
        super().__init__()
        self.url = url
        self.label = label


class DownloadRequested(Message):
    """The user asked to download a card's file block."""

    def __init__(self, block: FileBlock) -> None:
        super().__init__()
        self.block = block


class DecisionRequested(Message):
    """A person decided an action by a deliberate gesture (never a key already in flight)."""

    def __init__(
        self,
        action: Action,
        decision: Literal["confirm", "cancel"],
        card: Widget | None = None,
    ) -> None:
        super().__init__()
        self.action = action
        self.decision = decision
        self._card = card

    @property
    def control(self) -> Widget | None:
        """The action card that was decided: it shows the outcome, or why it failed."""
        return self._card


class ReplyRequested(Message):
    """The person asked to answer a message of the transcript (`turn`; None: none is selected,
    the agent's newest is meant)."""

    def __init__(self, turn: Turn | None) -> None:
        super().__init__()
        self.turn = turn


class RetryRequested(Message):
    """The user asked to retry a failed or retryable run (the notice whose Retry it was)."""

    def __init__(self, notice: NoticePart | None = None) -> None:
        super().__init__()
        self.notice = notice


class AnswerRequested(Message):
    """A person answered the agent's question by a deliberate gesture: one list per question,
    the chosen labels (select, confirm) or the typed text as its one item (input)."""

    def __init__(self, question: QuestionPart, answers: list[list[str]], view: Widget) -> None:
        super().__init__()
        self.question = question
        self.answers = answers
        self._view = view

    @property
    def control(self) -> Widget:
        """The question view that was answered: it shows the outcome, or why it failed."""
        return self._view


class SecretValue:
    """A secret the person typed, on its way to the server: it never shows in a repr, and
    `take` hands it over once (later calls get "")."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def take(self) -> str:
        """The value, forgotten here as it is handed over."""
        value, self._value = self._value, ""
        return value

    def __repr__(self) -> str:
        return "SecretValue(<hidden>)"

    __str__ = __repr__


class SecretProvided(Message):
    """A person gave (or, with `secret` None, declined) the secret the agent asked for."""

    def __init__(self, question: QuestionPart, secret: SecretValue | None, view: Widget) -> None:
        super().__init__()
        self.question = question
        self.secret = secret
        self._view = view

    def __rich_repr__(self) -> rich.repr.Result:
        yield "question", self.question.question_id
        yield "declined", self.secret is None

    @property
    def control(self) -> Widget:
        """The question view the secret was typed into."""
        return self._view


class TapRequested(Message):
    """A person tapped a message's button by a deliberate gesture (never a key in flight)."""

    def __init__(self, part: ButtonsPart, button: MessageButton, view: Widget) -> None:
        super().__init__()
        self.part = part
        self.button = button
        self._view = view

    @property
    def control(self) -> Widget:
        """The row of buttons that was tapped: it shows the outcome, or why it failed."""
        return self._view


class QuickReplyChosen(Message):
    """A person chose one of the agent's quick replies: its words go as the next message."""

    def __init__(self, text: str, view: Widget) -> None:
        super().__init__()
        self.text = text
        self._view = view

    @property
    def control(self) -> Widget:
        """The row of quick replies it was chosen from."""
        return self._view
