"""What hearing and answering share in one fake call: item order, the utterance, the tool call."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from talkie_tui.devserver.talkie.fake_voice.script import Line

__all__ = ["Conversation", "ToolCall", "new_id"]


def new_id(prefix: str) -> str:
    """Provider-style ids: `item_…`, `resp_…`, `call_…`, `event_…`."""
    return f"{prefix}_{secrets.token_hex(8)}"


@dataclass
class ToolCall:
    """A function call the model made, and the output the client sent for it (None: not yet)."""

    call_id: str
    line: Line
    output: str | None = None


@dataclass
class Conversation:
    """The state of the conversation that the call's hearing and its responses both use."""

    last_item: str | None = None
    """The newest conversation item: the `previous_item_id` of the next."""
    heard: Line | None = None
    """The last utterance, until a response answers it."""
    tool: ToolCall | None = None
    input_seconds: float = 0.0
    """Input audio committed since the last response.done (for its `usage`)."""
