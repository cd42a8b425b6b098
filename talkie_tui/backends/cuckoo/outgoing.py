"""What a Cuckoo session sends and yields: the person's message on its way
(`CuckooOutgoing`, its idempotency key kept for a retry) and each step of the answer
(`CuckooUpdate`, with the push it folded in as `{type, data}` JSON)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from talkie_tui.backends.parts.files import Attachment
from talkie_tui.backends.session import Broken, OutgoingMessage, Recovered, StepOfAnswer
from talkie_tui.chat.conversation import Change
from talkie_tui.chat.turns import TextPart
from talkie_tui.protocol.cuckoo.files import check_count
from talkie_tui.protocol.cuckoo.models import Message
from talkie_tui.protocol.cuckoo.pushes import Push

__all__ = ["CuckooOutgoing", "CuckooUpdate", "push_wire"]


def push_wire(push: Push) -> str:
    """A push as one line of JSON in the socket's own form: `{"type", "data"}`."""
    data = push.model_dump(mode="json", exclude={"type"}, exclude_defaults=True)
    return json.dumps({"type": push.type, "data": data}, ensure_ascii=False, separators=(",", ":"))


class CuckooOutgoing(OutgoingMessage):
    """A message of the person on its way; re-sent, it keeps its idempotency key
    (`message_id`), so the hub stores it once. Its thread is the conversation."""

    def __init__(
        self,
        text: str,
        message_id: str,
        *,
        conversation_id: str | None = None,
        attachments: Sequence[Attachment] = (),
        reply_to: str | None = None,
        tap: tuple[str, str] | None = None,
    ) -> None:
        check_count(len(attachments))
        super().__init__(text, message_id, conversation_id)
        self.attachments = tuple(attachments)
        self.reply_to = reply_to
        self.tap = tap  # (source message id, button id): a button tapped, not text
        self.sent: Message | None = None  # the message as the hub stored it

    @property
    def accepted(self) -> bool:
        """The hub stored the message (`Backend.stop` stops the conversation's replies)."""
        return self.sent is not None

    @property
    def hub_message_id(self) -> str | None:
        """The hub's id of the message, once it was stored."""
        return self.sent.id if self.sent is not None else None


@dataclass(frozen=True, slots=True)
class CuckooUpdate(StepOfAnswer):
    """One step of a send: a push folded in (`push`), a change from the record, a loss or a
    recovery."""

    change: Change = None
    push: Push | None = None
    text_added: str | None = None
    broken: Broken | None = None
    recovered: Recovered | None = None

    @property
    def delta(self) -> str | None:
        """The text this step added to an agent's reply, when it added text."""
        return self.text_added if isinstance(self.change, TextPart) else None

    @property
    def wire(self) -> str | None:
        """The push as `{type, data}` JSON (None for a step that received none)."""
        return push_wire(self.push) if self.push is not None else None
