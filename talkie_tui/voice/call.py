"""VoiceCall: one voice conversation, from the session to the hang-up (§10).

It ties the parts together: the Talkie server (session, tools, transcripts, usage, decisions),
the WebRTC peer to the speech provider, the microphone and speaker, and the consent window of
§10.4. It knows nothing of the screen: everything the person should see is reported as a
`CallUpdate` (call_updates.py) through one callback, and the UI calls `press`/`release`/
`hang_up`/`decide_by_button`. The tools run through a `ToolRelay` (tool_relay.py); the usage
reports and the time limit are a `UsageReporter`'s (usage.py).

Push-to-talk is the default (turn detection off: a press clears the provider's buffer, a
release keeps ~250 ms of tail, then commits and asks for an answer). Hands-free uses the
provider's voice detection. A decision by voice is sent with `method: "voice"`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import replace
from typing import Any, ClassVar, Literal
from urllib.parse import urlsplit

from talkie_tui.core.errors import TalkieError
from talkie_tui.i18n import N_, _
from talkie_tui.protocol.talkie.models import Action
from talkie_tui.protocol.talkie.voice_models import VoiceSession
from talkie_tui.voice.call_core import CallCore
from talkie_tui.voice.call_updates import (
    AssistantSaid,
    CallEnded,
    ConsentHeard,
    Notice,
    TalkMode,
    UserSaid,
    VoiceDecided,
)
from talkie_tui.voice.consent import ConsentWindow, Decision
from talkie_tui.voice.consent_classifier import ConsentWords
from talkie_tui.voice.realtime import (
    AssistantTranscript,
    AssistantTranscriptDelta,
    FunctionCall,
    InputCommitted,
    OutputAudioCleared,
    OutputAudioStarted,
    OutputAudioStopped,
    ProviderError,
    RealtimeEvent,
    ResponseCreated,
    ResponseDone,
    SpeechStarted,
    UserTranscript,
    cancel_response,
    clear_input,
    clear_output_audio,
    commit_input,
    create_response,
    function_call_output,
    turn_detection_update,
)
from talkie_tui.voice.rtc import RealtimePeer, VoiceConnectionError

__all__ = ["VoiceCall", "VoiceConnectionError"]

MIN_PRESS = 0.15  # shorter presses hold no speech; committing them is a provider error
MAX_BACKLOG_WAIT = 1.0  # how long a release waits for a late reader to catch up
FRAME_SECONDS = 0.02
PROVIDER_NOTICE = N_(
    "Voice audio goes directly to the speech provider of this server "
    "({host}); the server keeps the transcript in the thread."
)


class VoiceCall(CallCore):
    """One voice call on one Talkie server: started, talked in, and hung up."""

    # --- starting and ending -----------------------------------------------------------------

    async def start(self) -> VoiceSession:
        """Open the audio devices, the session on the server and the call; raises on failure.

        The devices come first: without a microphone no session (nor an empty voice thread)
        is opened on the server.
        """
        self.microphone.muted = self.mode == "push_to_talk"
        try:
            await self.speaker.start()
            await self.microphone.start()
        except BaseException:
            await self._release_devices()
            raise
        try:
            session = self.session = await self.client.voice_session(
                self.thread_id, self.locale, allow_http_signaling=self._allow_http_signaling
            )
            self.thread_id = session.thread_id
            self._extra_words = ConsentWords(
                tuple(session.consent.confirm), tuple(session.consent.refuse)
            )
            self.peer = RealtimePeer(session, self.microphone, self.speaker, self._on_event)
            await self.peer.connect()
        except BaseException:
            await self._close_everything()
            raise
        if self._ended:
            return session  # hung up while connecting: hang_up already closed everything
        self._started_at = self._clock()
        self._send_turn_detection()
        host = _host(session.signaling.url)
        self._emit(Notice(_(PROVIDER_NOTICE).format(host=host), kind="provider"))
        self._set_state("listening")
        self._spawn(self._report_usage())
        return session

    async def hang_up(self, reason: str | None = None) -> None:
        """End the call: the final usage report, then close everything; safe to call twice."""
        if self._ended:
            return
        reason = _("You hung up.") if reason is None else reason
        self._ended = True
        if self._window is not None:
            self._window.close("aborted")
        current = asyncio.current_task()
        for task in list(self._tasks):
            if task is not current:  # hang_up itself may run as one of the call's tasks
                task.cancel()
        try:
            await self._close_everything()
        finally:
            self._set_state("ended")
            self._emit(CallEnded(reason))

    async def _close_everything(self) -> None:
        """The final usage report (so the server closes the session), the peer, the devices."""
        try:
            if self.session is not None:
                await self._usage.final(self.session)
        finally:
            try:
                if self.peer is not None:
                    await self.peer.close()
            finally:
                await self._release_devices()

    async def _release_devices(self) -> None:
        with contextlib.suppress(Exception):
            await self.microphone.stop()
        with contextlib.suppress(Exception):
            await self.speaker.stop()

    # --- talking -----------------------------------------------------------------------------

    def set_mode(self, mode: TalkMode) -> None:
        """Switch between push-to-talk and hands-free (the provider's voice detection)."""
        self.mode = mode
        self.microphone.muted = mode == "push_to_talk"
        self._status = replace(self._status, mode=mode)
        self._send_turn_detection()
        self._emit(self.status)

    def press(self) -> None:
        """Start talking (push-to-talk): stop the assistant if it speaks, clear old audio."""
        if self.peer is None or self._ended or self._pressed_at is not None:
            return
        if self._status.state == "assistant_speaking" or self._response_in_flight:
            self.barge_in()
        self.peer.send(clear_input())
        self._pressed_at = self._clock()
        self._press_serial += 1
        self.microphone.muted = False
        self._set_state("talking")

    def release(self) -> None:
        """Stop talking: keep a short tail of audio flowing, then commit and ask for an answer."""
        if self._pressed_at is None:
            return
        pressed_at, self._pressed_at = self._pressed_at, None
        held = self._clock() - pressed_at
        self._spawn(self._finish_turn(held, self._press_serial))

    def toggle_talk(self) -> None:
        """One key for push-to-talk: terminals report no key release (Textual 8)."""
        if self._pressed_at is None:
            self.press()
        else:
            self.release()

    async def _finish_turn(self, held: float, serial: int) -> None:
        # RTP audio and data-channel events travel apart: without a tail the commit can
        # overtake the last words (notes §1.5).
        await asyncio.sleep(self._release_tail)
        # A busy event loop reads the microphone late: what it captured before the release
        # (and the tail) is sent before the microphone is muted and the turn committed.
        loop = asyncio.get_running_loop()
        deadline = loop.time() + MAX_BACKLOG_WAIT
        while self.microphone.backlog and loop.time() < deadline:  # noqa: ASYNC110 - bounded poll
            await asyncio.sleep(FRAME_SECONDS)
        if self._pressed_at is not None or serial != self._press_serial or self.peer is None:
            return  # pressed again meanwhile
        if self.mode == "push_to_talk":
            self.microphone.muted = True
        if held < MIN_PRESS:
            self.peer.send(clear_input())
            self._emit(
                Notice(
                    _("Too short to hear anything: press the talk key, speak, then press it again.")
                )
            )
            self._set_state(self._resting_state())
            return
        self._last_press_started = self._clock() - held - self._release_tail
        self.peer.send(commit_input())
        self._set_state(self._resting_state())
        if self._window is not None and self._window.state != "closed":
            self._held_for_consent = True  # the transcript decides first, then the answer
        else:
            self._want_answer()

    def barge_in(self) -> None:
        """Stop the assistant: cancel its response and drop the audio still on its way."""
        if self.peer is None:
            return
        if self._response_in_flight:
            self.peer.send(cancel_response())
        self.peer.send(clear_output_audio())
        self.speaker.clear()

    def _want_answer(self) -> None:
        """Ask for a response now, or as soon as the one in flight is done (one at a time)."""
        if self._response_in_flight:
            self._answer_wanted = True
            return
        self._answer_wanted = False
        if self.peer is not None and self.peer.send(create_response()):
            self._response_in_flight = True

    def _send_turn_detection(self) -> None:
        if self.peer is None:
            return
        if self.mode == "push_to_talk":
            self.peer.send(turn_detection_update("push_to_talk"))
        else:
            # While an action waits for a spoken answer, the model must not answer by itself.
            automatic = self._window is None or self._window.state == "closed"
            self.peer.send(
                turn_detection_update(
                    "server_vad", create_response=automatic, interrupt_response=automatic
                )
            )

    # --- provider events ---------------------------------------------------------------------

    def _on_event(self, event: RealtimeEvent) -> None:
        handler = self._handlers.get(type(event))
        if handler is not None:
            handler(self, event)

    def _on_speech_started(self, event: SpeechStarted) -> None:
        if self._window is not None:
            self._window.user_speech_started(self._clock(), event.item_id)
        if self.mode == "hands_free":
            self._set_state("talking")

    def _on_committed(self, event: InputCommitted) -> None:
        # With push-to-talk the provider hears no speech start: the press was the start.
        started = self._last_press_started
        if self._window is not None and self.mode == "push_to_talk" and started is not None:
            self._window.user_speech_started(started, event.item_id)

    def _on_user_transcript(self, event: UserTranscript) -> None:
        if not event.text:
            return
        self._emit(UserSaid(event.item_id, event.text))
        self._spawn(self._store_transcript("user", event.text, event.item_id))
        window = self._window
        if window is not None and window.state != "closed":
            decision = window.final_transcript(event.item_id, event.text, self._clock())
            if window.last_heard is not None:
                self._emit(ConsentHeard(window.last_heard))
            if decision is not None:
                self._spawn(self._send_decision(decision))
                return
            if window.closed_reason is not None:  # two non-decisive utterances closed it
                self._window_closed()
        if self._held_for_consent:
            self._held_for_consent = False
            self._want_answer()

    def _on_assistant_delta(self, event: AssistantTranscriptDelta) -> None:
        if self._status.state != "assistant_speaking":
            self._set_state("assistant_speaking")

    def _on_assistant_transcript(self, event: AssistantTranscript) -> None:
        if event.text:
            self._emit(AssistantSaid(event.item_id or event.response_id, event.text))
            key = event.item_id or event.response_id
            self._spawn(self._store_transcript("assistant", event.text, key))

    def _on_function_call(self, event: FunctionCall) -> None:
        if self._tools.first_time(event.call_id):
            self._spawn(self._run_tool(event))

    def _on_response_created(self, event: ResponseCreated) -> None:
        self._response_in_flight = True

    def _on_response_done(self, event: ResponseDone) -> None:
        self._response_in_flight = False
        if not event.has_audio and self._window is not None:
            self._window.response_done_without_audio(self._clock())
            self._spawn(self._after_playback())
        if self._answer_wanted:
            self._want_answer()
        elif self._status.state == "assistant_speaking" and not self.speaker.playing:
            self._set_state(self._resting_state())

    def _on_audio_started(self, event: OutputAudioStarted) -> None:
        if self._window is not None:
            self._window.assistant_started_speaking(self._clock())
        self._set_state("assistant_speaking")

    def _on_audio_stopped(self, event: OutputAudioStopped | OutputAudioCleared) -> None:
        if self._window is not None:
            self._window.assistant_stopped(self._clock())
        self._spawn(self._after_playback())

    def _on_provider_error(self, event: ProviderError) -> None:
        if event.code in ("connection_closed", "session_expired"):
            self._spawn(self.hang_up(event.message))
        else:
            text = _("The voice provider says: {message}").format(message=event.message)
            self._emit(Notice(text, "warning"))

    _handlers: ClassVar[dict[type, Callable[[VoiceCall, Any], None]]] = {
        SpeechStarted: _on_speech_started,
        InputCommitted: _on_committed,
        UserTranscript: _on_user_transcript,
        AssistantTranscriptDelta: _on_assistant_delta,
        AssistantTranscript: _on_assistant_transcript,
        FunctionCall: _on_function_call,
        ResponseCreated: _on_response_created,
        ResponseDone: _on_response_done,
        OutputAudioStarted: _on_audio_started,
        OutputAudioStopped: _on_audio_stopped,
        OutputAudioCleared: _on_audio_stopped,
        ProviderError: _on_provider_error,
    }

    # --- the work behind events --------------------------------------------------------------

    async def _after_playback(self) -> None:
        """When local playback has drained: the assistant is done, a consent window may open."""
        await self.speaker.drained()
        window = self._window
        if window is not None and window.playback_drained(self._clock()):
            # Whatever the microphone caught while the assistant spoke is echo, not an answer.
            if self.peer is not None:
                self.peer.send(clear_input())
            self._status = replace(
                self._status, consent_deadline=window.deadline, consent_action=window.action_id
            )
            self._set_state("consent")
            self._spawn(self._watch_window(window))
        elif self._status.state == "assistant_speaking" and not self._response_in_flight:
            self._set_state(self._resting_state())

    async def _watch_window(self, window: ConsentWindow) -> None:
        while window.state != "closed":
            await asyncio.sleep(0.25)
            if window.tick(self._clock()):
                break
        if window is self._window and window.decision is None:
            self._window_closed()

    def _window_closed(self) -> None:
        window, self._window = self._window, None
        self._window_action = None
        self._status = replace(self._status, consent_deadline=None, consent_action=None)
        if window is not None and window.closed_reason in ("non_decisive", "timeout"):
            self._emit(
                Notice(_("The action waits for your decision: use the buttons on its card."))
            )
        if self.mode == "hands_free":
            self._send_turn_detection()
        self._set_state(self._resting_state())

    async def _run_tool(self, call: FunctionCall) -> None:
        session = self.session
        if session is None or self.peer is None:
            return
        outcome = await self._tools.run(session, call)
        if outcome is None:
            return  # the server had run this call already: nothing goes to the model
        for action in outcome.proposed:
            self._consider_consent(action)
        self.peer.send(function_call_output(call.call_id, outcome.output))
        # The window exists before the response that reads the proposal out is asked for, so
        # a stale `response.done` cannot open it early.
        self._want_answer()

    def _consider_consent(self, action: Action) -> None:
        if action.status != "pending" or "voice" not in action.confirm.methods:
            return
        if self._window is not None:
            self._window.close("aborted")  # a newer proposal replaces an older one
        keyword = action.confirm.voice.keyword if action.confirm.voice else None
        self._window = ConsentWindow(
            action.id, keyword=keyword, methods=action.confirm.methods, extra=self._extra_words
        )
        self._window_action = action
        if self.mode == "hands_free":
            self._send_turn_detection()

    async def _send_decision(self, decision: Decision) -> None:
        action = self._window_action
        self._window_closed()
        if action is None:
            return
        try:
            result = await self.client.decide(action, decision.outcome, method=decision.method)
        except TalkieError as error:
            text = _("The decision was not accepted: {error}").format(error=error.message)
            self._emit(Notice(text, "error"))
        else:
            self._emit(VoiceDecided(decision, result))
        if self.peer is not None:
            self._want_answer()  # let the model acknowledge the decision

    def decide_by_button(self, outcome: Literal["confirm", "cancel"]) -> bool:
        """A button press while the window is open: True when it wins (then voice cannot)."""
        window = self._window
        if window is None:
            return True
        decision = window.button_pressed(outcome)
        if decision is None:
            return False
        self._window_closed()
        return True

    async def _store_transcript(
        self, role: Literal["user", "assistant"], text: str, item_id: str
    ) -> None:
        if self.session is None:
            return
        try:
            await self.client.voice_transcript(self.session, role, text, item_id)
        except TalkieError as error:
            text = _("A transcript could not be saved: {error}").format(error=error.message)
            self._emit(Notice(text, "warning"))

    async def _report_usage(self) -> None:
        session = self.session
        if session is None:
            return
        used_up = await self._usage.run(
            session, running=lambda: not self._ended, on_remaining=self._show_remaining
        )
        if used_up:
            self._spawn(self.hang_up(_("The voice time of this session is used up.")))

    def _show_remaining(self, remaining: float | None) -> None:
        self._status = replace(self._status, remaining=remaining)
        self._emit(self.status)


def _host(url: str) -> str:
    return urlsplit(url).hostname or url
