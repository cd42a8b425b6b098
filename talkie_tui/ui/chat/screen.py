"""The chat screen: header, thread list, transcript and composer; all network work in workers.

The screen composes, shows and routes. Each feature is a controller in a module of its own,
which the screen wires (`Sending`, `Retries`, `ThreadOpening`, `LiveTurns`, `Decisions`,
`Questions`, `Taps`, `Replies`, `Threads`, `ServerStatus`, `Takeaways`, `PendingAttachments`,
`ThreadModels`, `Dictation`, `CallController`, …); the keys' actions and the widgets' messages
reach them through the mixins `AnswerKeys`, `CallKeys`, `ExtrasKeys`, `ThreadKeys` and
`TranscriptRoutes`. The header's state is derived in one place, `HeaderState`, which
`show_state` asks after every change.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, TypeVar, cast

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widget import Widget
from textual.worker import Worker, WorkerState

from talkie_tui.backends.base import Backend, PacesReads, Update
from talkie_tui.core.errors import TalkieError, UnauthorizedError
from talkie_tui.i18n import N_, _
from talkie_tui.ui.chat import voice as voice_ui
from talkie_tui.ui.chat.answer_keys import AnswerKeys
from talkie_tui.ui.chat.attaching import PendingAttachments
from talkie_tui.ui.chat.call_controller import BARGE_IN_BINDING, CALL_BINDINGS, CallController
from talkie_tui.ui.chat.call_keys import CallKeys
from talkie_tui.ui.chat.decisions import Decisions
from talkie_tui.ui.chat.dictation import CANCEL_BINDING, DICTATION_BINDINGS, Dictation
from talkie_tui.ui.chat.drafts import NEW, ComposerDrafts
from talkie_tui.ui.chat.earlier import EarlierPages
from talkie_tui.ui.chat.extras_keys import ExtrasKeys
from talkie_tui.ui.chat.header_state import HeaderState
from talkie_tui.ui.chat.host import ANSWER_GROUP
from talkie_tui.ui.chat.live import LiveTurns
from talkie_tui.ui.chat.model_choice import ThreadModels
from talkie_tui.ui.chat.opening import ThreadOpening
from talkie_tui.ui.chat.outbox import Outbox
from talkie_tui.ui.chat.questions import Questions
from talkie_tui.ui.chat.reach import Reach
from talkie_tui.ui.chat.replies import Replies
from talkie_tui.ui.chat.retrying import Retries
from talkie_tui.ui.chat.sending import Sending
from talkie_tui.ui.chat.sidebar import Sidebar
from talkie_tui.ui.chat.status import ServerStatus
from talkie_tui.ui.chat.steering import Steering
from talkie_tui.ui.chat.takeaways import Takeaways
from talkie_tui.ui.chat.taps import Taps
from talkie_tui.ui.chat.thread_keys import ThreadKeys
from talkie_tui.ui.chat.threads import Threads
from talkie_tui.ui.chat.transcript_routes import TranscriptRoutes
from talkie_tui.ui.chat.voice_notes import VOICE_NOTE_BINDINGS, VOICE_NOTE_ESCAPES, VoiceNotes
from talkie_tui.ui.chat.waiting import AnswerWait
from talkie_tui.ui.support.compositor import LineCompositor
from talkie_tui.ui.support.localized import LocalizedBindings
from talkie_tui.ui.support.stylesheets import chat_stylesheets
from talkie_tui.ui.widgets.activity import ActivityLine
from talkie_tui.ui.widgets.attachment_tray import AttachmentTray
from talkie_tui.ui.widgets.composer import Composer
from talkie_tui.ui.widgets.dictation_bar import DictationBar
from talkie_tui.ui.widgets.footer import TalkieFooter
from talkie_tui.ui.widgets.header import TalkieHeader
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


class ChatScreen(  # the mixins hand keys and messages to the controllers
    CallKeys,
    AnswerKeys,
    ExtrasKeys,
    ThreadKeys,
    TranscriptRoutes,
    LocalizedBindings,
    Screen[None],
):
    """Chat with one server's agent."""

    HELP_GROUP = N_("Chat screen")
    CSS_PATH = chat_stylesheets()  # type: ignore[assignment]  # loaded when first shown
    AUTO_FOCUS = "#composer"  # not Textual's first focusable widget: the thread filter
    BINDINGS: ClassVar[list[BindingType]] = [
        # While dictating, Esc throws the recording away (no call is on where dictation is).
        CANCEL_BINDING,
        *VOICE_NOTE_ESCAPES,  # a hub's voice note: Esc discards the recording, stops playing
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
        *VOICE_NOTE_BINDINGS,
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
        voice = voice or voice_ui.VoiceOptions()
        self.voice = CallController(self, backend, voice)
        self.decisions = Decisions(self, backend, self.voice)
        self.questions = Questions(self, backend)
        self.taps = Taps(self, backend)
        self.replies = Replies(self, backend, lambda: self.query_one(ReplyBar))
        self.earlier = EarlierPages(self, backend)
        self.threads = Threads(self, backend, lambda: self.query_one(ThreadList))
        self.sidebar = Sidebar(
            lambda: self.query_one("#sidebar", ThreadList), lambda: self.composer, show_sidebar
        )
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
        self.dictation = Dictation(self, backend, voice)
        self.voice_notes = VoiceNotes(self, backend, voice, self.attachments)
        self._waiting = AnswerWait(self, lambda: self.header, self.show_state)
        self._state = HeaderState(
            self, self.status, self.models, self._waiting, lambda: self._one(ActivityLine)
        )
        self.sending = Sending(self, backend, self._state)
        self.retries = Retries(self, backend, self.sending)
        self.live = LiveTurns(self, self._state)
        self.opening = ThreadOpening(self, backend)
        self._initial_thread = thread_id
        self._newline_key = newline_key
        self._found: dict[type[Widget], Widget] = {}

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
        self.sidebar.resized(event.size.width)

    def on_mount(self) -> None:
        if isinstance(self.backend, PacesReads):
            self.backend.pace_reads(STREAM_READ_PAUSE)
        self.sidebar.mounted()
        # A thread given to open (--thread) shows its turns, not a new thread's welcome.
        if not self._initial_thread:
            self.outbox.restore(self.session.conversation, NEW)
        self.transcript.show(self.session.conversation, welcome=not self._initial_thread)
        self.drafts.restore()
        self.composer.offer_paths = self.attachments.offered
        self.transcript.replies_offered = self.replies.offered
        self.transcript.pages_back = self.earlier.offered
        self.query_one(ThreadList).finds_agents = self.reach.offered
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
        answer = event.worker.group == ANSWER_GROUP
        if answer:
            self.refresh_bindings()  # Esc stops an answer only while one runs
        if answer and event.worker.name == "send" and event.worker.is_finished:
            self.steering.answer_ended(self.session.conversation)
            self.live.follow()
        elif event.worker.name == "open_thread" and event.worker.is_finished:
            self.steering.send_next()  # what waited for a reattached turn to end
            self.live.follow()
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
        """The header shows what is known, read after every change (`HeaderState`)."""
        self._state.show()

    def show_update(self, update: Update) -> None:
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

    # --- threads: the list is `Threads`'s, the thread shown `ThreadOpening`'s -------------

    def open_thread(self, thread_id: str, message_id: str | None = None) -> Worker[None]:
        """Load a stored thread and show it (scrolled to `message_id`, when a search found it
        there)."""
        return self.opening.open(thread_id, message_id)

    @on(ThreadList.Selected)
    def _thread_selected(self, event: ThreadList.Selected) -> None:
        if self.voice.holds_thread():
            return
        self.opening.open(event.thread_id, event.message_id, then_compose=True)

    def action_focus_composer(self) -> None:
        """Put the cursor in the composer."""
        self.composer.focus()

    # --- the composer's drafts (issue 6); what it sends goes to `Sending` (`AnswerKeys`) -----

    @on(Composer.Changed, "#composer")
    def _composer_changed(self, event: Composer.Changed) -> None:
        self.drafts.changed(event.text_area.text)
        if not event.text_area.text.strip():
            self.dictation.forget()  # the dictated text is gone: its audio goes with nothing

    def preserve(self) -> None:
        """Save the composer's text now: talkie is failing (see `CrashGuard`)."""
        self.drafts.preserve()

    @property
    def answering(self) -> bool:
        """True while an answer streams in."""
        return any(w.is_running for w in self.workers if w.group == ANSWER_GROUP)

    # --- keys: which apply now -----------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Voice keys only where they do something (the footer shows just those)."""
        if action in ("stop_waiting", "cancel_reply", "cancel_run"):  # one Esc
            if action != self.escape_does():
                return False
            # With no answer running there is nothing to stop: shown dimmed, not offered.
            return None if action == "cancel_run" and not self.answering else True
        if action == "retry":
            return not self.answering and self.retries.newest() is not None
        if action == "reply":
            return self.replies.offered
        if action == "attach":
            return self.attachments.offered
        if action == "choose_model":
            return self.models.offered
        for extra in (self.dictation, self.voice_notes):  # never during a call
            if (recording := extra.allows(action)) is not None:
                return recording and self.voice.call is None
        allowed = self.voice.allows(action)
        return True if allowed is None else allowed

    # --- voice (§10): the call is the controller's, its keys' actions are `CallKeys` -----

    async def on_unmount(self) -> None:
        """Leaving the screen (another server, quitting) hangs up: no peer or stream is left."""
        self.drafts.save()
        await self.end_call(_("The chat was closed."))

    def mount_voice_bar(self, bar: VoiceBar) -> None:
        """Show a call's voice bar above the composer."""
        self.query_one("#main").mount(bar, before=self.composer)
