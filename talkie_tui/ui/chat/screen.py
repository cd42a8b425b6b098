"""The chat screen: header, thread list, transcript and composer; all network work in workers.

The screen composes, shows and routes. The voice call (§10) is a `CallController`: F5 starts a
call in the open thread and hangs up, F6 (or Ctrl+Space) talks, F7 switches to hands-free, Esc
interrupts the assistant (the keys' actions are `CallKeys`); its `VoiceUpdate` messages come here
and go on to it. The actions' decisions are `Decisions`; the thread list is `Threads`; who is
signed in, their usage and the logo are `ServerStatus`; links, files, copies and the export are
`Takeaways`; the composer's drafts are `ComposerDrafts`; the message the next one answers is
`Replies`'s. The header's connection state and count of pending actions are derived in one
place, `show_state`, after every change.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, ClassVar, TypeVar, cast

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.message import Message
from textual.screen import Screen
from textual.widget import Widget
from textual.worker import Worker, WorkerState

from talkie_tui.backends.base import Backend, Outgoing, PacesReads, Update
from talkie_tui.chat.conversation import Conversation
from talkie_tui.chat.turns import NoticePart, Turn
from talkie_tui.chat.vocabulary import DecisionResult, FileBlock
from talkie_tui.core.errors import RateLimitedError, TalkieError, UnauthorizedError
from talkie_tui.i18n import N_, _
from talkie_tui.ui.chat import voice as voice_ui
from talkie_tui.ui.chat.attaching import PendingAttachments, attach_command, attachment_file_block
from talkie_tui.ui.chat.call_controller import BARGE_IN_BINDING, CALL_BINDINGS, CallController
from talkie_tui.ui.chat.call_keys import CallKeys
from talkie_tui.ui.chat.decisions import Decisions
from talkie_tui.ui.chat.dictation import CANCEL_BINDING, DICTATION_BINDINGS, Dictation
from talkie_tui.ui.chat.drafts import NEW, ComposerDrafts
from talkie_tui.ui.chat.earlier import EarlierPages
from talkie_tui.ui.chat.model_choice import ThreadModels
from talkie_tui.ui.chat.outbox import Outbox
from talkie_tui.ui.chat.questions import Questions
from talkie_tui.ui.chat.reach import Reach
from talkie_tui.ui.chat.replies import Replies
from talkie_tui.ui.chat.status import ServerStatus
from talkie_tui.ui.chat.steering import Steering
from talkie_tui.ui.chat.takeaways import Takeaways
from talkie_tui.ui.chat.taps import Taps
from talkie_tui.ui.chat.threads import Threads
from talkie_tui.ui.chat.waiting import AnswerWait
from talkie_tui.ui.messages import (
    AnswerRequested,
    DecisionRequested,
    DownloadRequested,
    OpenLinkRequested,
    QuickReplyChosen,
    ReplyRequested,
    RetryRequested,
    SecretProvided,
    TapRequested,
)
from talkie_tui.ui.screens.attach_prompt import AttachPromptScreen
from talkie_tui.ui.screens.confirm import ConfirmScreen
from talkie_tui.ui.support.compositor import LineCompositor
from talkie_tui.ui.support.localized import LocalizedBindings
from talkie_tui.ui.widgets.activity import ActivityLine
from talkie_tui.ui.widgets.attachment import AttachmentView
from talkie_tui.ui.widgets.attachment_tray import AttachmentTray, Pending
from talkie_tui.ui.widgets.composer import Composer
from talkie_tui.ui.widgets.decision import DecisionView
from talkie_tui.ui.widgets.dictation_bar import DictationBar
from talkie_tui.ui.widgets.footer import TalkieFooter
from talkie_tui.ui.widgets.header import WIDE, TalkieHeader
from talkie_tui.ui.widgets.reply_bar import ReplyBar
from talkie_tui.ui.widgets.thread_list import ThreadList
from talkie_tui.ui.widgets.transcript import Transcript
from talkie_tui.ui.widgets.voice_bar import VoiceBar
from talkie_tui.ui.widgets.welcome import Welcome

__all__ = ["ChatScreen"]

W = TypeVar("W", bound=Widget)

STREAM_READ_PAUSE = 0.04
"""Seconds a read of a streamed answer rests after waiting for the network, so that the next
takes the tokens of about a frame at once (the answer is drawn 24 times a second, every 42 ms).
At 500 tokens/s in a terminal: 0.38 ms of CPU per token, against 0.41 at 0.03 and 0.44 at 0.02
(benchmarks/terminal_stream.py, one run)."""


class ChatScreen(CallKeys, LocalizedBindings, Screen[None]):
    """Chat with one server's agent."""

    HELP_GROUP = N_("Chat screen")
    BINDINGS: ClassVar[list[BindingType]] = [
        # While dictating, Esc throws the recording away (no call is on where dictation is).
        CANCEL_BINDING,
        # Before "Stop answer": while the assistant speaks in a call, Esc interrupts it.
        BARGE_IN_BINDING,
        # While "reconnecting" (a broken stream's answer is awaited), Esc stops the wait.
        Binding("escape", "stop_waiting", N_("Stop waiting"), show=True),
        # While the next message answers an earlier one and no answer runs, Esc drops the reply.
        Binding("escape", "cancel_reply", N_("Cancel reply"), show=True),
        Binding("escape", "cancel_run", N_("Stop answer"), show=True),
        # Ctrl+R retries the newest message or answer that failed, else reloads the threads.
        Binding("ctrl+r", "retry", N_("Retry")),
        *CALL_BINDINGS,
        *DICTATION_BINDINGS,
        Binding("ctrl+f", "attach", N_("Attach file")),
        Binding("ctrl+b", "toggle_sidebar", N_("Threads")),
        Binding("ctrl+n", "new_thread", N_("New thread")),
        Binding("ctrl+o", "focus_pending", N_("Next pending action")),
        Binding("ctrl+t", "copy_answer", N_("Copy answer")),
        Binding("ctrl+g", "pick", N_("Links & code")),
        Binding("ctrl+s", "export_thread", N_("Export")),
        Binding("ctrl+r", "refresh_threads", N_("Refresh threads"), show=False),
        Binding("ctrl+l", "focus_composer", N_("Composer"), show=False),
    ]

    class Ready(Message):
        """The composer is on screen with the focus: keys typed ahead may go into it."""

        def __init__(self, chat: ChatScreen) -> None:
            super().__init__()
            self.chat = chat

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
        drafts_file: Path | None = None,
    ) -> None:
        super().__init__()
        # While an answer streams, each frame repaints a few lines: paint only those.
        self._compositor = LineCompositor()
        self.backend = backend
        self.session = backend.new_session()
        # A thread given to open is this screen's from the start: a message sent before (or
        # without) its turns loading goes there, not into a new thread.
        self.session.conversation.thread_id = thread_id
        self.voice = CallController(self, backend, voice or voice_ui.VoiceOptions())
        self.decisions = Decisions(self, backend, self.voice)
        self.questions = Questions(self, backend)
        self.taps = Taps(self, backend)
        self.replies = Replies(self, backend, lambda: self.query_one(ReplyBar))
        self.earlier = EarlierPages(self, backend)
        self.threads = Threads(self, backend, lambda: self.query_one(ThreadList))
        self.reach = Reach(self, backend)
        self.steering = Steering(self, backend)
        self.status = ServerStatus(self, backend, self.voice)
        self.takeaways = Takeaways(self, backend, downloads_dir or Path.home() / "Downloads")
        self.drafts = ComposerDrafts(
            self, lambda: self.composer, backend.info.server_id, thread_id, drafts_file
        )
        self.outbox = Outbox(self.drafts.store, backend.info.server_id)
        self.attachments = PendingAttachments(self, backend, lambda: self.query_one(AttachmentTray))
        self.models = ThreadModels(self, backend)
        self.dictation = Dictation(self, backend, voice or voice_ui.VoiceOptions())
        self._waiting = AnswerWait(self, lambda: self.header, self.show_state)
        self._sending = False  # a message is on its way and its answer streams in
        self._initial_thread = thread_id
        self._show_sidebar = show_sidebar
        self._newline_key = newline_key
        self._sidebar_chosen: bool | None = None  # the person's own toggle wins over the width
        self._request: Outgoing | None = None  # the run in flight, or the last failed one
        self._request_files: list[Pending] = []  # the files that went with it
        self._reattached: str | None = None  # the session whose running turn is followed
        self._found: dict[type[Widget], Widget] = {}
        self._following: object | None = None  # the session followed live between answers

    @property
    def client(self) -> Any:
        """The backend's wire client where it has one (talkie/1: the app renews sign-in on it)."""
        return getattr(self.backend, "client", None)

    # --- layout --------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        info = self.backend.info
        yield TalkieHeader(info.name, id="header")
        with Horizontal(id="body"):
            yield ThreadList(id="sidebar", searchable=self.backend.info.capabilities.search)
            with Vertical(id="main"):
                welcome = Welcome.from_info(info, newline_key=self._newline_key)
                yield Transcript(welcome=welcome, on_change=self.show_state, id="transcript")
                yield ActivityLine(lambda: self.session.conversation, id="activity")
                yield AttachmentTray(id="attachments")
                yield DictationBar(id="dictation-bar")
                yield ReplyBar(id="reply-bar")
                yield Composer(
                    max_chars=info.max_message_chars,
                    newline_key=self._newline_key,
                    id="composer",
                )
        yield TalkieFooter()

    def _one(self, kind: type[W]) -> W:
        """The screen's one `kind` widget, found once: a query walks every widget before it,
        the transcript's too, and these are read many times a second while an answer streams.
        The screen composes them once and never replaces them (while it closes they are no
        longer attached, and a timer may still ask)."""
        found = self._found.get(kind)
        if found is None:
            found = self._found[kind] = self.query_one(kind)
        return cast("W", found)

    @property
    def header(self) -> TalkieHeader:
        """The header widget."""
        return self._one(TalkieHeader)

    @property
    def dictation_bar(self) -> DictationBar:
        """The dictation's state above the composer."""
        return self._one(DictationBar)

    @property
    def transcript(self) -> Transcript:
        """The transcript widget."""
        return self._one(Transcript)

    @property
    def composer(self) -> Composer:
        """The composer widget."""
        return self._one(Composer)

    def on_resize(self, event: events.Resize) -> None:
        """Narrow terminals give the transcript the room, until the person asks for threads."""
        if self._sidebar_chosen is None:
            # A resize may arrive before compose: query, so that no sidebar yet is no error.
            for sidebar in self.query("#sidebar"):
                sidebar.display = self._show_sidebar and event.size.width >= WIDE

    def on_mount(self) -> None:
        if isinstance(self.backend, PacesReads):
            self.backend.pace_reads(STREAM_READ_PAUSE)
        self.query_one("#sidebar").display = self._show_sidebar
        # A thread given to open (--thread) shows its turns, not a new thread's welcome.
        if not self._initial_thread:
            self.outbox.restore(self.session.conversation, NEW)
        self.transcript.show(self.session.conversation, welcome=not self._initial_thread)
        self.drafts.restore()
        self.composer.offer_paths = self.attachments.offered
        self.transcript.replies_offered = self.replies.offered
        self.transcript.pages_back = self.earlier.offered
        self.composer.focus()
        self.post_message(self.Ready(self))
        self.status.load()
        self.status.load_logo()
        self.status.watch()
        self.refresh_threads()
        if self._initial_thread:
            self.open_thread(self._initial_thread)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """An answer that ended lets the messages waiting for it go; an unexpected failure in
        background work is reported, and the app keeps running."""
        if event.worker.group == "run":
            self.refresh_bindings()  # Esc stops an answer only while one runs
        if event.worker.group == "run" and event.worker.name == "send" and event.worker.is_finished:
            self.steering.answer_ended(self.session.conversation)
            self.follow_live()
        elif event.worker.name == "open_thread" and event.worker.is_finished:
            self.steering.send_next()  # what waited for a reattached turn to end
            self.follow_live()
            self.reach.shown()  # a hub agent's starters, or that it is blocked
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

    def show_state(self) -> None:
        """The header shows what is known, read here after every change: the actions on
        screen that wait for a decision, and the connection (reconnecting while a broken
        stream's answer is awaited, answering while one streams, else the server's last word).
        """
        header = self.header
        conversation = self.session.conversation
        with contextlib.suppress(NoMatches):  # not composed yet
            self._one(ActivityLine).refresh_now()
        header.pending_actions = (
            conversation.pending_actions
            + conversation.pending_questions
            + conversation.pending_taps
        )
        self.models.show()  # the thread on screen may have changed: its model in the title
        if self._waiting.waiting:
            header.state = "reconnecting"
        elif self._sending:
            header.state = "streaming"
        else:
            header.state = self.status.reach

    # --- sign-in -------------------------------------------------------------------------

    def sign_in_needed(self, error: TalkieError) -> bool:
        """On a 401 ask the app to offer a new sign-in; True when it was asked."""
        if not isinstance(error, UnauthorizedError):
            return False
        self.post_message(self.SignInRequired(self, error.message))
        return True

    def signed_in_again(self) -> None:
        """A new sign-in is attached to the client: reload who is signed in and the threads."""
        self.status.load()
        self.refresh_threads()

    # --- threads: the list is `Threads`'s; the screen opens one --------------------------

    @work(exit_on_error=False, exclusive=True, group="run")
    async def open_thread(self, thread_id: str, message_id: str | None = None) -> None:
        """Load a stored thread and show it through the same path as live turns (scrolled to
        `message_id`, when a search found it there)."""
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
        self.replies.cancel()  # it answered a message of the thread left
        self.outbox.restore(conversation, thread_id)
        self.transcript.show(conversation)
        self.refresh_bindings()
        if message_id is not None:
            self.transcript.reveal(message_id)
        self.drafts.switch(thread_id)
        self.dictation.forget()
        await self.decisions.refresh_open(conversation)
        await self._reattach()

    async def _reattach(self) -> None:
        """Follow the opened thread's turn live when it still runs (a Minara session loaded
        while streaming): its events replayed from the start, then as they come."""
        reattach = getattr(self.session, "reattach", None)
        if reattach is None or not getattr(self.session, "streaming", False):
            return
        self._sending = True
        self._reattached = self.session.thread_id  # what Esc stops: the session's turn
        self.show_state()
        try:
            async for update in reattach():
                self._show_update(update)
        except TalkieError as error:
            if not self.sign_in_needed(error):
                self.notify(error.message, severity="warning", markup=False)
        finally:
            self._sending = False
            self._reattached = None
            self._waiting.end()
            self.show_state()
        self.steering.answer_ended(self.session.conversation)  # its late interjections

    def follow_live(self) -> None:
        """Follow the thread on screen live between answers, where its session can (a hub's:
        a reply that came late, a tap or a message from another device, the agent's activity
        and status); once per session, until another thread is shown."""
        session = self.session
        follow = getattr(session, "follow", None)
        if follow is None or session.thread_id is None or self._following is session:
            return
        self._following = session
        self._follow(session, follow)

    @work(exit_on_error=False, exclusive=True, group="follow")
    async def _follow(self, session: Any, follow: Any) -> None:
        try:
            async for update in follow():
                if self.session is not session:
                    return
                if update.lost:  # between answers no answer is awaited: it comes back itself
                    self.status.resuming()
                    continue
                if update.recovered is not None:
                    self.status.resumed()
                self._show_update(update)
                self.show_state()
        except TalkieError as error:
            if not self.sign_in_needed(error):
                self.notify(error.message, severity="warning", markup=False)
        finally:
            if self._following is session:
                self._following = None

    @on(ThreadList.Selected)
    def _thread_selected(self, event: ThreadList.Selected) -> None:
        if self.voice.holds_thread():
            return
        self.open_thread(event.thread_id, event.message_id)

    @on(ThreadList.SearchRequested)
    def _thread_search(self, event: ThreadList.SearchRequested) -> None:
        self.threads.search(event.query)

    @on(ThreadList.NewRequested)
    def _thread_new(self, event: ThreadList.NewRequested) -> None:
        self.action_new_thread()

    @on(ThreadList.DeleteRequested)
    def _thread_delete(self, event: ThreadList.DeleteRequested) -> None:
        self.threads.delete(event.thread_id)

    # --- drafts (issue 6): the composer's text of each thread survives a crash and a quit ---

    @on(Composer.Changed, "#composer")
    def _composer_changed(self, event: Composer.Changed) -> None:
        self.drafts.changed(event.text_area.text)
        if not event.text_area.text.strip():
            self.dictation.forget()  # the dictated text is gone: its audio goes with nothing

    def preserve(self) -> None:
        """Save the composer's text now: talkie is failing (see `CrashGuard`)."""
        self.drafts.preserve()

    # --- sending -------------------------------------------------------------------------

    @on(Composer.Submitted)
    def _submitted(self, event: Composer.Submitted) -> None:
        if self.voice.holds_composer():
            return
        path = attach_command(event.text)
        if path is not None:  # a command, never a message
            self._attach_command(path)
            return
        if self.answering:
            if self.steering.available:  # into the running answer: the agent reads it now
                self.steering.interject(event.text)
                self.composer.clear()
                return
            self.notify(
                _("Wait for the answer, or press Esc to stop it."),
                severity="warning",
                markup=False,
            )
            return
        if self.attachments.offered and (reason := self.attachments.not_ready()):
            self.notify(reason, severity="warning", markup=False)
            return
        files = self.attachments.take() if self.attachments.offered else []
        extras = self._extras(files, self.dictation.extras()) | self.replies.extras()
        request = self.session.prepare(event.text, **extras)
        self.outbox.hold(self.session.thread_id, request.message_id, event.text)
        self.composer.clear()
        self.drafts.put("")
        self.drafts.save()
        if self.replies.target is not None:
            self.replies.cancel()  # the quote goes with the message: its turn shows it
            self.transcript.anchor()  # to the message sent, wherever the one answered was
        self.send(request, files)

    def _extras(self, files: list[Pending], dictated: dict[str, Any]) -> dict[str, Any]:
        """What goes with a message besides its text, for what the server offers: its files,
        the thread's model, the audio it was dictated from (nothing for a Talkie server)."""
        extras: dict[str, Any] = dict(dictated)
        if self.attachments.offered:
            extras["attachments"] = self.attachments.attachments(files)
        return extras | self.models.extras()

    def _attach_command(self, path: str) -> None:
        """`/attach PATH`: the file joins the next message, and the command leaves the box."""
        if not path:
            self.notify(_("Write the file's path after /attach."), severity="warning", markup=False)
            return
        if self.attachments.add(Path(path)):
            self.composer.clear()
            self.drafts.put("")

    def send_text(self, text: str) -> None:
        """Send `text` as a new message of the thread on screen (a queued interjection)."""
        request = self.session.prepare(text)
        self.outbox.hold(self.session.thread_id, request.message_id, text)
        self.send(request)

    @property
    def answering(self) -> bool:
        """True while an answer streams in."""
        return any(w.is_running for w in self.workers if w.group == "run")

    @work(exit_on_error=False, exclusive=True, group="run")
    async def send(self, request: Outgoing, files: list[Pending] | None = None) -> None:
        """Send a message (with the files taken for it) and show the answer as it streams."""
        self._request = request
        self._request_files = files or []
        delivered = taken = False  # the whole answer came; the server has the message
        conversation = self.session.conversation
        self._sending = True
        self.show_state()
        try:
            async for update in self.session.send(request):
                if self.session.conversation is not conversation:
                    conversation = self.session.conversation
                if not taken and update.change is not None and update.recovered is None:
                    taken = self._taken(request)  # a step of the answer: the server has it
                self._show_update(update)
            delivered = taken or self._taken(request)  # taken once: its outbox entry goes
            self.status.reached()  # "connected" only after a real exchange
        except TalkieError as error:
            self.status.failed(error)
            self.attachments.give_back(self._request_files)  # the next message's once more
            self._show_send_failure(request, error)
        finally:
            self._sending = False
            self._waiting.end()
            self.show_state()
        if delivered:
            self.attachments.sent(self._request_files)
            self.dictation.forget()
        if conversation.usage:
            self.header.set_usage(conversation.usage)
        if request.settled:
            self._request = None
        thread_id = self.session.thread_id
        if self.drafts.key == NEW and thread_id and self.session.conversation is conversation:
            self.drafts.switch(thread_id, restore=False)  # the new thread got its id
        self.refresh_threads()

    def _taken(self, request: Outgoing) -> bool:
        """The server has the message: it leaves the outbox, and its "not delivered" goes."""
        self.outbox.taken(request.message_id)
        turn = self.session.conversation.turn(request.message_id)
        if turn is not None and turn.delivered():
            self.transcript.apply(turn)
        return True

    def _show_update(self, update: Update) -> None:
        """Show one step of an answer streaming in (a message sent, or a turn reattached)."""
        if update.lost:
            self._waiting.start()
            return
        if update.recovered is not None:
            self._waiting.end()
            self.transcript.show(self.session.conversation)
            return
        self.transcript.sync_turns()
        self.transcript.apply(update.change, update.delta)
        self.questions.changed(update.change)

    def _show_send_failure(self, request: Outgoing, error: TalkieError) -> None:
        """Keep the message: mark it not delivered, with the server's words and a retry."""
        self.transcript.sync_turns()  # the failure may come before the message was shown
        # A refused sign-in is asked for again at once, and then Retry helps: not "Trying
        # again will not help" above the notice's own "Trying again may help".
        # A retryable failure's notice says "Trying again may help." beside its Retry: once.
        hint = (
            _("Retry once you are signed in again.")
            if isinstance(error, UnauthorizedError)
            else ("" if error.retryable else error.retry_hint)
        )
        turn = self.session.conversation.not_delivered(
            request.message_id,
            f"{error.message} {hint}".strip(),
            code=getattr(error, "code", None),
            retry_after=error.retry_after if isinstance(error, RateLimitedError) else None,
        )
        self.transcript.apply(turn)
        if not self.sign_in_needed(error) and not error.retryable:
            self.notify(error.message, severity="error", markup=False)
            self._keep_refused_text(request)

    def _keep_refused_text(self, request: Outgoing) -> None:
        """A message the server refused outright (a model it does not serve, a file it does
        not take) comes back into an empty composer with its files, to be changed and sent."""
        offers = self.backend.info.capabilities
        if not (offers.attachments or offers.models) or self.composer.text.strip():
            return
        self.composer.load_text(request.text)
        self.composer.move_cursor(self.composer.document.end)
        self.drafts.put(request.text)

    @on(RetryRequested)
    def _retry(self, event: RetryRequested) -> None:
        event.stop()
        if self.answering:
            return
        failed = self._request or self._last_request()
        owner = self._owner_of(event.notice)
        if owner is not None and (failed is None or failed.message_id != owner.id):
            failed = self.session.again(owner.text, owner.id)  # an older message not sent
        if failed is None:
            return
        # Same message id: the server ignores a message it already stored (§5).
        if failed is not self._request or not self._offers_extras:
            self.send(self.session.again(failed.text, failed.message_id))
            return
        # Its files again (out of the tray, where the failure put them), the thread's model now,
        # the message it answered.
        files = self.attachments.take(self._request_files)
        extras = self._extras(files, self.dictation.extras()) | self.replies.extras_of(failed)
        self.send(self.session.again(failed.text, failed.message_id, **extras), files)

    def action_retry(self) -> None:
        """Ctrl+R: Retry the newest message not delivered or answer that failed."""
        notice = self._newest_retryable()
        if notice is not None:
            self.post_message(RetryRequested(notice))

    def _newest_retryable(self) -> NoticePart | None:
        for turn in reversed(self.session.conversation.turns):
            for part in reversed(turn.parts):
                if isinstance(part, NoticePart) and part.retryable:
                    return part
        return None

    @property
    def _offers_extras(self) -> bool:
        """True when a message may carry more than its text here (files, a model, audio, the
        message it answers)."""
        offers = self.backend.info.capabilities
        return offers.attachments or offers.models or offers.dictation or offers.replies

    def _owner_of(self, notice: NoticePart | None) -> Turn | None:
        """The person's message a "not delivered" notice is about."""
        if notice is None or notice.kind != "not_delivered":
            return None
        for turn in self.session.conversation.turns:
            if turn.role == "user" and any(part is notice for part in turn.parts):
                return turn
        return None

    def _last_request(self) -> Outgoing | None:
        """Rebuild the request of the last user message (to retry a failed answer)."""
        for turn in reversed(self.session.conversation.turns):
            if turn.role == "user":
                return self.session.again(turn.text, turn.id)
        return None

    def action_cancel_reply(self) -> None:
        """Esc while the next message answers an earlier one: it answers nothing."""
        self.replies.cancel()

    def action_stop_waiting(self) -> None:
        """Esc while reconnecting: stop waiting for the answer; the message stays with Retry.

        Only the wait ends: the run goes on on the server (disconnect is not cancel), so its
        answer is in the thread when it is opened again.
        """
        self.session.stop_waiting()

    def action_cancel_run(self) -> None:
        """Esc: stop the answer being streamed (cancelRun, §5), or the turn reattached to."""
        if self.answering and self._request is not None:
            self.cancel_run(self._request.run_id)
        elif self.answering and self._reattached is not None:
            self.cancel_run(self._reattached)

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

    # --- actions (§8): the decisions' work, routed from the cards and the call -----------

    @on(DecisionRequested)
    def _decision_requested(self, event: DecisionRequested) -> None:
        event.stop()
        self.decisions.requested(event)

    def show_decision(self, conversation: Conversation, result: DecisionResult) -> None:
        """Show a decision's outcome made by voice, like a button's."""
        self.decisions.show(conversation, result)

    def action_focus_pending(self) -> None:
        """Ctrl+O: the focus to the next decision still open (none takes it by itself)."""
        self.decisions.focus_pending()

    @on(DecisionView.Changed)
    def _decision_changed(self, event: DecisionView.Changed) -> None:
        """A decision was made, lapsed or reopened: the header's count follows."""
        event.stop()
        self.show_state()

    @on(DecisionView.Left)
    def _decision_left(self, event: DecisionView.Left) -> None:
        """Esc in a decision, or one that closed under the focus: back to the message."""
        event.stop()
        self.composer.focus()

    # --- the agent's questions: answered by `Questions`, routed from their views ---------

    @on(AnswerRequested)
    def _answer_requested(self, event: AnswerRequested) -> None:
        event.stop()
        self.questions.requested(event)

    @on(SecretProvided)
    def _secret_provided(self, event: SecretProvided) -> None:
        event.stop()
        self.questions.provided(event)

    # --- a hub's buttons and quick replies: tapped and sent by `Taps` ---------------------

    @on(TapRequested)
    def _tap_requested(self, event: TapRequested) -> None:
        event.stop()
        self.taps.requested(event)

    @on(QuickReplyChosen)
    def _quick_reply(self, event: QuickReplyChosen) -> None:
        event.stop()
        self.taps.chosen(event)

    # --- replies: a message of the transcript answered, by `Replies` --------------------

    @on(ReplyRequested)
    def _reply_requested(self, event: ReplyRequested) -> None:
        event.stop()
        self.replies.start(event.turn)

    @on(Transcript.LoadEarlier)
    def _load_earlier(self, event: Transcript.LoadEarlier) -> None:
        """The person reached the top of the conversation: the server's earlier page."""
        event.stop()
        self.earlier.requested()

    @on(ReplyBar.CancelRequested)
    def _reply_cancelled(self, event: ReplyBar.CancelRequested) -> None:
        event.stop()
        self.replies.cancel()
        self.composer.focus()

    def action_reply(self) -> None:
        """Answer the message selected in the transcript (else the agent's newest)."""
        self.replies.start(self.transcript.selected)

    # --- voice (§10): the call is the controller's, its keys' actions are `CallKeys` -----

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Voice keys only where they do something (the footer shows just those)."""
        if action in ("stop_waiting", "cancel_reply", "cancel_run"):  # one Esc
            if action != self._escape_does():
                return False
            # With no answer running there is nothing to stop: shown dimmed, not offered.
            return None if action == "cancel_run" and not self.answering else True
        if action == "retry":
            return not self.answering and self._newest_retryable() is not None
        if action == "reply":
            return self.replies.offered
        if action == "attach":
            return self.attachments.offered
        if action == "choose_model":
            return self.models.offered
        if (dictating := self.dictation.allows(action)) is not None:
            return dictating and self.voice.call is None
        allowed = self.voice.allows(action)
        return True if allowed is None else allowed

    def _escape_does(self) -> str:
        """What Esc does now: stop waiting for a broken stream's answer, else drop the reply
        being written while no answer runs, else stop the answer."""
        if self._waiting.waiting:
            return "stop_waiting"
        if self.replies.target is not None and not self.answering:
            return "cancel_reply"
        return "cancel_run"

    async def on_unmount(self) -> None:
        """Leaving the screen (another server, quitting) hangs up: no peer or stream is left."""
        self.drafts.save()
        await self.end_call(_("The chat was closed."))

    @on(voice_ui.VoiceUpdate)
    def _voice_update(self, message: voice_ui.VoiceUpdate) -> None:
        message.stop()
        self.voice.update(message.call, message.update)

    def mount_voice_bar(self, bar: VoiceBar) -> None:
        """Show a call's voice bar above the composer."""
        self.query_one("#main").mount(bar, before=self.composer)

    def threads_changed(self, highlight: str | None = None) -> None:
        """Reload the thread list (a call made or renamed a thread), highlighting `highlight`."""
        self.threads.refresh(highlight)

    # --- links and files: the takeaways' work, routed from the widgets' messages ---------

    @on(OpenLinkRequested)
    def _open_link(self, event: OpenLinkRequested) -> None:
        event.stop()
        self.takeaways.open_link(event.url)

    @on(DownloadRequested)
    def _download_requested(self, event: DownloadRequested) -> None:
        event.stop()
        self.download(event.block)

    @on(AttachmentView.DownloadAsked)
    def _attachment_asked(self, event: AttachmentView.DownloadAsked) -> None:
        """A file sent with a message, fetched with the token, from the server only."""
        event.stop()
        block = attachment_file_block(event.part, self.backend.resolve_url)
        if block is None or not self.backend.is_same_origin(block.url):
            text = _("{name} is not downloaded: it is not on this server.")
            self.notify(text.format(name=event.part.filename), severity="warning", markup=False)
            return
        self.post_message(DownloadRequested(block))

    def download(self, block: FileBlock) -> Worker[None]:
        """Download a same-origin file with the token; other files open in the browser."""
        return self.takeaways.download(block)

    # --- comforts ------------------------------------------------------------------------

    def action_toggle_sidebar(self) -> None:
        """Ctrl+B: to the thread list (shown if hidden); from it, hide it, back to the box."""
        sidebar = self.query_one("#sidebar", ThreadList)
        if sidebar.display and sidebar.has_focus_within:
            sidebar.display = self._sidebar_chosen = False
            self.composer.focus()
            return
        sidebar.display = self._sidebar_chosen = True
        sidebar.options.focus()

    def action_new_thread(self) -> None:
        """Start a new thread."""
        if self.voice.holds_thread():
            return
        if self.answering:
            self.notify(_("Stop the answer first (Esc)."), severity="warning", markup=False)
            return
        self.session = self.backend.new_session()
        self._request = None
        self.replies.cancel()
        self._following = None
        self.workers.cancel_group(self, "follow")  # the thread left is followed no more
        self.outbox.restore(self.session.conversation, NEW)
        self.transcript.show(self.session.conversation)
        self.refresh_bindings()  # Ctrl+R retries what this thread holds
        self.drafts.switch(NEW)
        self.dictation.forget()
        self.reach.shown()
        self.composer.focus()

    def action_focus_composer(self) -> None:
        """Put the cursor in the composer."""
        self.composer.focus()

    def action_refresh_threads(self) -> None:
        """Reload the thread list."""
        self.refresh_threads()

    def refresh_threads(self) -> None:
        """Reload the thread list (Ctrl+R, and after anything that may have changed it)."""
        self.threads.refresh()

    def action_copy_answer(self) -> None:
        """Copy the last answer's text to the clipboard (OSC 52)."""
        self.takeaways.copy_answer()

    def action_pick(self) -> None:
        """Choose a link to open, or a code block or an answer to copy (newest first)."""
        self.takeaways.pick()

    def action_export_thread(self) -> None:
        """Save the thread as a Markdown file in the downloads folder."""
        self.takeaways.export()

    # --- the composer's extras: files, the thread's model, dictation ---------------------

    def action_attach(self) -> None:
        """Ask for a file to send with the next message."""

        def chosen(path: Path | None) -> None:
            if path is not None:
                self.attachments.add(path)

        self.app.push_screen(AttachPromptScreen(), chosen)

    @on(Composer.PathPasted)
    def _path_pasted(self, event: Composer.PathPasted) -> None:
        """A pasted path of a file: offer to attach it, else it is typed in as pasted."""
        title = _("Attach {name} to the next message?").format(name=event.path.name)

        def answered(attach: bool | None) -> None:
            if attach:
                self.attachments.add(event.path)
            else:
                self.composer.insert(event.text)

        self.app.push_screen(
            ConfirmScreen(
                title, str(event.path), confirm_label=_("Attach"), cancel_label=_("Paste as text")
            ),
            answered,
        )

    @on(AttachmentTray.RemoveRequested)
    def _remove_attachment(self, event: AttachmentTray.RemoveRequested) -> None:
        event.stop()
        self.attachments.remove(event.item)

    def action_choose_model(self) -> None:
        """Choose the model (and reasoning effort) of this thread's next messages."""
        self.models.pick()

    def action_dictate(self) -> None:
        """Start recording the next message, or stop and transcribe it."""
        self.dictation.toggle()

    def action_dictation_stop(self) -> None:
        """Enter while recording: stop, and transcribe what was said."""
        self.dictation.stop()

    def action_dictation_cancel(self) -> None:
        """Esc while dictating: throw the recording away."""
        self.dictation.cancel()
