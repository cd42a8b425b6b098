"""The reducer: AG-UI and talkie events folded into turns. Live runs and loaded history
(`conversation_from_history`) go through the same `Conversation.apply`, so they look the same.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal

import ag_ui.core as agui

from talkie_tui.i18n import _
from talkie_tui.protocol.events import (
    ActionProposed,
    CardReceived,
    DecodedEvent,
    EventDecoder,
    LinkSuggested,
    MalformedEvent,
    StreamTruncated,
    UsageReported,
)
from talkie_tui.protocol.models import Action, DecisionResult, ThreadHistory, UsageMeter

from .turns import (
    ActionPart,
    CardPart,
    LinkPart,
    NoticePart,
    Part,
    TextPart,
    ToolPart,
    Turn,
    TurnState,
)

__all__ = ["Change", "Conversation", "conversation_from_history"]

Change = Part | Turn | None
"""What `apply` touched: the part that changed, a new turn, or nothing visible."""


class Conversation:
    """The turns of one thread, built from events."""

    def __init__(self, thread_id: str | None = None) -> None:
        self.thread_id = thread_id
        self.turns: list[Turn] = []
        self.actions: dict[str, ActionPart] = {}
        self.usage: tuple[UsageMeter, ...] = ()
        self._texts: dict[str, TextPart] = {}
        self._not_assistant: set[str] = set()  # messages of other roles (user echo, system)
        self._tools: dict[str, ToolPart] = {}
        self._current: Turn | None = None
        self._handlers: dict[type, Callable[[Any], Change]] = {
            agui.TextMessageContentEvent: self._on_text_content,
            agui.TextMessageStartEvent: self._on_text_start,
            agui.TextMessageEndEvent: self._on_text_end,
            agui.ToolCallStartEvent: self._on_tool_start,
            agui.ToolCallEndEvent: self._on_tool_end,
            agui.RunStartedEvent: self._on_run_started,
            agui.RunFinishedEvent: self._on_run_finished,
            agui.RunErrorEvent: self._on_run_error,
            CardReceived: self._on_card,
            ActionProposed: self._on_action,
            LinkSuggested: self._on_link,
            UsageReported: self._on_usage,
            MalformedEvent: self._on_malformed,
            StreamTruncated: self._on_truncated,
        }

    # --- the person's side ---------------------------------------------------------------

    def add_user_message(
        self, message_id: str, text: str, created_at: datetime | None = None
    ) -> Turn:
        """Append the person's message; the next events form the answer to it."""
        turn = Turn(message_id, "user", [TextPart(message_id, [text], done=True)])
        turn.created_at = created_at
        self.turns.append(turn)
        self._current = None
        return turn

    def begin_answer(self, run_id: str | None = None) -> Turn:
        """Start the assistant turn that the following events fill."""
        turn = Turn(run_id or f"answer-{len(self.turns)}", "assistant", state="streaming")
        turn.run_id = run_id
        self.turns.append(turn)
        self._current = turn
        return turn

    # --- events --------------------------------------------------------------------------

    def apply(self, event: DecodedEvent) -> Change:
        """Fold one event into the conversation and return what changed."""
        handler = self._handlers.get(type(event))
        return handler(event) if handler is not None else None

    def _answer(self) -> Turn:
        return self._current if self._current is not None else self.begin_answer()

    def _add(self, part: Part) -> Part:
        self._answer().parts.append(part)
        return part

    def _on_run_started(self, event: agui.RunStartedEvent) -> Change:
        self.thread_id = event.thread_id
        current = self._current
        if current is not None and current.run_id in (None, event.run_id) and not current.parts:
            current.run_id = event.run_id
            current.state = "streaming"
            return current
        return self.begin_answer(event.run_id)

    def _on_text_start(self, event: agui.TextMessageStartEvent) -> Change:
        if event.role not in (None, "assistant"):
            self._not_assistant.add(event.message_id)
            return None
        self._answer()
        part = self._texts.get(event.message_id)
        if part is not None:
            part.done = False  # AG-UI 1.0 allows reopening a closed message
        return None

    def _on_text_content(self, event: agui.TextMessageContentEvent) -> Change:
        delta = event.delta
        if event.message_id in self._not_assistant:
            return None
        part = self._texts.get(event.message_id)
        if part is None:
            if not delta:
                return None  # empty messages are not shown
            part = TextPart(event.message_id)
            self._texts[event.message_id] = part
            self._add(part)
        if delta:
            part.chunks.append(delta)
        return part

    def _on_text_end(self, event: agui.TextMessageEndEvent) -> Change:
        part = self._texts.get(event.message_id)
        if part is None:
            return None
        part.done = True
        return part

    def _on_tool_start(self, event: agui.ToolCallStartEvent) -> Change:
        label = (event.metadata or {}).get("label")
        name = event.tool_call_name
        part = ToolPart(event.tool_call_id, name, label if isinstance(label, str) else name)
        self._tools[event.tool_call_id] = part
        return self._add(part)

    def _on_tool_end(self, event: agui.ToolCallEndEvent) -> Change:
        part = self._tools.get(event.tool_call_id)
        if part is None:
            return None
        metadata = event.metadata or {}
        failed = metadata.get("ok") is False
        part.state = "failed" if failed else "ok"
        error = metadata.get("error")
        if failed:
            part.error = error if isinstance(error, str) and error else _("The tool failed.")
        return part

    def _on_card(self, event: CardReceived) -> Change:
        return self._add(CardPart(event.card))

    def _on_action(self, event: ActionProposed) -> Change:
        existing = self.actions.get(event.action.id)
        if existing is not None:
            existing.action = event.action
            return existing
        part = ActionPart(event.action)
        self.actions[event.action.id] = part
        return self._add(part)

    def _on_link(self, event: LinkSuggested) -> Change:
        return self._add(LinkPart(event.link))

    def _on_usage(self, event: UsageReported) -> Change:
        self.usage = event.usage
        return None

    def _on_malformed(self, event: MalformedEvent) -> Change:
        text = _("The server sent a {type} event this client cannot read ({reason}).").format(
            type=event.type, reason=event.reason
        )
        return self._add(NoticePart(text, level="warning"))

    def end_answer(self, state: TurnState = "done") -> Turn | None:
        """Close the current assistant turn with its final state."""
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

    def _on_run_finished(self, event: agui.RunFinishedEvent) -> Change:
        outcome = event.outcome
        cancelled = outcome is not None and getattr(outcome, "type", None) == "cancelled"
        return self.end_answer("cancelled" if cancelled else "done")

    def _on_run_error(self, event: agui.RunErrorEvent) -> Change:
        if self._current is None and self.turns and self.turns[-1].role == "assistant":
            self._current = self.turns[-1]  # a late failure belongs to the answer it ends
        retryable = (event.metadata or {}).get("retryable") is True
        message = event.message or _("The agent failed without saying why.")
        self._add(NoticePart(message, code=event.code, retryable=retryable))
        return self.end_answer("error")

    def _on_truncated(self, event: StreamTruncated) -> Change:
        self._add(NoticePart(event.reason, level="warning", retryable=True))
        return self.end_answer("truncated")

    def add_action(self, action: Action, turn: Turn | None) -> Change:
        """Attach an action to a given turn (history), or to the current answer when None."""
        previous, self._current = self._current, turn or self._current
        try:
            return self.apply(ActionProposed(action))
        finally:
            self._current = previous

    # --- decisions -----------------------------------------------------------------------

    def update_action(self, action: Action) -> ActionPart | None:
        """Replace an action's state (after a decision or a fresh `GET action`)."""
        part = self.actions.get(action.id)
        if part is not None:
            part.action = action
        return part

    def apply_decision(self, result: DecisionResult) -> list[Change]:
        """Show a decision's outcome: the action's new state and its result events."""
        changes: list[Change] = [self.update_action(result.action)]
        if result.events:
            decoder = EventDecoder()
            events = [event for raw in result.events for event in decoder.decode_object(raw)]
            changes.extend(self.add_answer(events))
        return changes

    # --- voice (§10) ---------------------------------------------------------------------

    def add_answer(self, events: list[DecodedEvent]) -> list[Change]:
        """A finished assistant turn made of already decoded events (a decision, a voice tool)."""
        self.begin_answer()
        changes = [self.apply(event) for event in events]
        self.end_answer("done")
        return changes

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


