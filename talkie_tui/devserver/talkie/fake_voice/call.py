"""One call to the fake provider: an aiortc answerer speaking `openai-realtime/1` (GA names).

The "model" is a script (`script.py`): detected speech takes the next line as its transcript;
a response (`responses.py`) either calls the line's tool or speaks. The session is locked by the
server: a `session.update` may change turn detection and nothing else.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import deque
from collections.abc import Callable, Coroutine
from typing import Any

from aiortc import RTCDataChannel, RTCPeerConnection, RTCSessionDescription
from aiortc.mediastreams import MediaStreamTrack

from talkie_tui.devserver.talkie.fake_voice.audio import (
    OutputTrack,
    SpeechDetector,
    rms,
    rms_threshold,
)
from talkie_tui.devserver.talkie.fake_voice.conversation import Conversation, new_id
from talkie_tui.devserver.talkie.fake_voice.responses import Responder
from talkie_tui.devserver.talkie.fake_voice.script import Script
from talkie_tui.devserver.talkie.voice import VoiceGrant
from talkie_tui.voice.ice import loopback_ice, rtc_configuration
from talkie_tui.voice.tracks import audio_frames

logger = logging.getLogger(__name__)

EVENTS_CHANNEL = "oai-events"
MODEL = "gpt-realtime-fake"
# A commit needs this much buffered audio (the real API refuses < 100 ms), and an utterance
# this much loud audio to count as speech at all.
MIN_COMMIT_MS = 100.0
MIN_SPEECH_MS = 60.0
DEFAULT_TURN_DETECTION: dict[str, Any] = {
    "type": "server_vad",
    "threshold": 0.5,
    "prefix_padding_ms": 300,
    "silence_duration_ms": 500,
    "idle_timeout_ms": None,
    "create_response": True,
    "interrupt_response": True,
}
TURN_DETECTION_TYPES = ("server_vad", "semantic_vad")
FLUSH_SECONDS = 0.5
EVENT_LOG_SIZE = 500


class SessionLocked(ValueError):
    """A session.update tried to change something other than turn detection."""


class FakeCall:
    """The provider side of one WebRTC call."""

    def __init__(
        self,
        grant: VoiceGrant,
        script: Script,
        *,
        on_closed: Callable[[FakeCall], None] | None = None,
    ) -> None:
        self.id = new_id("rtc")
        self.grant = grant
        self.script = script
        # Event types, newest last, for the test-mode listing (bounded: calls may run long).
        self.sent: deque[str] = deque(maxlen=EVENT_LOG_SIZE)
        self.received: deque[str] = deque(maxlen=EVENT_LOG_SIZE)
        self._on_closed = on_closed
        self._pc = RTCPeerConnection(configuration=rtc_configuration())
        self._out = OutputTrack()
        self._channel: RTCDataChannel | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._session_id = new_id("sess")
        self._turn_detection: dict[str, Any] | None = dict(DEFAULT_TURN_DETECTION)
        self._detector = SpeechDetector(silence_ms=DEFAULT_TURN_DETECTION["silence_duration_ms"])
        self._audio_ms = 0.0  # all input audio heard since the call started
        self._buffer_ms = 0.0  # input audio since the last commit or clear
        self._buffer_loud_ms = 0.0
        self._vad_item: str | None = None
        self._conversation = Conversation()
        self._responder = Responder(
            grant,
            self._conversation,
            self._out,
            send=self._send,
            error=self._error,
            spawn=self._spawn,
        )
        self._closed = False

    # --- signalling --------------------------------------------------------------------------

    async def answer(self, offer_sdp: str) -> str:
        """Take the client's SDP offer; returns the answer (ICE on 127.0.0.1 only)."""
        pc = self._pc
        pc.on("datachannel", self._on_datachannel)
        pc.on("track", self._on_track)
        pc.on("connectionstatechange", self._on_connection_state)
        # Added before the offer is applied: aiortc then reuses the offered audio transceiver.
        pc.addTrack(self._out)
        with loopback_ice():
            await pc.setRemoteDescription(RTCSessionDescription(sdp=offer_sdp, type="offer"))
            await pc.setLocalDescription(await pc.createAnswer())
        return pc.localDescription.sdp

    async def close(self, reason: str | None = None) -> None:
        """Hang up; with a reason the client is told why first (an `error` event)."""
        if self._closed:
            return
        self._closed = True
        if reason is not None:
            self._error("session_expired", reason, error_type="invalid_request_error")
            await self._flush_events()
        # This may itself run as one of the call's tasks (after the client hung up).
        others = [task for task in self._tasks if task is not asyncio.current_task()]
        for task in others:
            task.cancel()
        self._out.stop()
        # Shielded: a cancelled waiter would cancel the future aiortc resolves when closed.
        await asyncio.shield(self._pc.close())
        await asyncio.gather(*others, return_exceptions=True)
        if self._on_closed is not None:
            self._on_closed(self)

    async def _flush_events(self) -> None:
        # Closing aborts the SCTP association, dropping events not yet handed to it.
        channel = self._channel
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(FLUSH_SECONDS):
                while channel is not None and channel.readyState == "open":
                    if channel.bufferedAmount == 0:
                        await asyncio.sleep(0.05)  # let the queued transmit run
                        return
                    await asyncio.sleep(0.01)

    def describe(self) -> dict[str, Any]:
        """The call's state for the test-mode inspection endpoint."""
        return {
            "callId": self.id,
            "voiceSessionId": self.grant.voice_session_id,
            "connectionState": self._pc.connectionState,
            "turnDetection": self._turn_detection,
            "scriptLeft": len(self.script),
            # What the input buffer holds now: a test "speaks" until the provider has heard it.
            "bufferMs": round(self._buffer_ms),
            "bufferLoudMs": round(self._buffer_loud_ms),
            "received": list(self.received),
            "sent": list(self.sent),
        }

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.error("fake voice call %s: task failed", self.id, exc_info=task.exception())

    def _on_connection_state(self) -> None:
        if self._pc.connectionState in ("failed", "closed") and not self._closed:
            self._spawn(self.close())

    # --- the data channel --------------------------------------------------------------------

    def _on_datachannel(self, channel: RTCDataChannel) -> None:
        if channel.label != EVENTS_CHANNEL:
            logger.info("fake voice call %s: ignoring data channel %r", self.id, channel.label)
            return
        self._channel = channel
        channel.on("message", self._on_message)
        self._send({"type": "session.created", "session": self._session_json()})

    def _send(self, event: dict[str, Any]) -> None:
        event = {"event_id": new_id("event"), **event}
        # Function calls are logged with their tool, so a test's failure says which was asked.
        name = event.get("name")
        self.sent.append(f"{event['type']} {name}" if isinstance(name, str) else event["type"])
        channel = self._channel
        if channel is not None and channel.readyState == "open":
            channel.send(json.dumps(event, ensure_ascii=False))

    def _error(
        self,
        code: str,
        message: str,
        *,
        error_type: str = "invalid_request_error",
        event_id: str | None = None,
    ) -> None:
        self._send(
            {
                "type": "error",
                "error": {
                    "type": error_type,
                    "code": code,
                    "message": message,
                    "param": None,
                    "event_id": event_id,
                },
            }
        )

    def _on_message(self, message: str | bytes) -> None:
        try:
            event = json.loads(message)
        except (UnicodeDecodeError, json.JSONDecodeError):
            self._error("invalid_json", "The event is not valid JSON.")
            return
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            self._error("invalid_event", "An event is a JSON object with a `type`.")
            return
        kind = event["type"]
        self.received.append(kind)
        handler = self._handlers().get(kind)
        if handler is None:
            self._error(
                "unknown_event_type",
                f"Unsupported client event type: {kind!r}.",
                event_id=event.get("event_id"),
            )
            return
        handler(event)

    def _handlers(self) -> dict[str, Callable[[dict[str, Any]], None]]:
        return {
            "session.update": self._session_update,
            "input_audio_buffer.clear": self._buffer_clear,
            "input_audio_buffer.commit": self._buffer_commit,
            "response.create": self._responder.on_create,
            "response.cancel": self._responder.on_cancel,
            "output_audio_buffer.clear": self._responder.on_output_clear,
            "conversation.item.create": self._item_create,
        }

    # --- session -----------------------------------------------------------------------------

    def _session_json(self) -> dict[str, Any]:
        audio_format = {"type": "audio/pcm", "rate": 24000}
        return {
            "type": "realtime",
            "object": "realtime.session",
            "id": self._session_id,
            "model": MODEL,
            "output_modalities": ["audio"],
            "instructions": self.grant.instructions,
            "tools": self.grant.tools,
            "tool_choice": "auto",
            "max_output_tokens": "inf",
            "audio": {
                "input": {
                    "format": audio_format,
                    "transcription": {"model": "fake-transcribe", "language": self.grant.locale},
                    "noise_reduction": None,
                    "turn_detection": self._turn_detection,
                },
                "output": {"format": audio_format, "voice": "alloy", "speed": 1.0},
            },
        }

    def _session_update(self, event: dict[str, Any]) -> None:
        session = event.get("session")
        try:
            if not isinstance(session, dict):
                raise SessionLocked("session.update needs a `session` object.")
            wanted = _wanted_turn_detection(session, self._session_json())
        except SessionLocked as exc:
            self._error("session_locked", str(exc), event_id=event.get("event_id"))
            return
        if wanted is not _UNCHANGED:
            self._set_turn_detection(wanted)
        self._send({"type": "session.updated", "session": self._session_json()})

    def _set_turn_detection(self, wanted: dict[str, Any] | None) -> None:
        self._turn_detection = None if wanted is None else {**DEFAULT_TURN_DETECTION, **wanted}
        silence = (self._turn_detection or DEFAULT_TURN_DETECTION)["silence_duration_ms"]
        self._detector = SpeechDetector(silence_ms=float(silence), min_speech_ms=MIN_SPEECH_MS)
        self._vad_item = None

    # --- hearing -----------------------------------------------------------------------------

    def _on_track(self, track: MediaStreamTrack) -> None:
        if track.kind == "audio":
            self._spawn(self._listen(track))

    async def _listen(self, track: MediaStreamTrack) -> None:
        # Always drained: aiortc's receive queue is unbounded.
        async for frame in audio_frames(track):
            ms = 1000.0 * frame.samples / frame.sample_rate
            self._hear(rms(frame.to_ndarray()), ms)

    def _hear(self, level: float, ms: float) -> None:
        self._audio_ms += ms
        self._buffer_ms += ms
        settings = self._turn_detection or DEFAULT_TURN_DETECTION
        loud = level >= rms_threshold(float(settings["threshold"]))
        if loud:
            self._buffer_loud_ms += ms
        if self._turn_detection is None:
            return  # push-to-talk: the client's commit ends the turn
        change = self._detector.feed(loud, ms)
        if change == "started":
            self._speech_started()
        elif change == "stopped":
            self._speech_stopped()

    def _speech_started(self) -> None:
        assert self._turn_detection is not None
        self._vad_item = new_id("item")
        start = max(0.0, self._audio_ms - self._detector.loud_ms)
        self._send(
            {
                "type": "input_audio_buffer.speech_started",
                "audio_start_ms": round(start),
                "item_id": self._vad_item,
            }
        )
        if self._turn_detection.get("interrupt_response") and self._responder.active is not None:
            self._responder.cancel("turn_detected")

    def _speech_stopped(self) -> None:
        assert self._turn_detection is not None
        item_id = self._vad_item or new_id("item")
        self._vad_item = None
        end = self._audio_ms - self._detector.quiet_ms
        self._send(
            {
                "type": "input_audio_buffer.speech_stopped",
                "audio_end_ms": round(end),
                "item_id": item_id,
            }
        )
        heard = self._commit(item_id, speech=True)
        if heard and self._turn_detection.get("create_response") and self._responder.active is None:
            self._responder.start()

    def _buffer_clear(self, event: dict[str, Any]) -> None:
        self._buffer_ms = self._buffer_loud_ms = 0.0
        self._detector.reset()
        self._vad_item = None
        self._send({"type": "input_audio_buffer.cleared"})

    def _buffer_commit(self, event: dict[str, Any]) -> None:
        if self._buffer_ms < MIN_COMMIT_MS:
            self._error(
                "input_audio_buffer_commit_empty",
                "Error committing input audio buffer: buffer too small. Expected at least "
                f"{MIN_COMMIT_MS:g}ms of audio, but buffer only has {self._buffer_ms:.2f}ms "
                "of audio.",
                event_id=event.get("event_id"),
            )
            return
        self._detector.reset()
        self._commit(new_id("item"), speech=self._buffer_loud_ms >= MIN_SPEECH_MS)

    def _commit(self, item_id: str, *, speech: bool) -> bool:
        """Turn the buffer into a user item; speech takes the next script line as transcript."""
        seconds = round(self._buffer_ms / 1000.0, 3)
        conversation = self._conversation
        conversation.input_seconds += seconds
        self._buffer_ms = self._buffer_loud_ms = 0.0
        previous, conversation.last_item = conversation.last_item, item_id
        self._send(
            {
                "type": "input_audio_buffer.committed",
                "previous_item_id": previous,
                "item_id": item_id,
            }
        )
        item = {
            "id": item_id,
            "object": "realtime.item",
            "type": "message",
            "role": "user",
            "status": "completed",
            "content": [{"type": "input_audio", "transcript": None}],
        }
        self._send({"type": "conversation.item.added", "previous_item_id": previous, "item": item})
        self._send({"type": "conversation.item.done", "previous_item_id": previous, "item": item})
        line = self.script.next_line() if speech else None
        self._send(
            {
                "type": "conversation.item.input_audio_transcription.completed",
                "item_id": item_id,
                "content_index": 0,
                "transcript": line.user if line else "",
                "usage": {"type": "duration", "seconds": seconds},
            }
        )
        if line is not None:
            # A new utterance replaces one that was never answered (and its pending tool call).
            conversation.heard, conversation.tool = line, None
        return line is not None

    # --- conversation items ------------------------------------------------------------------

    def _item_create(self, event: dict[str, Any]) -> None:
        item = event.get("item")
        if not isinstance(item, dict) or item.get("type") not in (
            "function_call_output",
            "message",
        ):
            self._error(
                "invalid_item",
                "conversation.item.create accepts function_call_output and message items.",
                event_id=event.get("event_id"),
            )
            return
        if item["type"] == "function_call_output":
            call_id, output = item.get("call_id"), item.get("output")
            tool = self._conversation.tool
            if tool is None or call_id != tool.call_id or not isinstance(output, str):
                self._error(
                    "invalid_call_id",
                    f"No function call {call_id!r} is waiting for its output.",
                    event_id=event.get("event_id"),
                )
                return
            tool.output = output
        stored = {"object": "realtime.item", "status": "completed", **item}
        stored.setdefault("id", new_id("item"))
        conversation = self._conversation
        previous, conversation.last_item = conversation.last_item, stored["id"]
        self._send(
            {"type": "conversation.item.added", "previous_item_id": previous, "item": stored}
        )
        self._send({"type": "conversation.item.done", "previous_item_id": previous, "item": stored})


