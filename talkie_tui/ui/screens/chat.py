"""The chat screen: header, thread list, transcript and composer; all network work in workers.

The screen composes, shows and routes. The voice call (§10) is a `CallController`: F5 starts a
call in the open thread and hangs up, F6 (or Ctrl+Space) talks, F7 switches to hands-free, Esc
interrupts the assistant; its `VoiceUpdate` messages come here and go on to it. Links, files,
copies and the export are `Takeaways`; the composer's drafts are `ComposerDrafts`.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.message import Message
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from talkie_tui.backends.base import Backend, Outgoing
from talkie_tui.chat.conversation import Change, Conversation
from talkie_tui.chat.turns import ActionPart, NoticePart, Turn
from talkie_tui.chat.vocabulary import Action, DecisionResult, FileBlock
from talkie_tui.config import save_logo
from talkie_tui.core.errors import RateLimitedError, TalkieError, UnauthorizedError
from talkie_tui.i18n import N_, _

from .. import voice as voice_ui
from ..call_controller import BARGE_IN_BINDING, CALL_BINDINGS, CallController
from ..drafts import NEW, ComposerDrafts
from ..localized import LocalizedBindings
from ..messages import DecisionRequested, DownloadRequested, OpenLinkRequested, RetryRequested
from ..takeaways import Takeaways
from ..waiting import AnswerWait
from ..widgets.action_card import ActionCard, explain_decision_error
from ..widgets.composer import Composer
from ..widgets.footer import TalkieFooter
from ..widgets.header import WIDE, TalkieHeader
from ..widgets.thread_list import ThreadList
from ..widgets.transcript import Transcript
from ..widgets.voice_bar import VoiceBar
from ..widgets.welcome import Welcome
from .confirm import ConfirmScreen

if TYPE_CHECKING:
    from talkie_tui.voice.call import VoiceCall

__all__ = ["ChatScreen"]

FOLLOW_CHECKS = 10  # how often a still-running action is asked for before we stop asking


class ChatScreen(LocalizedBindings, Screen[None]):
    """Chat with one server's agent."""

    HELP_GROUP = N_("Chat screen")
    BINDINGS: ClassVar[list[BindingType]] = [
        # Before "Stop answer": while the assistant speaks in a call, Esc interrupts it.
        BARGE_IN_BINDING,
        # While "reconnecting" (a broken stream's answer is awaited), Esc stops the wait.
        Binding("escape", "stop_waiting", N_("Stop waiting"), show=True),
        Binding("escape", "cancel_run", N_("Stop answer"), show=True),
        *CALL_BINDINGS,
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
        backend: Backend,
        *,
        thread_id: str | None = None,
        downloads_dir: Path | None = None,
        show_sidebar: bool = True,
        newline_key: str = "ctrl+j",
        voice: voice_ui.VoiceOptions | None = None,
    ) -> None:
        super().__init__()
        self.backend = backend
        self.session = backend.new_session()
        self.voice = CallController(self, backend, voice or voice_ui.VoiceOptions())
        self.takeaways = Takeaways(self, backend, downloads_dir or Path.home() / "Downloads")
        self.drafts = ComposerDrafts(self, lambda: self.composer, backend.info.server_id, thread_id)
        self._waiting = AnswerWait(self, lambda: self.header)
        self._initial_thread = thread_id
        self._show_sidebar = show_sidebar
        self._newline_key = newline_key
        self._sidebar_chosen: bool | None = None  # the person's own toggle wins over the width
        self._request: Outgoing | None = None  # the run in flight, or the last failed one

    @property
    def client(self) -> Any:
        """The backend's wire client where it has one (talkie/1: the app renews sign-in on it)."""
        return getattr(self.backend, "client", None)

    # --- layout --------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        info = self.backend.info
        yield TalkieHeader(info.name, id="header")
        with Horizontal(id="body"):
            yield ThreadList(id="sidebar")
            with Vertical(id="main"):
                welcome = Welcome.from_info(info, newline_key=self._newline_key)
                yield Transcript(welcome=welcome, id="transcript")
                yield Composer(
                    max_chars=info.max_message_chars,
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
        self.drafts.restore()
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

    def sign_in_needed(self, error: TalkieError) -> bool:
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
            account = await self.backend.account()
        except TalkieError as error:
            self.header.state = "offline"
            if not self.sign_in_needed(error):
                self.notify(f"{error.message} {error.retry_hint}", severity="error", markup=False)
            return
        self.header.state = "connected"
        self.header.set_user(account.user)
        self.header.set_usage(account.usage)
        self.voice.allowed = account.voice_allowed
        self.transcript.set_voice_allowed(account.voice_allowed)
        self.refresh_bindings()

    @work(exit_on_error=False, exclusive=True, group="logo")
    async def load_logo(self) -> None:
        """Fetch the brand logo (checked before decoding); a bad one is simply not shown."""
        data = await self.backend.logo()
        if data is not None:
            self.header.set_logo(data)
            save_logo(self.backend.info.server_id, data)

    @work(exit_on_error=False, exclusive=True, group="threads")
    async def refresh_threads(self) -> None:
        """Reload the thread list."""
        try:
            threads = await self.backend.threads()
        except TalkieError as error:
            if self.sign_in_needed(error):
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
            if self.sign_in_needed(error):
                return
            self.notify(
                _("The thread could not be opened: {error}").format(error=error.message),
                severity="error",
                markup=False,
            )
            return
        self._request = None
        self.transcript.show(conversation)
        self.drafts.switch(thread_id)
        self._count_pending()
        await self._refresh_pending_actions(conversation)

    async def _refresh_pending_actions(self, conversation: Conversation) -> None:
        """Ask the server for the current state of actions shown as pending (§8 GET action)."""
        for part in list(conversation.actions.values()):
            if not part.action.is_open:
                continue
            try:
                fresh = await self.backend.action(part.action.id)
            except TalkieError:
                continue
            self.transcript.apply(conversation.update_action(fresh))
        self._count_pending()

    def _count_pending(self) -> None:
        actions = self.session.conversation.actions.values()
        self.header.pending_actions = sum(1 for part in actions if part.action.status == "pending")

    @on(ThreadList.Selected)
    def _thread_selected(self, event: ThreadList.Selected) -> None:
        if self.voice.holds_thread():
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
            await self.backend.delete_thread(thread_id)
        except TalkieError as error:
            if self.sign_in_needed(error):
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

    @on(Composer.Changed, "#composer")
    def _composer_changed(self, event: Composer.Changed) -> None:
        self.drafts.changed(event.text_area.text)

    def preserve(self) -> None:
        """Save the composer's text now: talkie is failing (see `CrashGuard`)."""
        with contextlib.suppress(NoMatches):  # a screen that failed before it was composed
            self.drafts.put(self.composer.text)
        self.drafts.save()

    # --- sending -------------------------------------------------------------------------

    @on(Composer.Submitted)
    def _submitted(self, event: Composer.Submitted) -> None:
        if self.voice.holds_composer():
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
        self.drafts.put("")
        self.drafts.save()
        self.send(request)

    @property
    def answering(self) -> bool:
        """True while an answer streams in."""
        return any(w.is_running for w in self.workers if w.group == "run")

    @work(exit_on_error=False, exclusive=True, group="run")
    async def send(self, request: Outgoing) -> None:
        """Send a message and show the answer as it streams."""
        self._request = request
        conversation = self.session.conversation
        self.header.state = "streaming"
        try:
            async for update in self.session.send(request):
                if self.session.conversation is not conversation:
                    conversation = self.session.conversation
                if update.lost:
                    self._waiting.start()
                    continue
                if update.recovered is not None:
                    self._waiting.end()
                    self.transcript.show(self.session.conversation)
                    continue
                self.transcript.sync_turns()
                self.transcript.apply(update.change, update.delta)
                if update.proposes_action:
                    self.offer_action(update.change)
        except TalkieError as error:
            self._show_send_failure(request, error)
        finally:
            self._waiting.end()
            self.header.state = "connected" if self.header.state != "offline" else "offline"
        if conversation.usage:
            self.header.set_usage(conversation.usage)
        if request.settled:
            self._request = None
        thread_id = self.session.thread_id
        if self.drafts.key == NEW and thread_id and self.session.conversation is conversation:
            self.drafts.switch(thread_id, restore=False)  # the new thread got its id
        self._count_pending()
        self.refresh_threads()

    def _show_send_failure(self, request: Outgoing, error: TalkieError) -> None:
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
        if not self.sign_in_needed(error) and not error.retryable:
            self.notify(error.message, severity="error", markup=False)

    def _user_turn(self, request: Outgoing) -> Turn | None:
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
        self.send(self.session.again(failed.text, failed.message_id))

    def _last_request(self) -> Outgoing | None:
        """Rebuild the request of the last user message (to retry a failed answer)."""
        for turn in reversed(self.session.conversation.turns):
            if turn.role == "user":
                return self.session.again(turn.text, turn.id)
        return None

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
            await self.backend.stop(run_id)
        except TalkieError as error:
            if self.sign_in_needed(error):
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
        if self.voice.decided_by_voice(event.action.id, event.decision):
            if card is not None:
                card.set_busy(False)
            return
        self.decide(event, card)

    @work(exit_on_error=False, group="decisions")
    async def decide(self, event: DecisionRequested, card: ActionCard | None) -> None:
        """Send a human decision and show its outcome."""
        conversation = self.session.conversation
        if card is not None:
            card.set_busy(True)
        try:
            result = await self.backend.decide(event.action, event.decision, "button")
        except TalkieError as error:
            self.sign_in_needed(error)
            if card is not None:
                card.set_busy(False)
                card.show_error(explain_decision_error(error))
            await self._refresh_pending_actions(conversation)
            return
        self.show_decision(conversation, result, card)

    def show_decision(
        self, conversation: Conversation, result: DecisionResult, card: ActionCard | None = None
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
            fresh = await self.backend.action(action_id)
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
        return self.answering or self.voice.call is not None

    def offer_action(self, part: Change) -> None:
        """A new action waits for a decision: count it, and offer its card the focus."""
        self._count_pending()
        self.call_after_refresh(self._offer_focus, part)

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

    # --- voice (§10): the call is the controller's; the screen starts, ends and routes ---

    @property
    def voice_offered(self) -> bool:
        """True when this server has voice endpoints and lets the signed-in person use them."""
        return self.voice.offered

    @property
    def call(self) -> VoiceCall | None:
        """The voice call that is on (or connecting), if any."""
        return self.voice.call

    @property
    def voice_bar(self) -> VoiceBar | None:
        """The voice bar, while a call is on."""
        return self.voice.bar

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Voice keys only where they do something (the footer shows just those)."""
        if action in ("stop_waiting", "cancel_run"):  # one Esc: the wait, else the answer
            return self._waiting.waiting == (action == "stop_waiting")
        allowed = self.voice.allows(action)
        return True if allowed is None else allowed

    def action_voice_call(self) -> None:
        """Start a voice call in the open thread (a new voice thread when none is open)."""
        if self.voice.call is not None or not self.voice.offered:
            return
        if self.answering:
            self.notify(
                _("Wait for the answer, or press Esc to stop it, then call."),
                severity="warning",
                markup=False,
            )
            return
        self.voice.start()

    def action_hang_up(self) -> None:
        """End the voice call (while it connects: stop connecting)."""
        self.voice.hang_up()

    async def end_call(self, reason: str | None = None) -> None:
        """Hang up: the final usage report, then the peer and audio closed; safe without a call."""
        await self.voice.end(reason)

    async def on_unmount(self) -> None:
        """Leaving the screen (another server, quitting) hangs up: no peer or stream is left."""
        self.drafts.save()
        await self.end_call(_("The chat was closed."))

    def action_talk(self) -> None:
        """Push-to-talk: start talking; press again when done (terminals report no release)."""
        self.voice.talk()

    def action_barge_in(self) -> None:
        """Interrupt the assistant while it speaks."""
        self.voice.barge_in()

    def action_voice_mode(self) -> None:
        """Switch between push-to-talk and hands-free (the provider detects speech)."""
        self.voice.switch_mode()

    @on(voice_ui.VoiceUpdate)
    def _voice_update(self, message: voice_ui.VoiceUpdate) -> None:
        message.stop()
        self.voice.update(message.call, message.update)

    def mount_voice_bar(self, bar: VoiceBar) -> None:
        """Show a call's voice bar above the composer."""
        self.query_one("#main").mount(bar, before=self.composer)

    def threads_changed(self, highlight: str | None = None) -> None:
        """Reload the thread list (a call made or renamed a thread), highlighting `highlight`."""
        self.refresh_threads()
        if highlight is not None:
            self.query_one(ThreadList).highlight_thread(highlight)

    # --- links and files: the takeaways' work, routed from the widgets' messages ---------

    @on(OpenLinkRequested)
    def _open_link(self, event: OpenLinkRequested) -> None:
        event.stop()
        self.takeaways.open_link(event.url)

    @on(DownloadRequested)
    def _download_requested(self, event: DownloadRequested) -> None:
        event.stop()
        self.download(event.block)

    def download(self, block: FileBlock) -> Worker[None]:
        """Download a same-origin file with the token; other files open in the browser."""
        return self.takeaways.download(block)

    # --- comforts ------------------------------------------------------------------------

    def action_toggle_sidebar(self) -> None:
        """Show or hide the thread list."""
        sidebar = self.query_one("#sidebar")
        sidebar.display = self._sidebar_chosen = not sidebar.display

    def action_new_thread(self) -> None:
        """Start a new thread."""
        if self.voice.holds_thread():
            return
        if self.answering:
            self.notify(_("Stop the answer first (Esc)."), severity="warning", markup=False)
            return
        self.session = self.backend.new_session()
        self._request = None
        self.transcript.show(self.session.conversation)
        self.drafts.switch(NEW)
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
        self.takeaways.copy_answer()

    def action_pick(self) -> None:
        """Choose a link to open, or a code block or an answer to copy (newest first)."""
        self.takeaways.pick()

    def action_export_thread(self) -> None:
        """Save the thread as a Markdown file in the downloads folder."""
        self.takeaways.export()
