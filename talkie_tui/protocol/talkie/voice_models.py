"""The talkie/1 voice session (§10): signaling, consent words, tool results, usage."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from talkie_tui.core.sanitize import SafeStr
from talkie_tui.protocol.talkie.wire_model import WireModel


class Signaling(WireModel):
    """Where the SDP offer goes (§10.1); checked against `capabilities.voice.signalingHosts`."""

    type: str = "sdp-post"
    url: str


class ConsentWords(WireModel):
    """Words the server adds to the client's built-in confirm/refuse vocabularies (§10.1)."""

    confirm: list[SafeStr] = Field(default_factory=list)
    refuse: list[SafeStr] = Field(default_factory=list)


class VoiceSession(WireModel):
    """A voice session (§10.1): how to reach the speech provider, and its limits."""

    voice_session_id: str = Field(min_length=1)
    thread_id: str = Field(min_length=1)
    transport: str = "webrtc"
    event_protocol: str = "openai-realtime/1"
    signaling: Signaling
    client_secret: str = Field(min_length=1, repr=False)
    expires_at: str | None = None
    max_seconds: float | None = Field(default=None, gt=0)
    warn_seconds: float | None = Field(default=None, ge=0)
    locale: str | None = None
    labels: dict[str, SafeStr] = Field(default_factory=dict)
    consent: ConsentWords = Field(default_factory=ConsentWords)

    @field_validator("labels", mode="before")
    @classmethod
    def _only_string_labels(cls, value: object) -> dict[str, str]:
        if not isinstance(value, dict):
            return {}
        return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)}

    @field_validator("consent", mode="before")
    @classmethod
    def _consent_object(cls, value: object) -> object:
        return value if isinstance(value, dict) else {}


class VoiceToolResult(WireModel):
    """The answer to `POST voiceTool` (§10.2): the text for the model and AG-UI events."""

    ok: bool = True
    output: str = ""
    """Passed to the model unchanged (§10.2), so it is not cleaned here; never shown raw."""
    events: list[dict[str, Any]] = Field(default_factory=list)

    @field_validator("events", mode="before")
    @classmethod
    def _only_objects(cls, value: object) -> list[object]:
        return [e for e in value if isinstance(e, dict)] if isinstance(value, list) else []


class VoiceUsage(WireModel):
    """The answer to `POST voiceUsage` (§10.3)."""

    ok: bool = True
    remaining_seconds: float | None = None