_UNCHANGED: Any = object()
_TURN_DETECTION_KEYS = frozenset(DEFAULT_TURN_DETECTION) | {"eagerness"}


def _wanted_turn_detection(session: dict[str, Any], current: dict[str, Any]) -> Any:
    """The turn detection a session.update asks for (GA or beta shape), or _UNCHANGED.

    Raises SessionLocked when the update would change anything else; fields repeated with
    their current value are tolerated.
    """
    if session.get("type", "realtime") != "realtime":
        raise SessionLocked("Only `realtime` sessions are supported.")
    wanted: Any = _UNCHANGED
    rest = {key: value for key, value in session.items() if key != "type"}
    if "turn_detection" in rest:  # the beta shape
        wanted = rest.pop("turn_detection")
    audio_input = (
        rest.get("audio", {}).get("input", {}) if isinstance(rest.get("audio"), dict) else {}
    )
    if isinstance(audio_input, dict) and "turn_detection" in audio_input:
        wanted = audio_input["turn_detection"]
        audio_input = {key: value for key, value in audio_input.items() if key != "turn_detection"}
        rest["audio"] = {**rest["audio"], "input": audio_input}
    changed = _changed_paths(rest, current)
    if changed:
        raise SessionLocked(
            "This session is locked by the server: only audio.input.turn_detection may change "
            f"(also asked to change: {', '.join(changed)})."
        )
    if wanted is _UNCHANGED or wanted is None:
        return wanted
    if not isinstance(wanted, dict) or wanted.get("type") not in TURN_DETECTION_TYPES:
        raise SessionLocked("turn_detection must be null or of type server_vad or semantic_vad.")
    unknown = sorted(set(wanted) - _TURN_DETECTION_KEYS)
    if unknown:
        raise SessionLocked(f"Unknown turn_detection fields: {', '.join(unknown)}.")
    threshold = wanted.get("threshold", 0.5)
    if not isinstance(threshold, int | float) or not 0 <= threshold <= 1:
        raise SessionLocked("turn_detection.threshold must be between 0 and 1.")
    return wanted


def _changed_paths(wanted: Any, current: Any, path: str = "session") -> list[str]:
    if isinstance(wanted, dict) and isinstance(current, dict):
        changed = []
        for key, value in wanted.items():
            changed += _changed_paths(value, current.get(key, _UNCHANGED), f"{path}.{key}")
        return changed
    if wanted == {} or wanted == current:
        return []
    return [path]
