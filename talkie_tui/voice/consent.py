"""The §10.4 voice-consent window: a pure state machine around the classifier.

Nothing here touches audio, the network, a clock or an event loop. The caller feeds in
provider events and timestamps (any monotonic clock, in seconds) and gets back at most one
`Decision` per window, which it then sends as `POST decision` (method "voice" or "button").
Each final transcript is judged by `classify` (`consent_classifier.py`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, Literal

from talkie_tui.voice.consent_classifier import ConsentWords, Verdict, classify

__all__ = [
    "DEFAULT_TIMEOUT",
    "ClosedReason",
    "ConsentWindow",
    "Decision",
    "Heard",
    "IgnoredReason",
    "Method",
    "Outcome",
    "WindowState",
]

Outcome = Literal["confirm", "cancel"]
Method = Literal["voice", "button"]
WindowState = Literal["waiting_for_assistant", "waiting_for_playback", "open", "closed"]
ClosedReason = Literal["decided", "non_decisive", "timeout", "voice_not_allowed", "aborted"]
IgnoredReason = Literal["closed", "duplicate", "not_in_window", "unknown_item", "empty"]

DEFAULT_TIMEOUT: Final = 15.0  # seconds of silence after which voice gives up (notes §1.6)
NON_DECISIVE_LIMIT: Final = 2  # §10.4: "after two such utterances the voice window closes"


@dataclass(frozen=True)
class Decision:
    """The one decision a window produces; the caller sends it as `POST decision`."""

    action_id: str
    outcome: Outcome
    method: Method
    transcript: str | None = None


@dataclass(frozen=True)
class Heard:
    """The last final transcript the window received, and what it made of it (for the UI)."""

    item_id: str
    transcript: str
    at: float
    verdict: Verdict | None = None  # None when the transcript was ignored
    ignored: IgnoredReason | None = None


@dataclass
class _Item:
    """A user utterance the provider announced (`input_audio_buffer.speech_started`)."""

    counts: bool  # its speech started while the window was open
    handled: bool = False  # its final transcript has arrived


class ConsentWindow:
    """The §10.4 voice-consent window for one pending action.

    Lifecycle: waiting_for_assistant → (assistant stopped) → waiting_for_playback →
    (local playback drained) → open → closed. The two openers may come in either order, but a
    drain counts only if it happened after the assistant last started speaking. If the assistant
    speaks again while the window is open, the window goes back to waiting (nothing said over the
    assistant counts) and reopens when it has finished; the non-decisive count and the items
    heard are kept, and the silence timer restarts.

    Which utterances count: only those whose `speech_started` came while the window was open. A
    transcript for an item whose start the window never saw is ignored (`unknown_item`): nothing
    proves it began inside the window, and with server VAD every item announces its start. An
    item that counts may still decide while the window is paused, since it was said inside the
    window; nothing decides once the window is closed. Empty transcripts (noise) are ignored.

    Every event takes the caller's time `t` so that events form one uniform stream; only the
    opening and speech-start times change behaviour (eligibility and the silence timer).

    Exactly one `Decision` ever comes out: the first of a decisive utterance and a button press.
    The window closes before a decision is returned, so a repeated transcript cannot decide
    again. The button keeps working after voice has closed (two non-decisive utterances, timeout,
    abort), because §10.4 leaves the action waiting for it.
    """

    def __init__(
        self,
        action_id: str,
        *,
        keyword: str | None = None,
        methods: Iterable[str] = ("button", "voice"),
        extra: ConsentWords | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
    ) -> None:
        self.action_id = action_id
        self.keyword = keyword if keyword and keyword.strip() else None
        self.methods = tuple(methods)
        self.extra = extra
        self.timeout = timeout
        self.closed_reason: ClosedReason | None = None
        self.opened_at: float | None = None
        self.non_decisive_count = 0
        self.decision: Decision | None = None
        self.last_heard: Heard | None = None
        self._assistant_speaking = False
        self._assistant_spoke = False  # since this window exists
        self._assistant_done = False
        self._drained = False
        self._open = False
        self._last_speech_at: float | None = None
        self._items: dict[str, _Item] = {}
        if "voice" not in self.methods:
            # §10.4: only for actions whose confirm.methods includes voice; the button still works.
            self.closed_reason = "voice_not_allowed"

    def __repr__(self) -> str:
        return f"ConsentWindow({self.action_id!r}, state={self.state!r})"

    # --- state for the UI -------------------------------------------------------------------

    @property
    def state(self) -> WindowState:
        """Waiting for the assistant, waiting for local playback, open, or closed."""
        if self.closed_reason is not None or self.decision is not None:
            return "closed"
        if self._open:
            return "open"
        return "waiting_for_playback" if self._assistant_done else "waiting_for_assistant"

    @property
    def deadline(self) -> float | None:
        """When `tick` will close the open window for silence, or None."""
        if self.timeout is None or self.state != "open" or self.opened_at is None:
            return None
        quiet_since = self.opened_at if self._last_speech_at is None else self._last_speech_at
        return quiet_since + self.timeout

    # --- the assistant and local playback ---------------------------------------------------

    def assistant_started_speaking(self, t: float) -> None:
        """`output_audio_buffer.started`: the assistant talks, so the window waits (or pauses)."""
        self._assistant_speaking = True
        self._assistant_spoke = True
        self._assistant_done = False
        self._drained = False  # new audio is on its way to the local player
        self._open = False

    def assistant_stopped(self, t: float) -> bool:
        """`output_audio_buffer.stopped` or `.cleared`; True if this opened the window."""
        if not self._assistant_spoke:
            # A stop without a start since this window exists belongs to an earlier response;
            # taking it would open the window before the proposal has been read out.
            return False
        self._assistant_speaking = False
        self._assistant_done = True
        return self._open_if_ready(t)

    def response_done_without_audio(self, t: float) -> bool:
        """`response.done` for a response with no audio; True if this opened the window."""
        if self._assistant_speaking:
            return False  # audio is still playing; its stop will open the window
        self._assistant_done = True
        return self._open_if_ready(t)

    def playback_started(self, t: float) -> None:
        """Local playback has audio queued again, so an earlier drain no longer counts."""
        self._drained = False

    def playback_drained(self, t: float) -> bool:
        """Local playback has played everything out; True if this opened the window."""
        self._drained = True
        return self._open_if_ready(t)

    def _open_if_ready(self, t: float) -> bool:
        if self.state != "waiting_for_playback" or not self._drained:
            return False
        self._open = True
        self.opened_at = t
        self._last_speech_at = None
        return True

    # --- the person -------------------------------------------------------------------------

    def user_speech_started(self, t: float, item_id: str) -> None:
        """`input_audio_buffer.speech_started`: note whether this item began inside the window."""
        if item_id in self._items:
            return  # the first report stands: a repeat must not make an early item count
        counts = self.state == "open" and self.opened_at is not None and t >= self.opened_at
        self._items[item_id] = _Item(counts=counts)
        if counts:
            self._last_speech_at = t

    def final_transcript(self, item_id: str, text: str, t: float) -> Decision | None:
        """A final user transcript; returns the decision if it made one (the window is closed)."""
        ignored = self._why_ignored(item_id)
        self._items.setdefault(item_id, _Item(counts=False)).handled = True
        if ignored is not None:
            self.last_heard = Heard(item_id, text, t, ignored=ignored)
            return None
        verdict = classify(text, keyword=self.keyword, extra=self.extra)
        if verdict.reason == "empty":
            # Noise that VAD took for speech is not an utterance and does not use up a turn.
            self.last_heard = Heard(item_id, text, t, ignored="empty")
            return None
        self.last_heard = Heard(item_id, text, t, verdict=verdict)
        if verdict.outcome == "neither":
            self.non_decisive_count += 1
            if self.non_decisive_count >= NON_DECISIVE_LIMIT:
                self._close("non_decisive")
            return None
        return self._decide(verdict.outcome, "voice", text)

    def _why_ignored(self, item_id: str) -> IgnoredReason | None:
        item = self._items.get(item_id)
        if self.state == "closed":
            return "closed"
        if item is None:
            return "unknown_item"
        if item.handled:
            return "duplicate"
        if not item.counts:
            return "not_in_window"
        return None

    def button_pressed(self, outcome: Outcome) -> Decision | None:
        """A button decision: returned if the button won, None if a decision already exists."""
        if self.decision is not None:
            return None
        return self._decide(outcome, "button", None)

    # --- closing ----------------------------------------------------------------------------

    def tick(self, t: float) -> bool:
        """Close the open window after `timeout` seconds without user speech; True if it closed."""
        deadline = self.deadline
        if deadline is None or t < deadline:
            return False
        self._close("timeout")
        return True

    def close(self, reason: ClosedReason = "aborted") -> None:
        """Stop listening (the call ended, the action was resolved elsewhere)."""
        self._close(reason)

    def _close(self, reason: ClosedReason) -> None:
        self._open = False
        if self.closed_reason is None:
            self.closed_reason = reason

    def _decide(self, outcome: Outcome, method: Method, transcript: str | None) -> Decision:
        # §10.4 step 4: close first, so that nothing after this can decide again.
        self._close("decided")
        self.decision = Decision(self.action_id, outcome, method, transcript)
        return self.decision
