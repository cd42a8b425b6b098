"""What the transcript's widgets ask of the chat screen, handed to the controllers.

A mixin of the chat screen, as `CallKeys` is: Textual finds a message's `on_*` handler and a
key's action on the screen, so they are the screen's own; they are written here because each only
hands on what a card, a question, a row of buttons, a message or a link asks for: to `Decisions`,
`Questions`, `Taps`, `Replies`, `EarlierPages` and `Takeaways`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual.worker import Worker

    from talkie_tui.chat.conversation import Conversation
    from talkie_tui.chat.vocabulary import DecisionResult, FileBlock
    from talkie_tui.ui.chat.decisions import Decisions
    from talkie_tui.ui.chat.earlier import EarlierPages
    from talkie_tui.ui.chat.questions import Questions
    from talkie_tui.ui.chat.replies import Replies
    from talkie_tui.ui.chat.takeaways import Takeaways
    from talkie_tui.ui.chat.taps import Taps
    from talkie_tui.ui.messages import (
        AnswerRequested,
        DecisionRequested,
        DownloadRequested,
        OpenLinkRequested,
        QuickReplyChosen,
        ReplyRequested,
        SecretProvided,
        TapRequested,
    )
    from talkie_tui.ui.widgets.composer import Composer
    from talkie_tui.ui.widgets.decision import DecisionView
    from talkie_tui.ui.widgets.reply_bar import ReplyBar
    from talkie_tui.ui.widgets.transcript import Transcript

__all__ = ["TranscriptRoutes"]


class TranscriptRoutes:
    """Decisions, answers, taps, replies, earlier pages, links and files of the transcript."""

    decisions: Decisions
    questions: Questions
    taps: Taps
    replies: Replies
    earlier: EarlierPages
    takeaways: Takeaways

    if TYPE_CHECKING:  # the screen's own

        @property
        def transcript(self) -> Transcript:
            """Where the message answered is selected."""

        @property
        def composer(self) -> Composer:
            """Where the focus goes back to."""

        def show_state(self) -> None:
            """Read the conversation again into the header."""

    # --- actions (§8), the agent's questions, a hub's buttons and quick replies ----------

    def on_decision_requested(self, event: DecisionRequested) -> None:
        """A card's button (or key) asks for a decision."""
        event.stop()
        self.decisions.requested(event)

    def show_decision(self, conversation: Conversation, result: DecisionResult) -> None:
        """Show a decision's outcome made by voice, like a button's."""
        self.decisions.show(conversation, result)

    def action_focus_pending(self) -> None:
        """Ctrl+O: the focus to the next decision still open (none takes it by itself)."""
        self.decisions.focus_pending()

    def on_decision_view_changed(self, event: DecisionView.Changed) -> None:
        """A decision was made, lapsed or reopened: the header's count follows."""
        event.stop()
        self.show_state()

    def on_decision_view_left(self, event: DecisionView.Left) -> None:
        """Esc in a decision, or one that closed under the focus: back to the message."""
        event.stop()
        self.composer.focus()

    def on_answer_requested(self, event: AnswerRequested) -> None:
        """A question of the agent answered."""
        event.stop()
        self.questions.requested(event)

    def on_secret_provided(self, event: SecretProvided) -> None:
        """A secret the agent asked for, given."""
        event.stop()
        self.questions.provided(event)

    def on_tap_requested(self, event: TapRequested) -> None:
        """A hub's button tapped."""
        event.stop()
        self.taps.requested(event)

    def on_quick_reply_chosen(self, event: QuickReplyChosen) -> None:
        """A hub's quick reply chosen: it is sent as a message."""
        event.stop()
        self.taps.chosen(event)

    # --- replies and earlier pages -------------------------------------------------------

    def on_reply_requested(self, event: ReplyRequested) -> None:
        """A message of the transcript to be answered by the next one."""
        event.stop()
        self.replies.start(event.turn)

    def on_reply_bar_cancel_requested(self, event: ReplyBar.CancelRequested) -> None:
        """The reply bar's ✕: the next message answers nothing."""
        event.stop()
        self.replies.cancel()
        self.composer.focus()

    def action_reply(self) -> None:
        """Answer the message selected in the transcript (else the agent's newest)."""
        self.replies.start(self.transcript.selected)

    def on_transcript_load_earlier(self, event: Transcript.LoadEarlier) -> None:
        """The person reached the top of the conversation: the server's earlier page."""
        event.stop()
        self.earlier.requested()

    # --- links and files: the takeaways' work --------------------------------------------

    def on_open_link_requested(self, event: OpenLinkRequested) -> None:
        """A link chosen: opened if allowed."""
        event.stop()
        self.takeaways.open_link(event.url)

    def on_download_requested(self, event: DownloadRequested) -> None:
        """A file of an answer to download."""
        event.stop()
        self.download(event.block)

    def download(self, block: FileBlock) -> Worker[None]:
        """Download a same-origin file with the token; other files open in the browser."""
        return self.takeaways.download(block)

    def action_copy_answer(self) -> None:
        """Copy the last answer's text to the clipboard (OSC 52)."""
        self.takeaways.copy_answer()

    def action_pick(self) -> None:
        """Choose a link to open, or a code block or an answer to copy (newest first)."""
        self.takeaways.pick()

    def action_export_thread(self) -> None:
        """Save the thread as a Markdown file in the downloads folder."""
        self.takeaways.export()
