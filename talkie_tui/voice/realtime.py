"""The `openai-realtime/1` events on the `oai-events` data channel: pure, no I/O.

Client events are built by small functions (only turn detection is ever changed by
`session.update`, §10.1). Server events are parsed into typed records; both the GA names and the
older beta names are accepted, since providers and SDKs still mix them. Parsing never raises:
anything unreadable becomes `ProviderError` or `Ignored`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from talkie_tui.core.sanitize import clean_text
from talkie_tui.i18n import _

__all__ = [
    "AssistantTranscript",
    "AssistantTranscriptDelta",
    "FunctionCall",
    "Ignored",
    "InputCleared",
    "InputCommitted",
    "OutputAudioCleared",
    "OutputAudioStarted",
    "OutputAudioStopped",
    "ProviderError",
    "RealtimeEvent",
    "ResponseCreated",
    "ResponseDone",
    "SessionReady",
    "SpeechStarted",
    "SpeechStopped",
    "UserTranscript",
    "cancel_response",
    "clear_input",
    "clear_output_audio",
    "commit_input",
    "create_response",
    "encode",
    "function_call_output",
    "parse_server_event",
    "turn_detection_update",
]

# The data channel carries at most 64 KiB per message (notes: aiortc max-message-size).
MAX_EVENT_BYTES = 64 * 1024
TurnDetection = Literal["push_to_talk", "server_vad"]


# --- client events ---------------------------------------------------------------------------


def turn_detection_update(
    mode: TurnDetection, *, create_response: bool = True, interrupt_response: bool = True
) -> dict[str, Any]:
    """`session.update` changing turn detection only (§10.1 forbids changing anything else)."""
    detection: dict[str, Any] | None = None
    if mode == "server_vad":
        detection = {
            "type": "server_vad",
            "create_response": create_response,
            "interrupt_response": interrupt_response,
        }
    return {
        "type": "session.update",
        "session": {"type": "realtime", "audio": {"input": {"turn_detection": detection}}},
    }


def clear_input() -> dict[str, Any]:
    """Drop whatever the provider has buffered from the microphone."""
    return {"type": "input_audio_buffer.clear"}


def commit_input() -> dict[str, Any]:
    """End the user's turn (push-to-talk released); transcription follows."""
    return {"type": "input_audio_buffer.commit"}


def create_response() -> dict[str, Any]:
    """Ask the model to answer now."""
    return {"type": "response.create"}


def cancel_response() -> dict[str, Any]:
    """Stop the response being generated (barge-in)."""
    return {"type": "response.cancel"}


def clear_output_audio() -> dict[str, Any]:
    """Stop the assistant's audio already on its way (WebRTC only; after `response.cancel`)."""
    return {"type": "output_audio_buffer.clear"}


def function_call_output(call_id: str, output: str) -> dict[str, Any]:
    """A tool result for the model; `output` is the server's text, unchanged (§10.2)."""
    return {
        "type": "conversation.item.create",
        "item": {"type": "function_call_output", "call_id": call_id, "output": output},
    }


def encode(event: dict[str, Any]) -> str:
    """The JSON text of a client event."""
    return json.dumps(event, ensure_ascii=False, separators=(",", ":"))


# --- server events ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SessionReady:
    """`session.created` or `session.updated`: the provider applied its configuration."""

    updated: bool


@dataclass(frozen=True, slots=True)
class SpeechStarted:
    """The provider heard the user start speaking."""

    item_id: str
    audio_start_ms: int | None = None


@dataclass(frozen=True, slots=True)
class SpeechStopped:
    """The provider heard the user stop speaking."""

    item_id: str


@dataclass(frozen=True, slots=True)
class InputCommitted:
    """The user's audio became a conversation item (its transcript follows)."""

    item_id: str


@dataclass(frozen=True, slots=True)
class InputCleared:
    """The provider dropped its buffered microphone audio."""


@dataclass(frozen=True, slots=True)
class UserTranscript:
    """The final transcript of what the user said."""

    item_id: str
    text: str


@dataclass(frozen=True, slots=True)
class AssistantTranscriptDelta:
    """A piece of what the assistant is saying."""

    response_id: str
    item_id: str
    delta: str


@dataclass(frozen=True, slots=True)
class AssistantTranscript:
    """The final transcript of one spoken assistant answer."""

    response_id: str
    item_id: str
    text: str


@dataclass(frozen=True, slots=True)
class FunctionCall:
    """The model asks for a tool; `arguments` is a JSON string, relayed unchanged."""

    call_id: str
    name: str
    arguments: str
    item_id: str = ""


@dataclass(frozen=True, slots=True)
class ResponseCreated:
    """A response started (one at a time)."""

    response_id: str


@dataclass(frozen=True, slots=True)
class ResponseDone:
    """A response ended; `has_audio` is False for a pure tool call."""

    response_id: str
    status: str
    has_audio: bool