def conversation_from_history(history: ThreadHistory) -> Conversation:
    """Build the conversation of a stored thread through the same reducer as live runs."""
    conversation = Conversation(history.thread.id)
    answered: dict[str, Turn] = {}  # user message id -> the assistant turn that answered it
    last_user: Turn | None = None
    for message in history.messages:
        if message.role == "user":
            last_user = conversation.add_user_message(
                message.id, message.content, message.created_at
            )
            last_user.channel = message.channel or "chat"
            continue
        turn = conversation.begin_answer()
        turn.id, turn.created_at = message.id, message.created_at
        turn.channel = message.channel or "chat"
        if last_user is not None:
            answered.setdefault(last_user.id, turn)
        conversation.apply(
            agui.TextMessageContentEvent(message_id=message.id, delta=message.content)
        )
        for card in message.cards:
            conversation.apply(CardReceived(card))
        conversation.end_answer("done")
    for action in history.actions:
        _place_action(conversation, action, answered)
    return conversation


def _place_action(conversation: Conversation, action: Action, answered: dict[str, Turn]) -> None:
    """Put an action into the answer to the last user message sent before it was proposed."""
    owner: Turn | None = None
    for turn in conversation.turns:
        if turn.role != "user":
            continue
        if action.created_at and turn.created_at and turn.created_at > action.created_at:
            break
        owner = answered.get(turn.id)
    if owner is None:
        owner = next((t for t in reversed(conversation.turns) if t.role == "assistant"), None)
    conversation.add_action(action, owner)
