"""A Minara conversation reduced to what it shows, to compare live turns with rebuilt ones."""

from __future__ import annotations

from typing import Any

from talkie_tui.backends.minara.reducer import MinaraConversation
from talkie_tui.chat.turns import (
    InterjectionPart,
    Part,
    QuestionPart,
    TextPart,
    TodoPart,
    ToolPart,
    UiBlockPart,
)


def _shape(part: Part) -> tuple[Any, ...]:
    """What a part shows, without the ids the reducer makes up."""
    if isinstance(part, TextPart):
        return ("text", part.text, part.done)
    if isinstance(part, ToolPart):
        return ("tool", part.tool_call_id, part.name, part.label, part.state, part.error)
    if isinstance(part, UiBlockPart):
        return ("ui_block", part.block_id, part.kind, part.data)
    if isinstance(part, TodoPart):
        return ("todos", tuple(part.items))
    if isinstance(part, QuestionPart):
        return ("question", part.question_id, part.kind, tuple(part.questions), part.outcome)
    if isinstance(part, InterjectionPart):
        return ("interjection", part.text)
    return (type(part).__name__,)


def shapes(conversation: MinaraConversation) -> list[tuple[Any, ...]]:
    """The turns as (role, state, text, parts) for comparison."""
    return [
        (t.role, t.state, t.text, tuple(_shape(p) for p in t.parts)) for t in conversation.turns
    ]