@dataclass(frozen=True, slots=True)
class OutputAudioStarted:
    """The provider started sending assistant audio."""

    response_id: str


@dataclass(frozen=True, slots=True)
class OutputAudioStopped:
    """The provider has sent all of a response's audio (local playback may still go on)."""

    response_id: str


@dataclass(frozen=True, slots=True)
class OutputAudioCleared:
    """The assistant's audio was cut off (barge-in)."""

    response_id: str


@dataclass(frozen=True, slots=True)
class ProviderError:
    """An `error` event, or a message talkie could not read."""

    message: str
    code: str = ""


@dataclass(frozen=True, slots=True)
class Ignored:
    """An event talkie does not need (deltas of audio, rate limits…)."""

    type: str


RealtimeEvent = (
    SessionReady
    | SpeechStarted
    | SpeechStopped
    | InputCommitted
    | InputCleared
    | UserTranscript
    | AssistantTranscriptDelta
    | AssistantTranscript
    | FunctionCall
    | ResponseCreated
    | ResponseDone
    | OutputAudioStarted
    | OutputAudioStopped
    | OutputAudioCleared
    | ProviderError
    | Ignored
)

# GA name first, beta names after (notes §1.4).
_TRANSCRIPT_DELTA = {"response.output_audio_transcript.delta", "response.audio_transcript.delta"}
_TRANSCRIPT_DONE = {"response.output_audio_transcript.done", "response.audio_transcript.done"}
_AUDIO_CONTENT = {"audio", "output_audio"}


def _text(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    return value if isinstance(value, str) else ""


def _has_audio(response: dict[str, Any]) -> bool:
    output = response.get("output")
    if not isinstance(output, list):
        return False
    for item in output:
        content = item.get("content") if isinstance(item, dict) else None
        if isinstance(content, list) and any(
            isinstance(part, dict) and part.get("type") in _AUDIO_CONTENT for part in content
        ):
            return True
    return False


def _function_call(item: dict[str, Any]) -> FunctionCall | None:
    call_id, name = _text(item, "call_id"), _text(item, "name")
    if not call_id or not name:
        return None
    return FunctionCall(call_id, name, _text(item, "arguments") or "{}", _text(item, "id"))


def parse_server_event(message: str | bytes) -> RealtimeEvent:
    """One data-channel message as a typed event; never raises."""
    if len(message) > MAX_EVENT_BYTES:
        return ProviderError(_("The voice provider sent an event that is too large; ignored."))
    try:
        data = json.loads(message)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return ProviderError(_("The voice provider sent an unreadable event; ignored."))
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        return ProviderError(_("The voice provider sent an event without a type; ignored."))
    kind: str = data["type"]
    item_id, response_id = _text(data, "item_id"), _text(data, "response_id")
    if kind in ("session.created", "session.updated"):
        return SessionReady(updated=kind == "session.updated")
    if kind == "input_audio_buffer.speech_started":
        start = data.get("audio_start_ms")
        return SpeechStarted(item_id, start if isinstance(start, int) else None)
    if kind == "input_audio_buffer.speech_stopped":
        return SpeechStopped(item_id)
    if kind == "input_audio_buffer.committed":
        return InputCommitted(item_id)
    if kind == "input_audio_buffer.cleared":
        return InputCleared()
    if kind == "conversation.item.input_audio_transcription.completed":
        return UserTranscript(item_id, clean_text(_text(data, "transcript")).strip())
    if kind in _TRANSCRIPT_DELTA:
        return AssistantTranscriptDelta(response_id, item_id, clean_text(_text(data, "delta")))
    if kind in _TRANSCRIPT_DONE:
        return AssistantTranscript(response_id, item_id, clean_text(_text(data, "transcript")))
    if kind == "response.function_call_arguments.done":
        call = _function_call({**data, "id": item_id})
        return call or ProviderError(_("The voice provider asked for a tool without a name."))
    if kind == "response.output_item.done":
        item = data.get("item")
        if isinstance(item, dict) and item.get("type") == "function_call":
            call = _function_call(item)
            return call or ProviderError(_("The voice provider asked for a tool without a name."))
        return Ignored(kind)
    if kind in ("response.created", "response.done"):
        response = data.get("response")
        response = response if isinstance(response, dict) else {}
        rid = _text(response, "id")
        if kind == "response.created":
            return ResponseCreated(rid)
        return ResponseDone(rid, _text(response, "status") or "completed", _has_audio(response))
    if kind == "output_audio_buffer.started":
        return OutputAudioStarted(response_id)
    if kind == "output_audio_buffer.stopped":
        return OutputAudioStopped(response_id)
    if kind == "output_audio_buffer.cleared":
        return OutputAudioCleared(response_id)
    if kind == "error":
        error = data.get("error")
        error = error if isinstance(error, dict) else {}
        message = clean_text(_text(error, "message")) or _("The voice provider reported an error.")
        return ProviderError(message, clean_text(_text(error, "code") or _text(error, "type")))
    return Ignored(kind)
