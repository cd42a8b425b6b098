"""The conversation of one thread, whatever protocol brought it: turns, and how they change.

A protocol's reducer (talkie/1's is `reducer.TalkieConversation`) folds its wire events in
through these methods, for live answers and loaded history alike, so both render through one
path. The conversation is the only writer of its turns: widgets only read them.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime
from typing import Literal

from talkie_tui.chat.turns import (
    ActionPart,
    AttachmentPart,
    ButtonsPart,
    NoticePart,
    Part,
    QuestionPart,
    TextPart,
    ToolPart,
    Turn,
    TurnState,
)
from talkie_tui.core.button_deadlines import lapsed
from talkie_tui.i18n import _
from talkie_tui.protocol.talkie.models import Action, DecisionResult, UsageMeter

__all__ = ["Change", "Conversation"]

Change = Part | Turn | None
"""What a step touched: the part that changed, a new turn, or nothing visible."""


class Conversation:
    """The turns of one thread, with the answer being written and the actions in it."""

    def __init__(self, thread_id: str | None = None) -> None:
        self.thread_id = thread_id
        self.turns: list[Turn] = []
        self.actions: dict[str, ActionPart] = {}
        self.questions: dict[str, QuestionPart] = {}
        self.usage: tuple[UsageMeter, ...] = ()
        self._texts: dict[str, TextPart] = {}
        self._tools: dict[str, ToolPart] = {}
        self._current: Turn | None = None

    # --- the person's side ---------------------------------------------------------------

    def turn(self, message_id: str) -> Turn | None:
        """The turn of a message, if it is here."""
        return next((turn for turn in self.turns if turn.id == message_id), None)

    def drop_answer_to_redo(self, message_id: str) -> bool:
        """Forget the cut-short or failed answer to the person's message `message_id` (it is
        being asked for again, and the new answer takes its place); True when there was one."""
        turn = self.turn(message_id)
        if turn is None:
            return False
        after = self.turns[self.turns.index(turn) + 1 :]
        answer = next((t for t in after if t.role == "assistant"), None)
        if answer is None or answer.state not in ("truncated", "error"):
            return False
        if any(t.role == "user" for t in after[: after.index(answer)]):
            return False
        self.turns.remove(answer)
        return True

    def add_user_message(
        self,
        message_id: str,
        text: str,
        created_at: datetime | None = None,
        attachments: Sequence[AttachmentPart] = (),
    ) -> Turn:
        """Append the person's message (with the files sent with it); what follows forms the
        answer to it."""
        turn = Turn(message_id, "user", [TextPart(message_id, [text], done=True), *attachments])
        turn.created_at = created_at
        self.turns.append(turn)
        self._current = None
        return turn

    def add_spoken(self, role: Literal["user", "assistant"], item_id: str, text: str) -> Turn:
        """A final voice transcript, shown like a typed message or a written answer."""
        if role == "user":
            turn = self.add_user_message(item_id, text)
        else:
            turn = Turn(item_id, "assistant", [TextPart(item_id, [text], done=True)])
            self.turns.append(turn)
            self._current = None
        turn.channel = "voice"
        return turn

    # --- the answer ----------------------------------------------------------------------

    def begin_answer(self, run_id: str | None = None) -> Turn:
        """Start the assistant turn that the following steps fill."""
        turn = Turn(run_id or f"answer-{len(self.turns)}", "assistant", state="streaming")
        turn.run_id = run_id
        self.turns.append(turn)
        self._current = turn
        return turn

    def answer(self) -> Turn:
        """The answer being written, begun when there is none."""
        return self._current if self._current is not None else self.begin_answer()

    def add_part(self, part: Part) -> Part:
        """Append a part (a card, a link, a notice…) to the answer being written."""
        self.answer().parts.append(part)
        return part

    def add_text(self, message_id: str, delta: str) -> TextPart | None:
        """Append text to the message `message_id` of the answer (opened on its first text)."""
        part = self._texts.get(message_id)
        if part is None:
            if not delta:
                return None  # empty messages are not shown
            part = TextPart(message_id)
            self._texts[message_id] = part
            self.add_part(part)
        if delta:
            part.chunks.append(delta)
        return part

    def text_part(self, message_id: str) -> TextPart | None:
        """The text part of the message `message_id`, if it has shown any text."""
        return self._texts.get(message_id)

    def start_tool(self, tool_id: str, name: str, label: str) -> ToolPart:
        """A tool the agent runs, shown by its human label."""
        part = ToolPart(tool_id, name, label)
        self._tools[tool_id] = part
        self.add_part(part)
        return part

    def end_tool(self, tool_id: str, *, failed: bool, error: str | None = None) -> ToolPart | None:
        """The tool `tool_id` ended: ✓, or ✗ with the error (a default when none was given)."""
        part = self._tools.get(tool_id)
        if part is None:
            return None
        part.state = "failed" if failed else "ok"
        if failed:
            part.error = error or _("The tool failed.")
        return part

    def propose(self, action: Action, turn: Turn | None = None) -> ActionPart:
        """Show an action waiting for a decision (once: a repeat updates it in place).

        It joins `turn` (history places it by time) or the answer being written.
        """
        existing = self.actions.get(action.id)
        if existing is not None:
            existing.action = action
            return existing
        part = ActionPart(action)
        self.actions[action.id] = part
        if turn is None:
            self.add_part(part)
        else:
            turn.parts.append(part)
        return part

    def fail(self, message: str, *, code: str | None = None, retryable: bool = False) -> Change:
        """The answer failed: the server's words as a notice, and the turn ends in error."""
        if self._current is None and self.turns and self.turns[-1].role == "assistant":
            self._current = self.turns[-1]  # a late failure belongs to the answer it ends
        self.add_part(NoticePart(message, code=code, retryable=retryable, kind="failed"))
        return self.end_answer("error")

    def cut_off(self, reason: str) -> Change:
        """The answer's stream ended early: what arrived stays, marked as cut off."""
        self.add_part(NoticePart(reason, level="warning", retryable=True, kind="cut_off"))
        return self.end_answer("truncated")

    def end_answer(self, state: TurnState = "done") -> Turn | None:
        """Close the answer being written with its final state."""
        turn = self._current
        if turn is None:
            return None
        for part in turn.parts:
            if isinstance(part, TextPart):
                part.done = True
            elif isinstance(part, ToolPart) and part.state == "running":
                part.state = "ok" if state == "done" else "failed"
        turn.state = state
        self._current = None
        return turn

    # --- outside the answer --------------------------------------------------------------

    @property
    def pending_actions(self) -> int:
        """How many actions wait for the person's decision."""
        return sum(1 for part in self.actions.values() if part.action.status == "pending")

    def not_delivered(
        self,
        message_id: str,
        reason: str,
        *,
        code: str | None = None,
        retry_after: float | None = None,
    ) -> Turn | None:
        """The person's message did not reach the server: it stays, with the reason and a
        retry (re-sending it is always possible); None when the message is not here."""
        for turn in reversed(self.turns):
            if turn.id == message_id:
                turn.drop_delivery_notice()  # one Retry, however many tries
                turn.parts.append(
                    NoticePart(
                        reason,
                        code=code,
                        retryable=True,
                        retry_after=retry_after,
                        kind="not_delivered",
                    )
                )
                return turn
        return None

    @property
    def pending_questions(self) -> int:
        """How many questions of the agent wait for an answer."""
        return sum(1 for part in self.questions.values() if part.outcome is None)

    @property
    def pending_taps(self) -> int:
        """How many rows of a hub's buttons wait for a tap (none taken, one still tappable:
        a button past the deadline in its id waits no more)."""
        now = time.time()
        return sum(
            1
            for turn in self.turns
            for part in turn.parts
            if isinstance(part, ButtonsPart)
            and part.selected_button_id is None
            and any(
                button.button_id is not None and not lapsed(button.button_id, now)
                for row in part.rows
                for button in row
            )
        )

    def settle_question(self, question_id: str, outcome: str) -> QuestionPart | None:
        """Close an open question with its outcome (whoever answered, or "elsewhere"); None
        when there is no such open question."""
        part = self.questions.get(question_id)
        if part is None or part.outcome is not None:
            return None
        part.outcome = outcome
        return part

    def take_pending_interjections(self) -> list[str]:
        """What the person said into the last answer that the agent did not take in, handed
        over once (to be sent again as ordinary messages)."""
        last = self.turns[-1] if self.turns else None
        if last is None or last.role != "assistant" or not last.pending_interjections:
            return []
        late, last.pending_interjections = last.pending_interjections, []
        return late

    def update_action(self, action: Action) -> ActionPart | None:
        """Replace an action's state (after a decision or a fresh look at the server)."""
        part = self.actions.get(action.id)
        if part is not None:
            part.action = action
        return part

    def apply_decision(self, result: DecisionResult) -> list[Change]:
        """Show a decision's outcome: the action's new state first (a protocol's reducer adds
        what else the outcome carries, such as talkie/1's result cards)."""
        return [self.update_action(result.action)]

    def set_usage(self, usage: tuple[UsageMeter, ...]) -> None:
        """The person's usage as the server last reported it."""
        self.usage = usage
