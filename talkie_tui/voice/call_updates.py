"""What a voice call reports: its status, what was said, tools, consent, decisions, notices.

`VoiceCall` (call.py) sends each of these, a `CallUpdate`, through one callback (a `Listener`);
the UI turns them into the voice bar, turns of the conversation and notifications. They are plain
values: importing this module loads no part of the voice stack (aiortc, PyAV, audio devices).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from talkie_tui.protocol.talkie.events import DecodedEvent
from talkie_tui.protocol.talkie.models import DecisionResult
from talkie_tui.voice.consent import Decision, Heard

__all__ = [
    "AssistantSaid",
    "CallEnded",
    "CallState",
    "CallStatus",
    "CallUpdate",
    "ConsentHeard",
    "Listener",
    "Notice",
    "TalkMode",
    "ToolFinished",
    "ToolStarted",
    "UserSaid",
    "VoiceDecided",
]

CallState = Literal["connecting", "listening", "talking", "assistant_speaking", "consent", "ended"]
TalkMode = Literal["push_to_talk", "hands_free"]


@dataclass(frozen=True, slots=True)
class CallStatus:
    """What the voice bar shows."""

    state: CallState
    mode: TalkMode
    elapsed: float = 0.0
    remaining: float | None = None
    consent_deadline: float | None = None
    """Monotonic time when the open consent window closes, if one is open."""
    consent_action: str | None = None


@dataclass(frozen=True, slots=True)
class UserSaid:
    """A final transcript of the person (already stored in the thread)."""

    item_id: str
    text: str


@dataclass(frozen=True, slots=True)
class AssistantSaid:
    """A final transcript of the assistant (already stored in the thread)."""

    item_id: str
    text: str


@dataclass(frozen=True, slots=True)
class ToolStarted:
    """A tool the provider asked for is running on the server."""

    call_id: str
    name: str
    label: str


@dataclass(frozen=True, slots=True)
class ToolFinished:
    """A tool ended: its AG-UI events (cards, actions) go into the thread like in chat."""

    call_id: str
    events: list[DecodedEvent] = field(default_factory=list)
    error: str | None = None


@dataclass(frozen=True, slots=True)
class ConsentHeard:
    """What the consent window made of an utterance (for a one-line explanation)."""

    heard: Heard


@dataclass(frozen=True, slots=True)
class VoiceDecided:
    """An action was decided by voice; `result` is the server's answer."""

    decision: Decision
    result: DecisionResult


@dataclass(frozen=True, slots=True)
class Notice:
    """Something to tell the person (a warning, the provider notice, an error)."""

    text: str
    level: Literal["info", "warning", "error"] = "info"
    kind: Literal["provider", "general"] = "general"
    """"provider": where the voice audio goes (said once per session); behaviour follows the
    kind, never the words, which are in the UI's language."""


@dataclass(frozen=True, slots=True)
class CallEnded:
    """The call is over; `reason` says why in words."""

    reason: str


CallUpdate = (
    CallStatus
    | UserSaid
    | AssistantSaid
    | ToolStarted
    | ToolFinished
    | ConsentHeard
    | VoiceDecided
    | Notice
    | CallEnded
)
Listener = Callable[[CallUpdate], None]
