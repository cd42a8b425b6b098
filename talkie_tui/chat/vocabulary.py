"""The display vocabulary of every protocol: what the conversation's parts carry, and what a
backend's summaries are made of.

A card and its blocks, an action with its confirmation policy and a decision's outcome, a
suggested link, a thread in the list, the signed-in user and their usage meters: the UI renders
these whatever the server speaks. They are talkie/1's card and action models
(`talkie_tui.protocol.talkie.models`, validated as they are parsed, server text cleaned); the
reducers of other protocols build them from their own wire events. The UI imports them from here,
never from `protocol/` (an import-linter contract says so).
"""

from __future__ import annotations

from talkie_tui.protocol.talkie.cards import (
    BadgeBlock,
    Block,
    Card,
    FieldsBlock,
    FileBlock,
    HeadingBlock,
    LinkBlock,
    ListBlock,
    TextBlock,
    UnknownBlock,
)
from talkie_tui.protocol.talkie.models import (
    Action,
    ActionStatus,
    ConfirmPolicy,
    DecisionResult,
    OpenLink,
    Thread,
    UsageMeter,
    User,
)

__all__ = [
    "Action",
    "ActionStatus",
    "BadgeBlock",
    "Block",
    "Card",
    "ConfirmPolicy",
    "DecisionResult",
    "FieldsBlock",
    "FileBlock",
    "HeadingBlock",
    "LinkBlock",
    "ListBlock",
    "OpenLink",
    "TextBlock",
    "Thread",
    "UnknownBlock",
    "UsageMeter",
    "User",
]
