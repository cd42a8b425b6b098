"""What a voice call holds and how it reports: its parts, its status, its tasks.

`VoiceCall` (call.py) is the call's behaviour; this base keeps the state it works on and the
plumbing every part of it reports through: the status sent to the listener on every change, and
the call's own tasks, whose failures become notices.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Coroutine
from dataclasses import replace
from typing import Any

from talkie_tui.i18n import _
from talkie_tui.protocol.talkie.client import TalkieClient
from talkie_tui.protocol.talkie.models import Action
from talkie_tui.protocol.talkie.voice_models import VoiceSession
from talkie_tui.voice.audio import AudioSink, AudioSource
from talkie_tui.voice.call_updates import (
    CallState,
    CallStatus,
    CallUpdate,
    Listener,
    Notice,
    TalkMode,
)
from talkie_tui.voice.consent import ConsentWindow
from talkie_tui.voice.consent_classifier import ConsentWords
from talkie_tui.voice.rtc import RealtimePeer
from talkie_tui.voice.sound import AudioLevel
from talkie_tui.voice.tool_relay import ToolRelay
from talkie_tui.voice.usage import USAGE_INTERVAL, UsageReporter

__all__ = ["RELEASE_TAIL", "CallCore", "Clock"]

RELEASE_TAIL = 0.25
Clock = Callable[[], float]


class CallCore:
    """The state of one voice call and the plumbing it reports through."""

    def __init__(
        self,
        client: TalkieClient,
        *,
        microphone: AudioSource,
        speaker: AudioSink,
        listener: Listener,
        thread_id: str | None = None,
        locale: str | None = None,
        mode: TalkMode = "push_to_talk",
        allow_http_signaling: bool = False,
        clock: Clock = time.monotonic,
        usage_interval: float = USAGE_INTERVAL,
        release_tail: float = RELEASE_TAIL,
    ) -> None:
        self.client = client
        self.microphone = microphone
        self.speaker = speaker
        self.thread_id = thread_id
        self.locale = locale
        self.mode: TalkMode = mode
        self.session: VoiceSession | None = None
        self.peer: RealtimePeer | None = None
        self._listener = listener
        self._allow_http_signaling = allow_http_signaling
        self._clock = clock
        self._tools = ToolRelay(client, notify=self._emit)
        self._usage = UsageReporter(
            client, elapsed=lambda: self.elapsed, notify=self._emit, interval=usage_interval
        )
        self._release_tail = release_tail
        self._status = CallStatus("connecting", mode)
        self._started_at: float | None = None
        self._pressed_at: float | None = None
        self._last_press_started: float | None = None
        self._press_serial = 0
        self._response_in_flight = False
        self._answer_wanted = False
        self._held_for_consent = False
        self._window: ConsentWindow | None = None
        self._window_action: Action | None = None
        self._extra_words = ConsentWords()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._ended = False

    # --- what the UI reads -------------------------------------------------------------------

    @property
    def status(self) -> CallStatus:
        """The current status (also sent to the listener on every change)."""
        return replace(self._status, elapsed=self.elapsed)

    @property
    def elapsed(self) -> float:
        """Seconds since the provider accepted the call."""
        return 0.0 if self._started_at is None else self._clock() - self._started_at

    @property
    def level(self) -> AudioLevel:
        """The microphone level, for the meter."""
        return self.microphone.level

    @property
    def consent_window(self) -> ConsentWindow | None:
        """The consent window of the action being read out, if any."""
        return self._window

    def _resting_state(self) -> CallState:
        if self._window is not None and self._window.state == "open":
            return "consent"
        return "listening"

    def _set_state(self, state: CallState) -> None:
        self._status = replace(self._status, state=state)
        self._emit(self.status)

    def _emit(self, update: CallUpdate) -> None:
        # A broken listener (the screen) must not break the call itself.
        with contextlib.suppress(Exception):
            self._listener(update)

    def _spawn(self, coroutine: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and (error := task.exception()) is not None:
            message = getattr(error, "message", None) or f"{type(error).__name__}: {error}"
            self._emit(Notice(_("Voice: {error}").format(error=message), "error"))
