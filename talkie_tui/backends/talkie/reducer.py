"""The talkie/1 reducer: AG-UI and talkie events folded into the conversation. Live runs and
loaded history (`conversation_from_history`) go through the same `apply`, so they look the same.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ag_ui.core as agui

from talkie_tui.chat.conversation import Change, Conversation
from talkie_tui.chat.turns import CardPart, LinkPart, NoticePart, Turn
from talkie_tui.i18n import _
from talkie_tui.protocol.talkie.events import (
    ActionProposed,
    CardReceived,
    DecodedEvent,
    EventDecoder,
    LinkSuggested,
    MalformedEvent,
    StreamTruncated,
    UsageReported,
)
from talkie_tui.protocol.talkie.models import Action, DecisionResult, HistoryMessage, ThreadHistory

__all__ = ["TalkieConversation", "conversation_from_history"]


class TalkieConversation(Conversation):
    """A conversation of a Talkie server: `apply` folds one AG-UI or talkie event in."""

    def __init__(self, thread_id: str | None = None) -> None:
        super().__init__(thread_id)
        self._not_assistant: set[str] = set()  # messages of other roles (user echo, system)
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

    def apply(self, event: DecodedEvent) -> Change:
        """Fold one event into the conversation and return what changed."""
        handler = self._handlers.get(type(event))
        return handler(event) if handler is not None else None

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
        self.answer()
        part = self.text_part(event.message_id)
        if part is not None:
            part.done = False  # AG-UI 1.0 allows reopening a closed message
        return None

    def _on_text_content(self, event: agui.TextMessageContentEvent) -> Change:
        if event.message_id in self._not_assistant:
            return None
        return self.add_text(event.message_id, event.delta)

    def _on_text_end(self, event: agui.TextMessageEndEvent) -> Change:
        part = self.text_part(event.message_id)
        if part is None:
            return None
        part.done = True
        return part

    def _on_tool_start(self, event: agui.ToolCallStartEvent) -> Change:
        label = (event.metadata or {}).get("label")
        name = event.tool_call_name
        return self.start_tool(event.tool_call_id, name, label if isinstance(label, str) else name)

    def _on_tool_end(self, event: agui.ToolCallEndEvent) -> Change:
        metadata = event.metadata or {}
        error = metadata.get("error")
        return self.end_tool(
            event.tool_call_id,
            failed=metadata.get("ok") is False,
            error=error if isinstance(error, str) and error else None,
        )

    def _on_card(self, event: CardReceived) -> Change:
        return self.add_part(CardPart(event.card))

    def _on_action(self, event: ActionProposed) -> Change:
        return self.propose(event.action)

    def _on_link(self, event: LinkSuggested) -> Change:
        return self.add_part(LinkPart(event.link))

    def _on_usage(self, event: UsageReported) -> Change:
        self.set_usage(event.usage)
        return None

    def _on_malformed(self, event: MalformedEvent) -> Change:
        text = _("The server sent a {type} event this client cannot read ({reason}).").format(
            type=event.type, reason=event.reason
        )
        return self.add_part(NoticePart(text, level="warning", kind="malformed"))

    def _on_run_finished(self, event: agui.RunFinishedEvent) -> Change:
        outcome = event.outcome
        cancelled = outcome is not None and getattr(outcome, "type", None) == "cancelled"
        return self.end_answer("cancelled" if cancelled else "done")

    def _on_run_error(self, event: agui.RunErrorEvent) -> Change:
        retryable = (event.metadata or {}).get("retryable") is True
        message = event.message or _("The agent failed without saying why.")
        return self.fail(message, code=event.code, retryable=retryable)

    def _on_truncated(self, event: StreamTruncated) -> Change:
        return self.cut_off(event.reason)

    def add_action(self, action: Action, turn: Turn | None) -> Change:
        """Attach an action to a given turn (history), or to the current answer when None."""
        return self.propose(action, turn)

    def apply_decision(self, result: DecisionResult) -> list[Change]:
        """Show a decision's outcome: the action's new state and its result events."""
        changes = super().apply_decision(result)
        if result.events:
            decoder = EventDecoder()
            events = [event for raw in result.events for event in decoder.decode_object(raw)]
            changes.extend(self.add_answer(events))
        return changes

    def add_answer(self, events: list[DecodedEvent]) -> list[Change]:
        """A finished assistant turn made of already decoded events (a decision, a voice tool)."""
        self.begin_answer()
        changes = [self.apply(event) for event in events]
        self.end_answer("done")
        return changes

    def add_tool_answer(
        self,
        tool_call_id: str,
        name: str,
        label: str,
        events: list[DecodedEvent],
        *,
        error: str | None = None,
    ) -> list[Change]:
        """A finished assistant turn for a tool run outside a chat run (a voice tool, §10.2):
        the tool by its label with ✓ (or ✗ and `error`), then what its events carry."""
        self.begin_answer()
        changes: list[Change] = [
            self.start_tool(tool_call_id, name, label),
            self.end_tool(tool_call_id, failed=bool(error), error=error or None),
        ]
        changes.extend(self.apply(event) for event in events)
        self.end_answer("done")
        return changes


def conversation_from_history(history: ThreadHistory) -> TalkieConversation:
    """Build the conversation of a stored thread through the same reducer as live runs."""
    conversation = TalkieConversation(history.thread.id)
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
        for event in _answer_events(message):
            conversation.apply(event)
        if message.incomplete:
            conversation.cut_off(_("The server stopped before it was finished."))
        else:
            conversation.end_answer("done")  # nothing when its own end (RUN_FINISHED) came
    for action in history.actions:
        _place_action(conversation, action, answered)
    return conversation


def _answer_events(message: HistoryMessage) -> list[DecodedEvent]:
    """What builds a stored answer: the events it streamed, where the server kept them (how
    it looked live, part by part), else its text and then its cards."""
    if not message.events:
        text = agui.TextMessageContentEvent(message_id=message.id, delta=message.content)
        return [text, *(CardReceived(card) for card in message.cards)]
    decoder = EventDecoder()
    events = [event for raw in message.events for event in decoder.decode_object(raw)]
    if message.incomplete:  # its end is the server's stop: said by the notice of a cut answer
        ends = (agui.RunErrorEvent, agui.RunFinishedEvent)
        events = [event for event in events if not isinstance(event, ends)]
    return events


def _place_action(
    conversation: TalkieConversation, action: Action, answered: dict[str, Turn]
) -> None:
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
