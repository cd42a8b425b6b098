"""The chat screen: header, thread list, transcript and composer; all network work in workers.

Voice (§10): F5 starts a call in the open thread and hangs up; while it is on, a voice bar sits
above the composer. Textual reports no key release, so push-to-talk is a toggle: F6 (or
Ctrl+Space) starts talking and F6 again sends. F7 switches to hands-free, Esc interrupts the
assistant. The call (talkie_tui.voice) is imported only when one starts; it reports through a
listener that posts `VoiceUpdate` messages, so widgets change only in this screen's handlers.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Literal

import ag_ui.core as agui
import httpx
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.message import Message
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.timer import Timer
from textual.worker import Worker, WorkerState

from talkie_tui.chat.export import conversation_markdown
from talkie_tui.chat.reducer import Conversation
from talkie_tui.chat.session import ChatSession, Recovered
from talkie_tui.chat.turns import ActionPart, LinkPart, NoticePart, Turn
from talkie_tui.config import save_logo
from talkie_tui.core.errors import RateLimitedError, TalkieError, UnauthorizedError
from talkie_tui.core.sanitize import clean_text
from talkie_tui.i18n import N_, _
from talkie_tui.protocol.client import RunRequest, TalkieClient
from talkie_tui.protocol.events import ActionProposed, StreamTruncated
from talkie_tui.protocol.logo import fetch_logo
from talkie_tui.protocol.models import Action, DecisionResult, FileBlock

from .. import voice as voice_ui
from ..drafts import NEW, DraftStore
from ..links import check_link, open_in_browser
from ..localized import LocalizedBindings
from ..markdown import code_blocks, render_markdown
from ..messages import DecisionRequested, DownloadRequested, OpenLinkRequested, RetryRequested
from ..widgets.action_card import ActionCard, explain_decision_error
from ..widgets.composer import Composer
from ..widgets.footer import TalkieFooter
from ..widgets.header import WIDE, TalkieHeader
from ..widgets.thread_list import ThreadList
from ..widgets.transcript import Transcript
from ..widgets.voice_bar import VoiceBar
from ..widgets.welcome import Welcome
from .confirm import ConfirmScreen
from .picker import PickerScreen, PickItem

if TYPE_CHECKING:
    from talkie_tui.voice.call import CallStatus, CallUpdate, TalkMode, VoiceCall
    from talkie_tui.voice.call import Notice as VoiceNotice
    from talkie_tui.voice.call import ToolFinished as ToolFinishedUpdate

__all__ = ["ChatScreen"]

FOLLOW_CHECKS = 10  # how often a still-running action is asked for before we stop asking
VOICE_TICK = 0.1  # the voice bar's meter and clocks: 10 redraws a second, only during a call
DRAFT_SAVE_DELAY = 0.4  # the draft is saved this long after the last keystroke
_NOTICE_SEVERITY: dict[str, SeverityLevel] = {
    "info": "information",
    "warning": "warning",
    "error": "error",
}


class ChatScreen(LocalizedBindings, Screen[None]):
    """Chat with one server's agent."""

    HELP_GROUP = N_("Chat screen")
    BINDINGS: ClassVar[list[BindingType]] = [
        # Before "Stop answer": while the assistant speaks in a call, Esc interrupts it.
        Binding(voice_ui.BARGE_IN_KEY, "barge_in", N_("Interrupt the assistant")),
        # While "reconnecting" (a broken stream's answer is awaited), Esc stops the wait.
        Binding("escape", "stop_waiting", N_("Stop waiting"), show=True),
        Binding("escape", "cancel_run", N_("Stop answer"), show=True),
        Binding(voice_ui.CALL_KEY, "voice_call", N_("Voice call")),
        Binding(voice_ui.CALL_KEY, "hang_up", N_("Hang up")),
        # Priority: the composer (a TextArea) binds F6/F7 itself; these apply only in a call.
        Binding(voice_ui.TALK_KEYS, "talk", N_("Talk / send"), priority=True),
        Binding(
            voice_ui.TALK_KEY_LEGACY,
            "talk",
            N_("Talk / send"),
            key_display="Ctrl+Space",
            show=False,
            priority=True,
        ),
        Binding(voice_ui.MODE_KEY, "voice_mode", N_("Hands-free on/off"), priority=True),
        Binding("ctrl+b", "toggle_sidebar", N_("Threads")),
        Binding("ctrl+n", "new_thread", N_("New thread")),
        Binding("ctrl+o", "focus_pending", N_("Next pending action")),
        Binding("ctrl+t", "copy_answer", N_("Copy answer")),
        Binding("ctrl+g", "pick", N_("Links & code")),
        Binding("ctrl+s", "export_thread", N_("Export")),
        Binding("ctrl+r", "refresh_threads", N_("Refresh threads"), show=False),
        Binding("ctrl+l", "focus_composer", N_("Composer"), show=False),
    ]

    class SignInRequired(Message):
        """The server refused the sign-in (401) after the token source could not refresh."""

        def __init__(self, chat: ChatScreen, message: str) -> None:
            super().__init__()
            self.chat = chat
            self.message = message

    def __init__(
        self,
        client: TalkieClient,
        *,
        thread_id: str | None = None,
        downloads_dir: Path | None = None,
        show_sidebar: bool = True,
        newline_key: str = "ctrl+j",
        voice: voice_ui.VoiceOptions | None = None,
    ) -> None:
        super().__init__()
        self.client = client
        self.session = ChatSession(client)
        self._voice = voice or voice_ui.VoiceOptions()
        self._voice_allowed = False  # `status.voice`: the signed-in person may use voice
        self._call: VoiceCall | None = None
        self._call_conversation: Conversation | None = None  # where the call's turns go
        self._voice_bar: VoiceBar | None = None
        self._voice_timer: Timer | None = None
        self._voice_tools: dict[str, tuple[str, str]] = {}  # callId -> (name, label)
        self._provider_notice_shown = False
        self._initial_thread = thread_id
        self._downloads_dir = downloads_dir or Path.home() / "Downloads"
        self._show_sidebar = show_sidebar
        self._newline_key = newline_key
        self._sidebar_chosen: bool | None = None  # the person's own toggle wins over the width
        self._request: RunRequest | None = None  # the run in flight, or the last failed one
        self._wait_timer: Timer | None = None  # while a broken stream's answer is awaited
        self._drafts = DraftStore()
        self._draft_key = thread_id or NEW  # whose draft the composer holds
        self._draft_timer: Timer | None = None

    # --- layout --------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        manifest = self.client.server.manifest
        yield TalkieHeader(manifest.name, id="header")
        with Horizontal(id="body"):
            yield ThreadList(id="sidebar")
            with Vertical(id="main"):
                welcome = Welcome.from_manifest(manifest, newline_key=self._newline_key)
                yield Transcript(welcome=welcome, id="transcript")
                yield Composer(
                    max_chars=manifest.limits.max_message_chars,
                    newline_key=self._newline_key,
                    id="composer",
                )
        yield TalkieFooter()

    @property
    def header(self) -> TalkieHeader:
        """The header widget."""
        return self.query_one(TalkieHeader)

    @property
    def transcript(self) -> Transcript:
        """The transcript widget."""
        return self.query_one(Transcript)

    @property
    def composer(self) -> Composer:
        """The composer widget."""
        return self.query_one(Composer)

    def on_resize(self, event: events.Resize) -> None:
        """Narrow terminals give the transcript the room, until the person asks for threads."""
        if self._sidebar_chosen is None:
            # A resize may arrive before compose: query, so that no sidebar yet is no error.
            for sidebar in self.query("#sidebar"):
                sidebar.display = self._show_sidebar and event.size.width >= WIDE

    def on_mount(self) -> None:
        self.query_one("#sidebar").display = self._show_sidebar
        # A thread given to open (--thread) shows its turns, not a new thread's welcome.
        self.transcript.show(self.session.conversation, welcome=not self._initial_thread)
        self._restore_draft()
        self.composer.focus()
        self.load_status()
        self.load_logo()
        self.refresh_threads()
        if self._initial_thread:
            self.open_thread(self._initial_thread)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """An unexpected failure in background work is reported; the app keeps running."""
        if event.state is WorkerState.ERROR:
            error = event.worker.error
            self.log.error(f"worker {event.worker.name} failed: {error!r}")
            self.notify(
                _("Something went wrong: {error}. The conversation is kept; try again.").format(
                    error=error
                ),
                severity="error",
                markup=False,
            )
            if event.worker.group == "run":
                self.header.state = "connected"

    # --- sign-in -------------------------------------------------------------------------

    def _sign_in_needed(self, error: TalkieError) -> bool:
        """On a 401 ask the app to offer a new sign-in; True when it was asked."""
        if not isinstance(error, UnauthorizedError):
            return False
        self.post_message(self.SignInRequired(self, error.message))
        return True

    def signed_in_again(self) -> None:
        """A new sign-in is attached to the client: reload who is signed in and the threads."""
        self.load_status()
        self.refresh_threads()

    # --- status and threads --------------------------------------------------------------

    @work(exit_on_error=False, exclusive=True, group="status")
    async def load_status(self) -> None:
        """Show the signed-in user and usage."""
        try:
            status = await self.client.status()
        except TalkieError as error:
            self.header.state = "offline"
            if not self._sign_in_needed(error):
                self.notify(f"{error.message} {error.retry_hint}", severity="error", markup=False)
            return
        self.header.state = "connected"
        self.header.set_user(status.user)
        self.header.set_usage(status.usage)
        self._voice_allowed = status.voice
        self.transcript.set_voice_allowed(status.voice)
        self.refresh_bindings()

    @work(exit_on_error=False, exclusive=True, group="logo")
    async def load_logo(self) -> None:
        """Fetch the brand logo (checked before decoding); a bad one is simply not shown."""
        data = await fetch_logo(self.client)
        if data is not None:
            self.header.set_logo(data)
            save_logo(self.client.server.server_id, data)

    @work(exit_on_error=False, exclusive=True, group="threads")
    async def refresh_threads(self) -> None:
        """Reload the thread list."""
        try:
            threads = await self.client.threads()
        except TalkieError as error:
            if self._sign_in_needed(error):
                return
            self.notify(
                _("Threads could not be loaded: {error}").format(error=error.message),
                severity="warning",
                markup=False,
            )
            return
        self.query_one(ThreadList).set_threads(threads)

    @work(exit_on_error=False, exclusive=True, group="run")
    async def open_thread(self, thread_id: str) -> None:
        """Load a stored thread and show it through the same path as live turns."""
        try:
            conversation = await self.session.load(thread_id)
        except TalkieError as error:
            if self._sign_in_needed(error):
                return
            self.notify(
                _("The thread could not be opened: {error}").format(error=error.message),
                severity="error",
                markup=False,
            )
            return
        self._request = None
        self.transcript.show(conversation)
        self._switch_draft(thread_id)
        self._count_pending()
        await self._refresh_pending_actions(conversation)

    async def _refresh_pending_actions(self, conversation: Conversation) -> None:
        """Ask the server for the current state of actions shown as pending (§8 GET action)."""
        for part in list(conversation.actions.values()):
            if not part.action.is_open:
                continue
            try:
                fresh = await self.client.action(part.action.id)
            except TalkieError:
                continue
            self.transcript.apply(conversation.update_action(fresh))
        self._count_pending()

    def _count_pending(self) -> None:
        actions = self.session.conversation.actions.values()
        self.header.pending_actions = sum(1 for part in actions if part.action.status == "pending")

    @on(ThreadList.Selected)
    def _thread_selected(self, event: ThreadList.Selected) -> None:
        if self._in_call_explain():
            return
        self.open_thread(event.thread_id)

    @on(ThreadList.NewRequested)
    def _thread_new(self, event: ThreadList.NewRequested) -> None:
        self.action_new_thread()

    @on(ThreadList.DeleteRequested)
    def _thread_delete(self, event: ThreadList.DeleteRequested) -> None:
        self.delete_thread(event.thread_id)

    @work(exit_on_error=False, group="threads-delete")
    async def delete_thread(self, thread_id: str) -> None:
        """Delete a thread after the person confirms."""
        confirmed = await self.app.push_screen_wait(
            ConfirmScreen(
                _("Delete this thread?"),
                _(
                    "The thread and its messages are deleted on the server. "
                    "Actions still waiting for a decision are cancelled."
                ),
                confirm_label=_("Delete"),
            )
        )
        if not confirmed:
            return
        try:
            await self.client.delete_thread(thread_id)
        except TalkieError as error:
            if self._sign_in_needed(error):
                return
            self.notify(
                _("Not deleted: {error} {hint}").format(error=error.message, hint=error.retry_hint),
                severity="error",
                markup=False,
            )
            return
        if self.session.thread_id == thread_id:
            self.action_new_thread()
        self.notify(_("Thread deleted."), markup=False)
        self.refresh_threads()

    # --- drafts (issue 6): the composer's text of each thread survives a crash and a quit ---

    @property
    def _server_id(self) -> str:
        return self.client.server.server_id

    def _restore_draft(self) -> None:
        """Put the draft of the thread the composer now belongs to back into it."""
        composer = self.composer
        composer.load_text(self._drafts.get(self._server_id, self._draft_key))
        composer.move_cursor(composer.document.end)

    def _switch_draft(self, key: str, *, restore: bool = True) -> None:
        """The composer now belongs to thread `key`: save the old draft at once.

        With `restore` the composer shows `key`'s draft; without, its text moves to `key`
        (a new thread got its id from the server).
        """
        if key == self._draft_key:
            return
        text = self.composer.text
        self._drafts.put(self._server_id, self._draft_key, text if restore else "")
        self._draft_key = key
        if restore:
            self._restore_draft()
        else:
            self._drafts.put(self._server_id, key, text)
        self._save_drafts()

    @on(Composer.Changed, "#composer")
    def _composer_changed(self, event: Composer.Changed) -> None:
        self._drafts.put(self._server_id, self._draft_key, event.text_area.text)
        if self._draft_timer is not None:
            self._draft_timer.stop()
        self._draft_timer = self.set_timer(DRAFT_SAVE_DELAY, self._save_drafts)

    def preserve(self) -> None:
        """Save the composer's text now: talkie is failing (see `CrashGuard`)."""
        with contextlib.suppress(NoMatches):  # a screen that failed before it was composed
            self._drafts.put(self._server_id, self._draft_key, self.composer.text)
        self._save_drafts()

    def _save_drafts(self) -> None:
        """Write changed drafts now (a few kilobytes, atomically: fine on the event loop)."""
        if self._draft_timer is not None:
            self._draft_timer.stop()
            self._draft_timer = None
        self._drafts.save()

    # --- sending -------------------------------------------------------------------------

    @on(Composer.Submitted)
    def _submitted(self, event: Composer.Submitted) -> None:
        if self._call is not None:
            # Two agents writing into one thread at once would interleave their turns.
            self.notify(
                _(
                    "You are in a voice call: say it, or hang up (F5) to send written messages. "
                    "What you typed is kept."
                ),
                severity="warning",
                markup=False,
            )
            return
        if self.answering:
            self.notify(
                _("Wait for the answer, or press Esc to stop it."),
                severity="warning",
                markup=False,
            )
            return
        request = self.session.prepare(event.text)
        self.composer.clear()
        self._drafts.put(self._server_id, self._draft_key, "")
        self._save_drafts()
        self.send(request)

    @property
    def answering(self) -> bool:
        """True while an answer streams in."""
        return any(w.is_running for w in self.workers if w.group == "run")

    @work(exit_on_error=False, exclusive=True, group="run")
    async def send(self, request: RunRequest) -> None:
        """Send a message and show the answer as it streams."""
        self._request = request
        conversation = self.session.conversation
        self.header.state = "streaming"
        try:
            async for update in self.session.send(request):
                if self.session.conversation is not conversation:
                    conversation = self.session.conversation
                if isinstance(update.event, StreamTruncated):
                    self._start_waiting()
                    continue
                if isinstance(update.event, Recovered):
                    self._end_waiting()
                    self.transcript.show(self.session.conversation)
                    continue
                self.transcript.sync_turns()
                event = update.event
                delta = event.delta if isinstance(event, agui.TextMessageContentEvent) else None
                self.transcript.apply(update.change, delta)
                if isinstance(event, ActionProposed):
                    self._count_pending()
                    self.call_after_refresh(self._offer_focus, update.change)
        except TalkieError as error:
            self._show_send_failure(request, error)
        finally:
            self._end_waiting()
            self.header.state = "connected" if self.header.state != "offline" else "offline"
        if conversation.usage:
            self.header.set_usage(conversation.usage)
        if request.finished or request.error is not None:
            self._request = None
        thread_id = self.session.thread_id
        if self._draft_key == NEW and thread_id and self.session.conversation is conversation:
            self._switch_draft(thread_id, restore=False)  # the new thread got its id
        self._count_pending()
        self.refresh_threads()

    def _show_send_failure(self, request: RunRequest, error: TalkieError) -> None:
        """Keep the message: mark it not delivered, with the server's words and a retry."""
        self.transcript.sync_turns()  # the failure may come before the message was shown
        turn = self._user_turn(request)
        notice = NoticePart(
            f"{error.message} {error.retry_hint}",
            code=getattr(error, "code", None),
            retryable=True,  # the message is kept: re-sending it is always possible
            retry_after=error.retry_after if isinstance(error, RateLimitedError) else None,
        )
        if turn is not None:
            self.transcript.notice_for(turn, notice)
        if not self._sign_in_needed(error) and not error.retryable:
            self.notify(error.message, severity="error", markup=False)

    def _user_turn(self, request: RunRequest) -> Turn | None:
        for turn in reversed(self.session.conversation.turns):
            if turn.id == request.message_id:
                return turn
        return None

    @on(RetryRequested)
    def _retry(self, event: RetryRequested) -> None:
        event.stop()
        if self.answering:
            return
        failed = self._request or self._last_request()
        if failed is None:
            return
        # Same message id: the server ignores a message it already stored (§5).
        self.send(RunRequest(failed.text, thread_id=failed.thread_id, message_id=failed.message_id))

    def _last_request(self) -> RunRequest | None:
        """Rebuild the request of the last user message (to retry a failed answer)."""
        for turn in reversed(self.session.conversation.turns):
            if turn.role == "user":
                return RunRequest(turn.text, thread_id=self.session.thread_id, message_id=turn.id)
        return None

    def _start_waiting(self) -> None:
        """The stream broke: "reconnecting", with the seconds waited, until the answer is in."""
        began = time.monotonic()
        self.header.waited = 0
        self.header.state = "reconnecting"

        def tick() -> None:
            self.header.waited = int(time.monotonic() - began)

        self._wait_timer = self.set_interval(1.0, tick)
        self.refresh_bindings()

    def _end_waiting(self) -> None:
        if self._wait_timer is None:
            return
        self._wait_timer.stop()
        self._wait_timer = None
        self.refresh_bindings()

    def action_stop_waiting(self) -> None:
        """Esc while reconnecting: stop waiting for the answer; the message stays with Retry.

        Only the wait ends: the run goes on on the server (disconnect is not cancel), so its
        answer is in the thread when it is opened again.
        """
        self.session.stop_waiting()

    def action_cancel_run(self) -> None:
        """Esc: stop the answer being streamed (cancelRun, §5)."""
        if self.answering and self._request is not None:
            self.cancel_run(self._request.run_id)

    @work(exit_on_error=False, group="cancel")
    async def cancel_run(self, run_id: str) -> None:
        """Ask the server to stop a run."""
        try:
            await self.client.cancel_run(run_id)
        except TalkieError as error:
            if self._sign_in_needed(error):
                return
            self.notify(
                _("Could not stop the answer: {error}").format(error=error.message),
                severity="warning",
                markup=False,
            )

    # --- actions (§8) --------------------------------------------------------------------

    @on(DecisionRequested)
    def _decision_requested(self, event: DecisionRequested) -> None:
        event.stop()
        card = event.control if isinstance(event.control, ActionCard) else None
        call = self._call
        window = call.consent_window if call is not None else None
        # The button and the voice window race for the same action: only one decides.
        if (
            call is not None
            and window is not None
            and window.action_id == event.action.id
            and not call.decide_by_button(event.decision)
        ):
            if card is not None:
                card.set_busy(False)
            self.notify(_("This action was already decided by voice."), markup=False)
            return
        self.decide(event, card)

    @work(exit_on_error=False, group="decisions")
    async def decide(self, event: DecisionRequested, card: ActionCard | None) -> None:
        """Send a human decision and show its outcome."""
        conversation = self.session.conversation
        if card is not None:
            card.set_busy(True)
        try:
            result = await self.client.decide(event.action, event.decision, "button")
        except TalkieError as error:
            self._sign_in_needed(error)
            if card is not None:
                card.set_busy(False)
                card.show_error(explain_decision_error(error))
            await self._refresh_pending_actions(conversation)
            return
        self._show_decision(conversation, result, card)

    def _show_decision(
        self, conversation: Conversation, result: DecisionResult, card: ActionCard | None
    ) -> None:
        """Show a decision's outcome (by button or by voice): the card, and result cards."""
        changes = conversation.apply_decision(result)
        if conversation is self.session.conversation:
            self.transcript.sync_turns()  # result cards come as a new answer
            self.transcript.apply(changes[0])
        if card is not None:
            card.set_busy(False)
            card.update_action(result.action)
            if self.focused is card and not card.action.is_open:
                self.composer.focus()  # decided: back to writing
        self._follow_running(result.action)
        self._count_pending()

    def _follow_running(self, action: Action, checks_left: int = FOLLOW_CHECKS) -> None:
        """A `running` action ends on the server after its undo window: ask for it then."""
        if action.status != "running" or checks_left <= 0:
            return
        deadline = action.undo_until.timestamp() if action.undo_until else time.time()
        delay = max(1.0, deadline - time.time() + 0.5)
        self.set_timer(delay, lambda: self.refresh_action(action.id, checks_left - 1))

    @work(exit_on_error=False, group="decisions")
    async def refresh_action(self, action_id: str, checks_left: int = 0) -> None:
        """Show the server's current state of one action (§8 GET action)."""
        try:
            fresh = await self.client.action(action_id)
        except TalkieError:
            return
        conversation = self.session.conversation
        before = conversation.actions.get(action_id)
        was_running = before is not None and before.action.status == "running"
        self.transcript.apply(conversation.update_action(fresh))
        self._follow_running(fresh, checks_left)
        self._count_pending()
        # What an undo window let through is posted into the thread by the server (§8 names
        # no event for it), so the result card comes from the stored thread.
        thread_id = conversation.thread_id
        if was_running and fresh.status == "done" and thread_id and not self._busy_elsewhere:
            self.open_thread(thread_id)

    @property
    def _busy_elsewhere(self) -> bool:
        """True while an answer streams or a call is on: reloading the thread would cut in."""
        return self.answering or self._call is not None

    def _offer_focus(self, part: object) -> None:
        """Focus a new action card, unless the person is typing (its guard eats stray keys)."""
        card = self.transcript.view_of_part(part) if isinstance(part, ActionPart) else None
        composer_busy = self.composer.text.strip() != "" or self.focused not in (
            None,
            self.composer,
        )
        if isinstance(card, ActionCard) and card.action.status == "pending" and not composer_busy:
            card.focus()
            card.scroll_visible()

    def action_focus_pending(self) -> None:
        """Move focus to the next action waiting for a decision."""
        pending = [c for c in self.transcript.action_cards() if c.action.status == "pending"]
        if not pending:
            self.notify(_("No action is waiting for a decision."), markup=False)
            return
        focused = self.focused
        index = pending.index(focused) + 1 if focused in pending else 0
        card = pending[index % len(pending)]
        card.focus()
        card.scroll_visible()

    # --- voice (§10) ---------------------------------------------------------------------

    @property
    def voice_offered(self) -> bool:
        """True when this server has voice endpoints and lets the signed-in person use them."""
        return self.client.server.has_endpoint("voiceSessions") and self._voice_allowed

    @property
    def call(self) -> VoiceCall | None:
        """The voice call that is on (or connecting), if any."""
        return self._call

    @property
    def voice_bar(self) -> VoiceBar | None:
        """The voice bar, while a call is on."""
        return self._voice_bar

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Voice keys only where they do something (the footer shows just those)."""
        call = self._call
        if action in ("stop_waiting", "cancel_run"):  # one Esc: the wait, else the answer
            return (self._wait_timer is not None) == (action == "stop_waiting")
        if action == "voice_call":
            return call is None and self.voice_offered
        if action == "hang_up":
            return call is not None
        if action in ("talk", "voice_mode", "barge_in"):
            if call is None:
                return False
            state = call.status.state
            if state in ("connecting", "ended"):
                return False
            if action == "talk":
                return call.mode == "push_to_talk"
            if action == "barge_in":
                return state == "assistant_speaking"
        return True

    def _in_call_explain(self) -> bool:
        """True (after saying so) when a call is on: its thread stays open until hang-up."""
        if self._call is None:
            return False
        self.notify(
            _("The voice call belongs to this thread: hang up (F5) first."),
            severity="warning",
            markup=False,
        )
        return True

    def action_voice_call(self) -> None:
        """Start a voice call in the open thread (a new voice thread when none is open)."""
        if self._call is not None or not self.voice_offered:
            return
        if self.answering:
            self.notify(
                _("Wait for the answer, or press Esc to stop it, then call."),
                severity="warning",
                markup=False,
            )
            return
        self.start_call()

    @work(exit_on_error=False, exclusive=True, group="voice")
    async def start_call(self) -> None:
        """Open the audio devices and the call; any failure is said plainly, chat goes on."""
        from talkie_tui.voice.audio import AudioUnavailable
        from talkie_tui.voice.call import VoiceCall, VoiceConnectionError

        conversation = self.session.conversation
        try:
            audio = voice_ui.make_audio(self._voice)
        except AudioUnavailable as error:
            self._voice_failed(_("Voice is disabled: {reason}").format(reason=error.reason))
            return

        def listener(update: CallUpdate) -> None:
            # Called from the call's tasks and aiortc callbacks: hand over to the message queue.
            self.post_message(voice_ui.VoiceUpdate(call, update))

        call = VoiceCall(
            self.client,
            microphone=audio.microphone,
            speaker=audio.speaker,
            listener=listener,
            thread_id=conversation.thread_id,
            locale=self.client.server.manifest.locale,
            allow_http_signaling=self._voice.allow_http_signaling,
        )
        self._call, self._call_conversation = call, conversation
        self._voice_tools.clear()
        self._show_voice_bar()
        try:
            session = await call.start()
        except asyncio.CancelledError:
            self._call_over(call, _("The call was not started."))
            raise
        except AudioUnavailable as error:
            self._call_over(call)
            self._voice_failed(_("Voice is disabled: {reason}").format(reason=error.reason))
            return
        except VoiceConnectionError as error:
            self._call_over(call)
            self._voice_failed(
                _("The call could not be set up: {error}").format(error=error.message)
            )
            return
        except TalkieError as error:
            self._call_over(call)
            if not self._sign_in_needed(error):
                self._voice_failed(
                    _("Voice could not start: {error} {hint}").format(
                        error=error.message, hint=error.retry_hint
                    )
                )
            return
        except Exception as error:  # an unforeseen failure: words, and chat goes on
            self._call_over(call)
            self._voice_failed(
                _("Voice could not start: {error}").format(error=f"{type(error).__name__}: {error}")
            )
            return
        if conversation.thread_id is None:
            conversation.thread_id = session.thread_id  # typed messages continue this thread
        self.refresh_threads()
        self.query_one(ThreadList).highlight_thread(session.thread_id)

    def _voice_failed(self, text: str) -> None:
        self.notify(
            _("{problem} Chat works as before.").format(problem=text.rstrip()),
            severity="error",
            markup=False,
            timeout=10,
        )

    def _show_voice_bar(self) -> None:
        bar = self._voice_bar = VoiceBar(id="voice-bar")
        self.query_one("#main").mount(bar, before=self.composer)
        self._voice_timer = self.set_interval(VOICE_TICK, self._voice_tick)
        self.refresh_bindings()

    def _voice_tick(self) -> None:
        call, bar = self._call, self._voice_bar
        if call is not None and bar is not None:
            bar.tick(call.level.fraction, call.elapsed, time.monotonic())

    def _call_over(self, call: VoiceCall, reason: str | None = None) -> None:
        """The call ended (or never started): remove the bar, free the keys; idempotent."""
        if self._call is not call:
            return
        self._call = self._call_conversation = None
        if self._voice_timer is not None:
            self._voice_timer.stop()
            self._voice_timer = None
        if self._voice_bar is not None:
            self._voice_bar.remove()
            self._voice_bar = None
        self.refresh_bindings()
        if reason:
            self.notify(reason, markup=False)

    def action_hang_up(self) -> None:
        """End the voice call (while it connects: stop connecting)."""
        call = self._call
        if call is None:
            return
        if call.session is None or call.status.state == "connecting":
            for worker in self.workers:
                if worker.group == "voice":
                    worker.cancel()
            return
        self.run_worker(self.end_call(), group="voice-end", exit_on_error=False)

    async def end_call(self, reason: str | None = None) -> None:
        """Hang up: the final usage report, then the peer and audio closed; safe without a call."""
        call = self._call
        if call is None:
            return
        reason = reason or _("You hung up.")
        for worker in self.workers:
            if worker.group == "voice" and worker.is_running:
                worker.cancel()  # still connecting: start() cleans up after itself
        try:
            await call.hang_up(reason)
        except Exception as error:  # hang_up stopped half-way: close what it may have left
            self.log.error(f"hang-up failed: {error!r}")
            if call.peer is not None:
                with contextlib.suppress(Exception):
                    await call.peer.close()
            for device in (call.microphone, call.speaker):
                with contextlib.suppress(Exception):
                    await device.stop()
        self._call_over(call, _("The voice call ended: {reason}").format(reason=reason))

    async def on_unmount(self) -> None:
        """Leaving the screen (another server, quitting) hangs up: no peer or stream is left."""
        self._save_drafts()
        await self.end_call(_("The chat was closed."))

    def action_talk(self) -> None:
        """Push-to-talk: start talking; press again when done (terminals report no release)."""
        if self._call is not None:
            self._call.toggle_talk()

    def action_barge_in(self) -> None:
        """Interrupt the assistant while it speaks."""
        if self._call is not None:
            self._call.barge_in()

    def action_voice_mode(self) -> None:
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
        self.notify(words, markup=False)

    @on(voice_ui.VoiceUpdate)
    def _voice_update(self, message: voice_ui.VoiceUpdate) -> None:
        message.stop()
        call, update = message.call, message.update
        conversation = self._call_conversation
        if call is not self._call or conversation is None:
            return  # a late update of a call that is over
        from talkie_tui.voice import call as voice_call

        shown = conversation is self.session.conversation
        if isinstance(update, voice_call.CallStatus):
            self._voice_status(call, conversation, update)
        elif isinstance(update, voice_call.UserSaid | voice_call.AssistantSaid):
            role: Literal["user", "assistant"] = (
                "user" if isinstance(update, voice_call.UserSaid) else "assistant"
            )
            conversation.add_spoken(role, update.item_id, update.text)
            if shown:
                self.transcript.sync_turns()
        elif isinstance(update, voice_call.ToolStarted):
            label = clean_text(update.label)
            self._voice_tools[update.call_id] = (update.name, label)
            if self._voice_bar is not None:
                self._voice_bar.show_tool(label)
        elif isinstance(update, voice_call.ToolFinished):
            self._voice_tool_finished(conversation, update, shown=shown)
        elif isinstance(update, voice_call.ConsentHeard):
            line = voice_ui.describe_heard(update.heard)
            if line and self._voice_bar is not None:
                self._voice_bar.show_heard(line)
        elif isinstance(update, voice_call.VoiceDecided):
            if self._voice_bar is not None:
                self._voice_bar.show_heard("")
            self._show_decision(conversation, update.result, None)
            done = (
                _("Confirmed by voice.")
                if update.decision.outcome == "confirm"
                else _("Cancelled by voice.")
            )
            self.notify(done, markup=False)
        elif isinstance(update, voice_call.Notice):
            self._voice_notice(update)
        elif isinstance(update, voice_call.CallEnded):
            self._call_over(call, _("The voice call ended: {reason}").format(reason=update.reason))
            self.refresh_threads()  # the thread's title may have changed

    def _voice_status(
        self, call: VoiceCall, conversation: Conversation, status: CallStatus
    ) -> None:
        bar = self._voice_bar
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
            self.refresh_bindings()

    def _voice_tool_finished(
        self, conversation: Conversation, update: ToolFinishedUpdate, *, shown: bool
    ) -> None:
        """A voice tool's cards and actions, shown as an answer like in chat (§10.2)."""
        if self._voice_bar is not None:
            self._voice_bar.show_tool("")
        name, label = self._voice_tools.pop(update.call_id, ("tool", _("Running a tool…")))
        if update.error is None and not update.events:
            return  # nothing to show (e.g. a call id the server had already seen)
        end = {"ok": False, "error": update.error} if update.error else {"ok": True}
        events = [
            agui.ToolCallStartEvent(
                tool_call_id=update.call_id, tool_call_name=name, metadata={"label": label}
            ),
            agui.ToolCallEndEvent(tool_call_id=update.call_id, metadata=end),
            *update.events,
        ]
        changes = conversation.add_answer(events)
        conversation.turns[-1].channel = "voice"
        if not shown:
            return
        self.transcript.sync_turns()
        for change in changes:
            if isinstance(change, ActionPart):
                self._count_pending()
                self.call_after_refresh(self._offer_focus, change)

    def _voice_notice(self, notice: VoiceNotice) -> None:
        from talkie_tui.voice.call import PROVIDER_NOTICE

        # The notice may come in English or in the UI's language: either starts the same way.
        starts = {text.split("{")[0] for text in (PROVIDER_NOTICE, _(PROVIDER_NOTICE))} - {""}
        if notice.text.startswith(tuple(starts)):
            if self._provider_notice_shown:
                return  # where the audio goes is said once per session
            self._provider_notice_shown = True
        self.notify(
            clean_text(notice.text),
            severity=_NOTICE_SEVERITY.get(notice.level, "information"),
            markup=False,
        )

    # --- links and files -----------------------------------------------------------------

    @on(OpenLinkRequested)
    def _open_link(self, event: OpenLinkRequested) -> None:
        event.stop()
        target = check_link(event.url, self.client.server.origin)
        if not target.allowed:
            self.notify(
                _("Not opened ({reason}): {url}").format(reason=target.reason, url=target.url),
                severity="warning",
                markup=False,
            )
            return
        if not open_in_browser(target):
            self.app.copy_to_clipboard(target.url)
            self.notify(
                _("No browser here; the link was copied: {url}").format(url=target.url),
                markup=False,
            )

    @on(DownloadRequested)
    def _download_requested(self, event: DownloadRequested) -> None:
        event.stop()
        self.download(event.block)

    @work(exit_on_error=False, group="downloads")
    async def download(self, block: FileBlock) -> None:
        """Download a same-origin file with the token; other files open in the browser."""
        if not self.client.is_same_origin(block.url):
            self.post_message(OpenLinkRequested(block.url, block.name))
            return
        folder = self._downloads_dir
        target = _free_path(folder, block.name)
        received = 0
        try:
            folder.mkdir(parents=True, exist_ok=True)
            async with self.client.open_stream(block.url) as response:
                total = int(response.headers.get("content-length") or block.size or 0)
                with target.open("wb") as file:
                    async for chunk in response.aiter_bytes():
                        file.write(chunk)
                        received += len(chunk)
                        if total:
                            percent = received * 100 // total
                            self.header.set_activity(f"⇣ {block.name} {percent}%")
        except (TalkieError, OSError, httpx.HTTPError) as error:
            # A connection lost mid-file is an httpx error: no half file is left behind.
            target.unlink(missing_ok=True)
            if isinstance(error, TalkieError):
                self._sign_in_needed(error)
            message = error.message if isinstance(error, TalkieError) else str(error) or _("failed")
            self.notify(
                _("{name} was not downloaded: {error}").format(name=block.name, error=message),
                severity="error",
                markup=False,
            )
            return
        finally:
            self.header.set_activity("")
        self.notify(_("Saved {path}").format(path=target), markup=False)

    # --- comforts ------------------------------------------------------------------------

    def action_toggle_sidebar(self) -> None:
        """Show or hide the thread list."""
        sidebar = self.query_one("#sidebar")
        sidebar.display = self._sidebar_chosen = not sidebar.display

    def action_new_thread(self) -> None:
        """Start a new thread."""
        if self._in_call_explain():
            return
        if self.answering:
            self.notify(_("Stop the answer first (Esc)."), severity="warning", markup=False)
            return
        self.session = ChatSession(self.client)
        self._request = None
        self.transcript.show(self.session.conversation)
        self._switch_draft(NEW)
        self._count_pending()
        self.composer.focus()

    def action_focus_composer(self) -> None:
        """Put the cursor in the composer."""
        self.composer.focus()

    def action_refresh_threads(self) -> None:
        """Reload the thread list."""
        self.refresh_threads()

    def action_copy_answer(self) -> None:
        """Copy the last answer's text to the clipboard (OSC 52)."""
        for turn in reversed(self.session.conversation.turns):
            if turn.role == "assistant" and turn.text:
                self.app.copy_to_clipboard(turn.text)
                self.notify(_("The last answer was copied."), markup=False)
                return
        self.notify(_("There is no answer to copy yet."), markup=False)

    def action_pick(self) -> None:
        """Choose a link to open, or a code block or an answer to copy (newest first)."""
        items: list[PickItem] = []
        for turn in reversed(self.session.conversation.turns):
            if turn.role != "assistant":
                continue
            text = turn.text
            items += [
                PickItem("link", link.label or link.url, link.url)
                for link in render_markdown(text).links
            ]
            items += [
                PickItem("link", p.link.label or p.link.url, p.link.url)
                for p in turn.parts
                if isinstance(p, LinkPart)
            ]
            items += [PickItem("code", code, code) for code in code_blocks(text)]
            if text:
                items.append(PickItem("answer", text, text))
        if not items:
            self.notify(_("There is nothing to open or copy yet."), markup=False)
            return
        self.app.push_screen(PickerScreen(items), self._picked)

    def _picked(self, item: PickItem | None) -> None:
        if item is None:
            return
        if item.kind == "link":
            self.post_message(OpenLinkRequested(item.value, item.label))
        else:
            self.app.copy_to_clipboard(item.value)
            self.notify(
                _("Copied the code block.") if item.kind == "code" else _("Copied the answer."),
                markup=False,
            )

    def action_export_thread(self) -> None:
        """Save the thread as a Markdown file in the downloads folder."""
        conversation = self.session.conversation
        if not conversation.turns:
            self.notify(_("The thread is empty."), markup=False)
            return
        title = conversation.turns[0].text[:40] or "thread"
        stamp = datetime.now().strftime("%Y-%m-%d-%H%M")
        target = _free_path(self._downloads_dir, f"talkie-{_slug(title)}-{stamp}.md")
        try:
            self._downloads_dir.mkdir(parents=True, exist_ok=True)
            target.write_text(
                conversation_markdown(conversation, self.client.server.manifest.name),
                encoding="utf-8",
            )
        except OSError as error:
            self.notify(
                _("Not exported: {error}").format(error=error), severity="error", markup=False
            )
            return
        self.notify(_("Exported to {path}").format(path=target), markup=False)


def _slug(text: str) -> str:
    return re.sub(r"[^\w-]+", "-", text, flags=re.UNICODE).strip("-").lower() or "thread"


def _free_path(folder: Path, name: str) -> Path:
    """`folder/name`, or `name (2)` etc. when taken; the name is reduced to a safe file name."""
    safe = Path(name.replace("\\", "/")).name.strip(". ") or "download"
    stem, suffix = Path(safe).stem, Path(safe).suffix
    candidate = folder / safe
    number = 2
    while candidate.exists():
        candidate = folder / f"{stem} ({number}){suffix}"
        number += 1
    return candidate
