"""The agent asks back, and the person answers (`capabilities.questions`): a Minara gateway's."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:
    from talkie_tui.chat.turns import QuestionPart

__all__ = ["AnswerOutcome", "Answers"]

AnswerOutcome = Literal["answered", "not_pending"]


@runtime_checkable
class Answers(Protocol):
    """The person answers what the agent asked (`capabilities.questions`)."""

    async def answer(self, question: QuestionPart, answers: list[list[str]]) -> AnswerOutcome:
        """One list per question of `question`: the chosen labels (select, confirm) or the
        typed text as its one item (input); "not_pending" when it was answered elsewhere or
        timed out (not an error)."""
        ...

    async def provide_secret(self, question: QuestionPart, value: str | None) -> AnswerOutcome:
        """Write a secret's `value` to the question's write endpoint (the server's own origin
        only, else refused) and answer "provided"; None declines. The value is never kept."""
        ...
