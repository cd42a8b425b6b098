"""What a Minara session sends and yields: the turn on its way (`MinaraOutgoing`, its
`client_message_id` kept for a retry, and the body of `POST /v1/chat/stream`) and each step of
the answer (`MinaraUpdate`, with the `{type, data}` event it folded in)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from talkie_tui.backends.parts.files import Attachment
from talkie_tui.backends.parts.models import ReasoningEffort
from talkie_tui.backends.session import Broken, OutgoingMessage, Recovered, StepOfAnswer
from talkie_tui.chat.conversation import Change
from talkie_tui.chat.turns import TextPart
from talkie_tui.core.sanitize import clean_text
from talkie_tui.protocol.minara.files import check_count
from talkie_tui.protocol.minara.models import AttachmentRef, TurnRequest

__all__ = ["MinaraOutgoing", "MinaraUpdate", "new_message_id"]


def new_message_id() -> str:
    """A fresh `client_message_id`."""
    return f"m_{uuid.uuid4().hex}"


class MinaraOutgoing(OutgoingMessage):
    """A message on its way as a Minara turn; re-sent, it keeps its `client_message_id`. Its
    thread is the gateway's session (the gateway's word once it accepted the turn)."""

    def __init__(
        self,
        text: str,
        message_id: str,
        *,
        session_id: str | None = None,
        attachments: Sequence[Attachment] = (),
        model: str | None = None,
        reasoning_effort: ReasoningEffort | None = None,
        voice_input_key: str | None = None,
    ) -> None:
        check_count(len(attachments))
        super().__init__(text, message_id, session_id)
        self.attachments = tuple(attachments)
        self.model = model
        self.reasoning_effort = reasoning_effort
        self.voice_input_key = voice_input_key
        self.delivered = False  # the gateway accepted the turn

    @property
    def accepted(self) -> bool:
        """The gateway accepted the turn (`Backend.stop` interrupts the session's turn)."""
        return self.delivered

    def request(self) -> TurnRequest:
        """The body of `POST /v1/chat/stream`."""
        return TurnRequest(
            message=self.text,
            session_id=self.thread_id,
            attachments=tuple(
                AttachmentRef(
                    key=a.key,
                    filename=a.filename,
                    media_type=a.media_type,
                    size=a.size,
                    kind=a.kind,
                )
                for a in self.attachments
            ),
            model=self.model,
            reasoning_effort=self.reasoning_effort,
            voice_input_key=self.voice_input_key,
            client_message_id=self.message_id,
        )


@dataclass(frozen=True, slots=True)
class MinaraUpdate(StepOfAnswer):
    """One step of a send: the event received (with its seq), or a loss, or a recovery."""

    change: Change = None
    event: Mapping[str, Any] | None = None
    seq: int | None = None
    broken: Broken | None = None
    recovered: Recovered | None = None

    @property
    def delta(self) -> str | None:
        """The text this step appended, when it appended text."""
        event = self.event
        if not isinstance(self.change, TextPart) or event is None:
            return None
        data = event.get("data")
        text = data.get("text") if isinstance(data, Mapping) else None
        # The reducer appended exactly this (the part's chunks may have been joined since).
        return clean_text(text) if isinstance(text, str) and text else None

    @property
    def wire(self) -> str | None:
        """The `{type, data}` event as one JSON line (None for a loss or a recovery)."""
        if self.event is None:
            return None
        return json.dumps(self.event, ensure_ascii=False, separators=(",", ":"))
