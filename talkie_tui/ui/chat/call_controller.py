"""The chat screen's voice call (§10): one at a time; the screen starts it and ends it.

The screen routes the call keys (F5 call and hang up, F6 talk, F7 hands-free, Esc interrupt)
and the call's `VoiceUpdate` messages here. The controller makes the `VoiceCall`, shows the voice
bar above the composer while the call is on, turns what the call reports into turns of the
conversation, and settles the race between an action card's buttons and the consent window.
`talkie_tui.voice` (aiortc, PyAV, numpy) is imported only when a call starts (DESIGN: heavy
parts load when used).

It is not a widget: a call is not a piece of the layout. It connects before its bar has anything
to show, and it must finish hanging up (the final usage report) while the screen is torn down,
when Textual has already stopped the screen's children with their timers and workers. Its keys
are the screen's priority bindings, and the decisions it races with are posted by action cards
to the screen. So it runs on the screen's message queue, timers and workers, which end with the
screen, and only the bar is a widget.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import TYPE_CHECKING, Literal, Protocol

from textual import log
from textual.binding import Binding, BindingType

from talkie_tui.backends.parts.calls import Calls, TakesToolAnswers
from talkie_tui.core.errors import TalkieError
from talkie_tui.core.sanitize import clean_text
from talkie_tui.i18n import N_, _
from talkie_tui.ui.chat import voice as voice_ui
from talkie_tui.ui.chat.host import ChatHost
from talkie_tui.ui.widgets.voice_bar import VoiceBar

if TYPE_CHECKING:
    from textual.notifications import SeverityLevel
    from textual.timer import Timer
    from textual.worker import Worker

    from talkie_tui.backends.base import Backend
    from talkie_tui.chat.conversation import Conversation
    from talkie_tui.chat.vocabulary import DecisionResult
    from talkie_tui.voice.call import VoiceCall
    from talkie_tui.voice.call_updates import CallStatus, CallUpdate, TalkMode
    from talkie_tui.voice.call_updates import Notice as VoiceNotice
    from talkie_tui.voice.call_updates import ToolFinished as ToolFinishedUpdate

__all__ = ["BARGE_IN_BINDING", "CALL_BINDINGS", "CallController", "CallHost"]

VOICE_TICK = 0.1  # the voice bar's meter and clocks: 10 redraws a second, only during a call
_NOTICE_SEVERITY: dict[str, SeverityLevel] = {
    "info": "information",
    "warning": "warning",
    "error": "error",
}

# The call's keys, bound on the screen (the footer and the help list them there). The screen
# puts the barge-in before its own Esc bindings: while the assistant speaks in a call, Esc
# interrupts it rather than stopping a wait or an answer.
BARGE_IN_BINDING = Binding(voice_ui.BARGE_IN_KEY, "barge_in", N_("Interrupt the assistant"))
CALL_BINDINGS: list[BindingType] = [
    Binding(voice_ui.CALL_KEY, "voice_call", N_("Voice call")),
    Binding(voice_ui.CALL_KEY, "hang_up", N_("Hang up")),
    # Priority: the composer (a TextArea) binds F6/F7 itself; these apply only in a call.
    *voice_ui.talk_bindings("talk", N_("Talk / send")),
    Binding(voice_ui.MODE_KEY, "voice_mode", N_("Hands-free on/off"), priority=True),
]


class CallHost(ChatHost, Protocol):
    """What the call needs of the screen it runs on; `ChatScreen` is one. A call starts in the
    conversation on screen, its timers are the screen's and its keys the screen's bindings."""

    def mount_voice_bar(self, bar: VoiceBar) -> None:
        """Show the call's bar (above the composer)."""

    def show_decision(self, conversation: Conversation, result: DecisionResult) -> None:
        """Show a decision's outcome (here: one made by voice) like a button's."""

    def threads_changed(self, highlight: str | None = None) -> None:
        """Reload the thread list (the call made or renamed a thread), highlighting one."""


