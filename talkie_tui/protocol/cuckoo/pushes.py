"""What a hub pushes down the client socket (`notes/cuckoo.md` §1.4), as typed values.

A frame is `{"type", "data"}`. `parse_push` reads one: a known type whose data fits gives its
push, anything else gives None (an unknown type is the protocol growing, a malformed frame a
hub's bug: either is skipped, and REST still holds the record).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, ValidationError

from talkie_tui.core.sanitize import SafeStr
from talkie_tui.protocol.cuckoo.models import CuckooModel, Message, Time
from talkie_tui.protocol.cuckoo.schedules import SchedulePush

__all__ = [
    "ActivityPush",
    "AgentStatusPush",
    "DeliveryPush",
    "MessageDeltaPush",
    "MessagePush",
    "Push",
    "ReadPush",
    "ReadyPush",
    "SchedulePush",
    "parse_push",
]

MessageEvent = Literal["message.created", "message.started", "message.completed"]


class ReadyPush(CuckooModel):
    """`ready`: the socket is up for this person (sent first)."""

    type: Literal["ready"] = "ready"
    user_id: str = ""


class MessagePush(CuckooModel):
    """A message made (`message.created`), a stream begun (`message.started`) or ended
    (`message.completed`): the message whole as it stands."""

    type: MessageEvent
    conversation_id: str = Field(min_length=1)
    message: Message


class MessageDeltaPush(CuckooModel):
    """`message.delta`: text to append to a streaming message."""

    type: Literal["message.delta"] = "message.delta"
    conversation_id: str = Field(min_length=1)
    message_id: str = Field(min_length=1)
    text: SafeStr


class DeliveryPush(CuckooModel):
    """`delivery.updated`: whether the person's message reached its agent."""

    type: Literal["delivery.updated"] = "delivery.updated"
    conversation_id: str = Field(min_length=1)
    message_id: str = Field(min_length=1)
    delivery_status: str = Field(min_length=1)


class ActivityPush(CuckooModel):
    """`activity`: an agent thinks, works (with a label) or is idle, until `expires_at`."""

    type: Literal["activity"] = "activity"
    conversation_id: str = Field(min_length=1)
    agent_id: str = Field(min_length=1)
    state: str = Field(min_length=1)
    label: SafeStr | None = None
    expires_at: Time = None


class ReadPush(CuckooModel):
    """`conversation.read`: the person read up to a message (on any of their devices)."""

    type: Literal["conversation.read"] = "conversation.read"
    conversation_id: str = Field(min_length=1)
    read_up_to: str = Field(min_length=1)


class AgentStatusPush(CuckooModel):
    """`agent.status`: an agent connected, idle, unreachable (or none)."""

    type: Literal["agent.status"] = "agent.status"
    agent_id: str = Field(min_length=1)
    status: str = Field(min_length=1)


Push = (
    ReadyPush
    | MessagePush
    | MessageDeltaPush
    | DeliveryPush
    | ActivityPush
    | ReadPush
    | AgentStatusPush
    | SchedulePush
)

_MODELS: dict[str, type[Push]] = {
    "ready": ReadyPush,
    "message.created": MessagePush,
    "message.started": MessagePush,
    "message.completed": MessagePush,
    "message.delta": MessageDeltaPush,
    "delivery.updated": DeliveryPush,
    "activity": ActivityPush,
    "conversation.read": ReadPush,
    "agent.status": AgentStatusPush,
    "schedule.changed": SchedulePush,
}


def parse_push(frame: str | bytes | Mapping[str, Any]) -> Push | None:
    """One frame of the client socket as its push; None when it is unknown or malformed."""
    if isinstance(frame, str | bytes):
        try:
            frame = json.loads(frame)
        except (ValueError, RecursionError):
            return None
    if not isinstance(frame, Mapping):
        return None
    kind, data = frame.get("type"), frame.get("data")
    model = _MODELS.get(kind) if isinstance(kind, str) else None
    if model is None or not isinstance(data, Mapping):
        return None
    try:
        return model.model_validate({**data, "type": kind})
    except (ValidationError, RecursionError):
        return None