class CallController:
    """The one voice call of a chat screen, from F5 to the hang-up."""

    def __init__(self, host: CallHost, backend: Backend, options: voice_ui.VoiceOptions) -> None:
        self._host = host
        self._backend = backend
        self._options = options
        self.allowed = False  # `status.voice`: the signed-in person may use voice
        self._call: VoiceCall | None = None
        self._conversation: Conversation | None = None  # where the call's turns go
        self._bar: VoiceBar | None = None
        self._timer: Timer | None = None
        self._starting: Worker[None] | None = None
        self._tools: dict[str, tuple[str, str]] = {}  # callId -> (name, label)
        self._provider_notice_shown = False

    @property
    def offered(self) -> bool:
        """True when this server has voice endpoints and lets the signed-in person use them."""
        return self._backend.info.capabilities.voice and self.allowed

    @property
    def call(self) -> VoiceCall | None:
        """The voice call that is on (or connecting), if any."""
        return self._call

    @property
    def bar(self) -> VoiceBar | None:
        """The voice bar, while a call is on."""
        return self._bar

    def allows(self, action: str) -> bool | None:
        """Whether a call key does something now; None for an action that is not the call's."""
        call = self._call
        if action == "voice_call":
            return call is None and self.offered
        if action == "hang_up":
            return call is not None
        if action not in ("talk", "voice_mode", "barge_in"):
            return None
        if call is None or call.status.state in ("connecting", "ended"):
            return False
        if action == "talk":
            return call.mode == "push_to_talk"
        if action == "barge_in":
            return call.status.state == "assistant_speaking"
        return True

    def holds_thread(self) -> bool:
        """True (after saying so) when a call is on: its thread stays open until hang-up."""
        if self._call is None:
            return False
        self._host.notify(
            _("The voice call belongs to this thread: hang up (F5) first."),
            severity="warning",
            markup=False,
        )
        return True

    def holds_composer(self) -> bool:
        """True (after saying so) when a call is on: typed messages wait until hang-up."""
        if self._call is None:
            return False
        # Two agents writing into one thread at once would interleave their turns.
        self._host.notify(
            _(
                "You are in a voice call: say it, or hang up (F5) to send written messages. "
                "What you typed is kept."
            ),
            severity="warning",
            markup=False,
        )
        return True

    def decided_by_voice(self, action_id: str, decision: Literal["confirm", "cancel"]) -> bool:
        """True (after saying so) when the consent window already decided the action.

        The button and the voice window race for the same action: only one decides.
        """
        call = self._call
        window = call.consent_window if call is not None else None
        if call is None or window is None or window.action_id != action_id:
            return False
        if call.decide_by_button(decision):
            return False
        self._host.notify(_("This action was already decided by voice."), markup=False)
        return True

    # --- starting and ending -------------------------------------------------------------

    def start(self) -> None:
        """Start a call in the conversation on screen (a new voice thread when it has none)."""
        if self._call is not None or not self.offered:
            return
        if self._host.answering:
            self._host.notify(
                _("Wait for the answer, or press Esc to stop it, then call."),
                severity="warning",
                markup=False,
            )
            return
        self._starting = self._host.run_worker(
            self._start,
            name="start_call",
            group="voice",
            exclusive=True,
            exit_on_error=False,
        )

    async def _start(self) -> None:
        """Open the audio devices and the call; any failure is said plainly, chat goes on."""
        from talkie_tui.voice.audio import AudioUnavailable
        from talkie_tui.voice.call import VoiceConnectionError

        backend = self._backend
        if not isinstance(backend, Calls):
            return  # not `offered`: only a backend with calls says `capabilities.voice`
        conversation = self._host.session.conversation
        try:
            audio = voice_ui.make_audio(self._options)
        except AudioUnavailable as error:
            self._failed(_("Voice is disabled: {reason}").format(reason=error.reason))
            return

        def listener(update: CallUpdate) -> None:
            # Called from the call's tasks and aiortc callbacks: hand over to the message queue.
            self._host.post_message(voice_ui.VoiceUpdate(call, update))

        call = backend.voice_call(
            microphone=audio.microphone,
            speaker=audio.speaker,
            listener=listener,
            thread_id=conversation.thread_id,
            allow_http_signaling=self._options.allow_http_signaling,
        )
        self._call, self._conversation = call, conversation
        self._tools.clear()
        self._show_bar()
        try:
            session = await call.start()
        except asyncio.CancelledError:
            self._over(call, _("The call was not started."))
            raise
        except AudioUnavailable as error:
            self._over(call)
            self._failed(_("Voice is disabled: {reason}").format(reason=error.reason))
            return
        except VoiceConnectionError as error:
            self._over(call)
            self._failed(_("The call could not be set up: {error}").format(error=error.message))
            return
        except TalkieError as error:
            self._over(call)
            if not self._host.sign_in_needed(error):
                self._failed(
                    _("Voice could not start: {error} {hint}").format(
                        error=error.message, hint=error.retry_hint
                    )
                )
            return
        except Exception as error:  # an unforeseen failure: words, and chat goes on
            self._over(call)
            self._failed(
                _("Voice could not start: {error}").format(error=f"{type(error).__name__}: {error}")
            )
            return
        if conversation.thread_id is None:
            conversation.thread_id = session.thread_id  # typed messages continue this thread
        self._host.threads_changed(highlight=session.thread_id)

    def _failed(self, text: str) -> None:
        self._host.notify(
            _("{problem} Chat works as before.").format(problem=text.rstrip()),
            severity="error",
            markup=False,
            timeout=10,
        )

    def _show_bar(self) -> None:
        bar = self._bar = VoiceBar(id="voice-bar")
        self._host.mount_voice_bar(bar)
        self._timer = self._host.set_interval(VOICE_TICK, self._tick)
        self._host.refresh_bindings()

    def _tick(self) -> None:
        call, bar = self._call, self._bar
        if call is not None and bar is not None:
            bar.tick(call.level.fraction, call.elapsed, time.monotonic())

    def _over(self, call: VoiceCall, reason: str | None = None) -> None:
        """The call ended (or never started): remove the bar, free the keys; idempotent."""
        if self._call is not call:
            return
        self._call = self._conversation = None
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if self._bar is not None:
            self._bar.remove()
            self._bar = None
        self._host.refresh_bindings()
        if reason:
            self._host.notify(reason, markup=False)

    def hang_up(self) -> None:
        """End the call (while it connects: stop connecting)."""
        call = self._call
        if call is None:
            return
        if call.session is None or call.status.state == "connecting":
            if self._starting is not None:
                self._starting.cancel()
            return
        self._host.run_worker(self.end(), group="voice-end", exit_on_error=False)

    async def end(self, reason: str | None = None) -> None:
        """Hang up: the final usage report, then the peer and audio closed; safe without a call."""
        call = self._call
        if call is None:
            return
        reason = reason or _("You hung up.")
        if self._starting is not None and self._starting.is_running:
            self._starting.cancel()  # still connecting: start() cleans up after itself
        try:
            await call.hang_up(reason)
        except Exception as error:  # hang_up stopped half-way: close what it may have left
            log.error(f"hang-up failed: {error!r}")
            if call.peer is not None:
                with contextlib.suppress(Exception):
                    await call.peer.close()
            for device in (call.microphone, call.speaker):
                with contextlib.suppress(Exception):
                    await device.stop()
        self._over(call, _("The voice call ended: {reason}").format(reason=reason))

    # --- the keys during a call ----------------------------------------------------------

    def talk(self) -> None:
        """Push-to-talk: start talking; again when done (terminals report no key release)."""
        if self._call is not None:
            self._call.toggle_talk()

    def barge_in(self) -> None:
        """Interrupt the assistant while it speaks."""
        if self._call is not None:
            self._call.barge_in()

    def switch_mode(self) -> None:
        """Switch between push-to-talk and hands-free (the provider detects speech)."""
        call = self._call
        if call is None:
            return
        if call.status.state == "talking":
            call.release()  # what was said so far still counts
        mode: TalkMode = "hands_free" if call.mode == "push_to_talk" else "push_to_talk"
        call.set_mode(mode)
        words = (
            _("Hands-free: just speak.") if mode == "hands_free" else _("Push-to-talk: F6 talks.")
        )
        self._host.notify(words, markup=False)

    # --- what the call reports -----------------------------------------------------------

    def update(self, call: VoiceCall, update: CallUpdate) -> None:
        """Show one update of the call: in the bar, the transcript, or a notification."""
        conversation = self._conversation
        if call is not self._call or conversation is None:
            return  # a late update of a call that is over
        from talkie_tui.voice import call_updates as voice_call

        shown = conversation is self._host.session.conversation
        bar = self._bar
        if isinstance(update, voice_call.CallStatus):
            self._status(call, conversation, update)
        elif isinstance(update, voice_call.UserSaid | voice_call.AssistantSaid):
            role: Literal["user", "assistant"] = (
                "user" if isinstance(update, voice_call.UserSaid) else "assistant"
            )
            conversation.add_spoken(role, update.item_id, update.text)
            if shown:
                self._host.transcript.sync_turns()
        elif isinstance(update, voice_call.ToolStarted):
            label = clean_text(update.label)
            self._tools[update.call_id] = (update.name, label)
            if bar is not None:
                bar.show_tool(label)
        elif isinstance(update, voice_call.ToolFinished):
            self._tool_finished(conversation, update, shown=shown)
        elif isinstance(update, voice_call.ConsentHeard):
            line = voice_ui.describe_heard(update.heard)
            if line and bar is not None:
                bar.show_heard(line)
        elif isinstance(update, voice_call.VoiceDecided):
            if bar is not None:
                bar.show_heard("")
            self._host.show_decision(conversation, update.result)
            done = (
                _("Confirmed by voice.")
                if update.decision.outcome == "confirm"
                else _("Cancelled by voice.")
            )
            self._host.notify(done, markup=False)
        elif isinstance(update, voice_call.Notice):
            self._notice(update)
        elif isinstance(update, voice_call.CallEnded):
            self._over(call, _("The voice call ended: {reason}").format(reason=update.reason))
            self._host.threads_changed()  # the thread's title may have changed

    def _status(self, call: VoiceCall, conversation: Conversation, status: CallStatus) -> None:
        bar = self._bar
        if bar is None:
            return
        words = None
        if status.state == "consent":
            part = conversation.actions.get(status.consent_action or "")
            locale = call.session.locale if call.session is not None else None
            words = voice_ui.consent_phrase(part.action if part else None, locale)
        if bar.status is None and call.session is not None:
            bar.max_seconds = call.session.max_seconds
        changed = bar.status is None or bar.status.state != status.state
        bar.show_status(status, words)
        if changed or bar.status is None or bar.status.mode != status.mode:
            self._host.refresh_bindings()

    def _tool_finished(
        self, conversation: Conversation, update: ToolFinishedUpdate, *, shown: bool
    ) -> None:
        """A voice tool's cards and actions, shown as an answer like in chat (§10.2)."""
        if self._bar is not None:
            self._bar.show_tool("")
        name, label = self._tools.pop(update.call_id, ("tool", _("Running a tool…")))
        if update.error is None and not update.events:
            return  # nothing to show (e.g. a call id the server had already seen)
        if not isinstance(conversation, TakesToolAnswers):
            return  # a call's conversation is talkie/1's, which shows its tools
        conversation.add_tool_answer(update.call_id, name, label, update.events, error=update.error)
        conversation.turns[-1].channel = "voice"
        if not shown:
            return
        self._host.transcript.sync_turns()  # a new card waits for Ctrl+O, as every decision

    def _notice(self, notice: VoiceNotice) -> None:
        if notice.kind == "provider":
            if self._provider_notice_shown:
                return  # where the audio goes is said once per session
            self._provider_notice_shown = True
        self._host.notify(
            clean_text(notice.text),
            severity=_NOTICE_SEVERITY.get(notice.level, "information"),
            markup=False,
        )
