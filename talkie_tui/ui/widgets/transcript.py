"""The transcript: one view per turn, fed by the same reducer changes live and from history."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Button, Static

from talkie_tui.chat.conversation import Change, Conversation
from talkie_tui.chat.turns import (
    ActionPart,
    AttachmentPart,
    ButtonsPart,
    CardPart,
    InterjectionPart,
    LinkPart,
    NoticePart,
    Part,
    QuestionPart,
    QuickRepliesPart,
    ReplyPart,
    TextPart,
    TodoPart,
    ToolPart,
    Turn,
    UiBlockPart,
)
from talkie_tui.chat.voice_notes import is_voice_note
from talkie_tui.core.sanitize import clean_text
from talkie_tui.i18n import N_, _, ngettext
from talkie_tui.ui.support.compositor import RepaintedByLayout
from talkie_tui.ui.widgets.action_card import ActionCard
from talkie_tui.ui.widgets.attachment import AttachmentView
from talkie_tui.ui.widgets.buttons import ButtonsView, QuickRepliesView, ReplyQuoteView
from talkie_tui.ui.widgets.card import CardView
from talkie_tui.ui.widgets.interjection import InterjectionView
from talkie_tui.ui.widgets.link import LinkView
from talkie_tui.ui.widgets.markdown_view import MarkdownView
from talkie_tui.ui.widgets.message_cursor import MessageCursor
from talkie_tui.ui.widgets.notice import NoticeView
from talkie_tui.ui.widgets.question import QuestionView
from talkie_tui.ui.widgets.todos import TodoView
from talkie_tui.ui.widgets.tool_status import ToolStatus
from talkie_tui.ui.widgets.ui_block import UiBlockView
from talkie_tui.ui.widgets.voice_note import VoiceNoteView
from talkie_tui.ui.widgets.welcome import Welcome, WelcomePanel

__all__ = ["Transcript", "TurnView"]

# Older turns are mounted on request: a long thread opens as fast as a short one.
VISIBLE_TURNS = 60

# Seconds between two readings of the conversation (`on_change`) while only text streams in:
# what they show (pending actions, the connection, the model) does not change with text.
CHANGE_INTERVAL = 0.1

# Views that redraw themselves from their part when it changed in place.
_REDRAWN = (ToolStatus, UiBlockView, TodoView, QuestionView, ButtonsView)

_STATE_NOTES = {
    "cancelled": N_("Stopped."),
    "truncated": N_("The answer is incomplete."),
    "failed": N_("Not delivered."),
}


def _part_view(part: Part) -> Widget:
    """The widget that renders one part of a turn."""
    if isinstance(part, TextPart):
        # The person's own text may hold pasted escapes; server text is already clean.
        return MarkdownView(clean_text(part.text), streaming=not part.done)
    if isinstance(part, ToolPart):
        return ToolStatus(part)
    if isinstance(part, CardPart):
        return CardView(part.card)
    if isinstance(part, ActionPart):
        return ActionCard(part.action)
    if isinstance(part, LinkPart):
        return LinkView(part.link)
    if isinstance(part, NoticePart):
        return NoticeView(part, retry_after=part.retry_after)
    if isinstance(part, UiBlockPart):
        return UiBlockView(part)
    if isinstance(part, TodoPart):
        return TodoView(part)
    if isinstance(part, QuestionPart):
        return QuestionView(part)
    if isinstance(part, InterjectionPart):
        return InterjectionView(part)
    if isinstance(part, AttachmentPart):
        return VoiceNoteView(part) if is_voice_note(part) else AttachmentView(part)
    if isinstance(part, ButtonsPart):
        return ButtonsView(part)
    if isinstance(part, QuickRepliesPart):
        return QuickRepliesView(part)
    if isinstance(part, ReplyPart):
        return ReplyQuoteView(part)
    unshown = Static(classes="part-unshown")  # a part this client has no view for yet
    unshown.display = False
    return unshown


def _says_cut_off(turn: Turn) -> bool:
    """True when a notice of the turn already says the answer was cut off or stopped."""
    return any(isinstance(part, NoticePart) and part.kind == "cut_off" for part in turn.parts)


class TurnView(RepaintedByLayout, Vertical):
    """A message of the person, or an answer of the agent with its cards and actions."""

    def __init__(self, turn: Turn) -> None:
        voice = " -voice" if turn.channel == "voice" else ""
        super().__init__(classes=f"turn -{turn.role}{voice}")
        self.turn = turn
        self.views: dict[int, Widget] = {}
        # The parts shown, held so that an id in `views` is never a newer part's (a hub's
        # reducer replaces a message's parts whole when the message comes again).
        self._shown: dict[int, Part] = {}
        self._state_note = Static(classes="turn-state")

    def compose(self) -> ComposeResult:
        role = _("You") if self.turn.role == "user" else self.turn.author or _("Agent")
        if self.turn.channel == "voice":
            # ♪ is the mark of voice threads in the thread list
            role = _("{role} · ♪ voice").format(role=role)
        yield Static(Text(role), classes="turn-role")
        if self.turn.schedule:
            # Sent on a timer: which of the person's schedules it ran for.
            scheduled = _("⏰ For the schedule “{title}”").format(title=self.turn.schedule)
            yield Static(Text(scheduled), classes="turn-schedule")
        for part in self.turn.parts:
            view = _part_view(part)
            self.views[id(part)] = view
            self._shown[id(part)] = part
            yield view
        yield self._state_note

    def on_mount(self) -> None:
        self.refresh_state()

    def view_for(self, part: Part) -> Widget | None:
        """The widget showing `part`, if it is mounted."""
        return self.views.get(id(part))

    def add_part(self, part: Part, before: Widget | None = None) -> Widget | None:
        """Mount the view of a part that just arrived (compose picks it up if not yet run)."""
        if self._state_note.parent is None:
            return None  # not composed yet: compose() renders every part of the turn
        view = _part_view(part)
        self.views[id(part)] = view
        self._shown[id(part)] = part
        self.mount(view, before=before or self._state_note)
        return view

    def sync_parts(self) -> None:
        """Mount the views of parts without one, each in its place among the others, and
        unmount those of parts the turn no longer holds."""
        if self._state_note.parent is None:
            return  # not composed yet: compose() renders every part of the turn
        self._drop_gone_parts()
        parts = self.turn.parts
        for index, part in enumerate(parts):
            if id(part) not in self.views:
                after = (self.views.get(id(later)) for later in parts[index + 1 :])
                self.add_part(part, before=next((v for v in after if v is not None), None))

    def _drop_gone_parts(self) -> None:
        """Unmount the views of parts the turn no longer holds (its message came again)."""
        held = {id(part) for part in self.turn.parts}
        for key in [key for key in self.views if key not in held]:
            self.views.pop(key).remove()
            self._shown.pop(key, None)

    def refresh_state(self) -> None:
        """Reflect the turn's state (streaming, stopped, lost, failed) and any part not shown.

        One event may both add a part and end the turn (RUN_ERROR adds its notice), and the
        reducer then reports only the turn: parts without a view are mounted here.
        """
        self.sync_parts()
        state = self.turn.state
        for name in ("streaming", "cancelled", "truncated", "failed", "error"):
            self.set_class(state == name, f"-{name}")
        note = _(_STATE_NOTES[state]) if state in _STATE_NOTES else ""
        if state == "cancelled" and _says_cut_off(self.turn):
            note = ""  # the turn's own notice says it stopped (a hub's stopped reply): once
        self._state_note.update(Text(note))
        self._state_note.display = bool(note)
        for view in self.views.values():
            if isinstance(view, UiBlockView | TodoView | QuestionView | ButtonsView):
                view.refresh_part()  # a turn-wide change may have touched them too
            elif state != "streaming" and isinstance(view, MarkdownView):
                view.finish()


class Transcript(RepaintedByLayout, MessageCursor):
    """The conversation; follows new text only while the person is at the bottom.

    A thread with no turns yet starts with a `WelcomePanel` (when given a `welcome`): the
    server, what it offers and the keys. It is not a turn, and goes with the first one.
    A message may be selected in it (`MessageCursor`), to be answered.
    """

    class LoadEarlier(Message):
        """The person asked to see older turns than the conversation holds (the server keeps
        them in pages: `pages_back`)."""

    pages_back = False
    """Whether the server has older pages to ask for (the screen says): reaching the top, or
    selecting above the first message, then asks for one (`LoadEarlier`)."""

    def __init__(
        self,
        *,
        welcome: Welcome | None = None,
        on_change: Callable[[], None] | None = None,
        **kwargs: object,
    ) -> None:
        """`on_change` is called after every change shown (what depends on the conversation,
        such as the header's count of pending actions, is read again then)."""
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._on_change = on_change
        self._turn_views: dict[int, TurnView] = {}
        self._conversation: Conversation | None = None
        self._hidden_turns = 0
        self._welcome = welcome
        self._welcome_panel: WelcomePanel | None = None
        self._change_timer: Timer | None = None

    def on_mount(self) -> None:
        self.anchor()

    def show(
        self, conversation: Conversation, *, limit: int = VISIBLE_TURNS, welcome: bool = True
    ) -> None:
        """Replace the transcript with a conversation (loaded history or a new thread).

        Without turns it starts with the welcome panel, unless `welcome` is False (a stored
        thread is on its way and would replace it at once).
        """
        self.select(None)  # the views go, and a selection with them
        self._conversation = conversation
        self._turn_views.clear()
        turns = conversation.turns
        self._hidden_turns = max(0, len(turns) - limit)
        views: list[Widget] = []
        self._welcome_panel = None
        if welcome and not turns and self._welcome is not None:
            self._welcome_panel = WelcomePanel(self._welcome)
            views.append(self._welcome_panel)
        if hidden := self._hidden_turns:
            views.append(
                Button(
                    ngettext(
                        "Show {count} earlier message", "Show {count} earlier messages", hidden
                    ).format(count=hidden),
                    id="load-earlier",
                    classes="load-earlier",
                )
            )
        for turn in turns[self._hidden_turns :]:
            views.append(self._view_of(turn))
        with self.app.batch_update():
            self.remove_children()
            self.mount_all(views)
        self.anchor()
        self._retire_quick_replies()
        self._changed()

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change()

    def _changed_soon(self) -> None:
        """A streamed delta changed only text: `on_change` runs every CHANGE_INTERVAL, not per
        delta (it reads the whole conversation and the screen, which at 500 deltas a second was
        a quarter of the client's time)."""
        if self._change_timer is None:
            self._change_timer = self.set_timer(CHANGE_INTERVAL, self._changed_later)

    def _changed_later(self) -> None:
        self._change_timer = None
        self._changed()

    def show_earlier(self) -> None:
        """Mount every hidden older turn above the visible ones; with none hidden, ask for
        the server's earlier page (where it pages back)."""
        if self._conversation is None:
            return
        if not self._hidden_turns:
            if self.pages_back:
                self.post_message(self.LoadEarlier())
            return
        turns = self._conversation.turns[: self._hidden_turns]
        self._hidden_turns = 0
        button = self.query("#load-earlier")
        first = next((v for v in self.children if isinstance(v, TurnView)), None)
        self._mount_above(turns, first)
        button.remove()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        """Scrolled to the very top by the person: the earlier messages come."""
        super().watch_scroll_y(old_value, new_value)
        # Only a scroll of the person's releases the anchor (a reload's own jump keeps it).
        if new_value <= 0 < old_value and self._anchor_released:
            self.show_earlier()

    def show_older(self) -> None:
        """Mount the turns the conversation gained before the first one shown (an earlier
        page came), keeping in view what was in view."""
        if self._conversation is None:
            return
        turns = self._conversation.turns
        first = next((v for v in self.children if isinstance(v, TurnView)), None)
        if first is None or first.turn not in turns:
            self.sync_turns()
            return
        older = [t for t in turns[: turns.index(first.turn)] if self.turn_view(t) is None]
        if older:
            self._mount_above(older, first)

    def _mount_above(self, turns: list[Turn], first: TurnView | None) -> None:
        """Mount `turns` above the first turn shown, which stays where it was in view."""
        views = [self._view_of(turn) for turn in turns]
        with self.app.batch_update():
            if first is not None:
                self.mount_all(views, before=first)
            else:
                self.mount_all(views)
        if first is not None:
            self.release_anchor()
            self.call_after_refresh(self.scroll_to_widget, first, top=True, animate=False)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "load-earlier":
            event.stop()
            self.show_earlier()

    def _view_of(self, turn: Turn) -> TurnView:
        view = TurnView(turn)
        self._turn_views[id(turn)] = view
        return view

    def turn_view(self, turn: Turn) -> TurnView | None:
        """The view of a turn, if it is mounted."""
        return self._turn_views.get(id(turn))

    def reveal(self, turn_id: str) -> bool:
        """Scroll to the turn `turn_id` (older turns are mounted first) and mark it as the one
        looked for; False when the conversation has no such turn."""
        if self._conversation is None:
            return False
        turn = next((t for t in self._conversation.turns if t.id == turn_id), None)
        if turn is None:
            return False
        if self.turn_view(turn) is None:
            self.show_earlier()
        view = self.turn_view(turn)
        if view is None:
            return False
        self.release_anchor()
        for marked in self.query(".found"):
            marked.remove_class("found")
        view.add_class("found")
        self.call_after_refresh(self.scroll_to_widget, view, top=True, animate=False)
        return True

    def sync_turns(self) -> None:
        """Mount the turns the conversation gained since they were last shown."""
        if self._conversation is None:
            return
        turns = self._conversation.turns
        if len(self._turn_views) > len(turns) - self._hidden_turns:
            self._drop_gone_turns()
        start = len(turns)
        while start > self._hidden_turns and self.turn_view(turns[start - 1]) is None:
            start -= 1
        for turn in turns[start:]:
            self.add_turn(turn)

    def _drop_gone_turns(self) -> None:
        """Unmount the views of turns the conversation no longer holds (a reattached turn's
        reopened questions give way to its replay, which shows them in place)."""
        assert self._conversation is not None
        kept = {id(turn) for turn in self._conversation.turns}
        for key in [key for key in self._turn_views if key not in kept]:
            self._turn_views.pop(key).remove()

    def add_turn(self, turn: Turn) -> TurnView:
        """Mount a new turn at the end (the first one replaces the welcome panel)."""
        if self._welcome_panel is not None:
            self._welcome_panel.remove()
            self._welcome_panel = None
        view = self._view_of(turn)
        self.mount(view)
        self._retire_quick_replies()
        self._changed()
        return view

    @property
    def welcome_panel(self) -> WelcomePanel | None:
        """The welcome panel, while it is shown."""
        return self._welcome_panel

    def set_voice_allowed(self, allowed: bool) -> None:
        """Whether the signed-in person may call (`status.voice`): the panel shows the call key."""
        if self._welcome is None or self._welcome.voice_allowed is allowed:
            return
        self._welcome = replace(self._welcome, voice_allowed=allowed)
        if self._welcome_panel is not None and self._welcome.voice:  # else nothing changes
            self._welcome_panel.welcome = self._welcome

    def apply(self, change: Change, delta: str | None = None) -> None:
        """Show one reducer change; `delta` is the new text when a text part grew."""
        if change is None or self._conversation is None:
            return
        if isinstance(change, Turn):
            view = self.turn_view(change)
            if view is None:
                self.add_turn(change)
            else:
                view.refresh_state()
                self._changed()
            if change.role == "user":
                self.refresh_buttons()  # a tap (from any device) marks the message it was on
            return
        turn = self._owner_of(change)
        if turn is None:
            return
        view = self.turn_view(turn) or self.add_turn(turn)
        part_view = view.view_for(change)
        if part_view is None:
            view.sync_parts()  # in its place (a hub's message may have replaced the others)
        elif isinstance(part_view, MarkdownView):
            if delta:
                part_view.append(delta)
            self._changed_soon()
            return
        elif isinstance(part_view, _REDRAWN):
            part_view.refresh_part()
        elif isinstance(part_view, ActionCard) and isinstance(change, ActionPart):
            part_view.update_action(change.action)
        self._changed()

    def _owner_of(self, part: Part) -> Turn | None:
        """The turn holding `part` (the newest turns are searched first)."""
        assert self._conversation is not None
        for turn in reversed(self._conversation.turns):
            if any(candidate is part for candidate in turn.parts):
                return turn
        return None

    def refresh_buttons(self) -> None:
        """Redraw the rows of buttons whose taken button changed."""
        for turn_view in self._turn_views.values():
            for view in turn_view.views.values():
                if isinstance(view, ButtonsView) and view.shown_taken != view.taken:
                    view.refresh_part()

    def _retire_quick_replies(self) -> None:
        """Quick replies are offered until the person says something after them: then they
        answer what is past, and go."""
        if self._conversation is None:
            return
        answered = False  # a message of the person comes later than the turn looked at
        for turn in reversed(self._conversation.turns):
            view = self._turn_views.get(id(turn))
            if view is not None:
                chips = [v for v in view.views.values() if isinstance(v, QuickRepliesView)]
                for part_view in chips:
                    part_view.retire(answered)
                # A turn of chips alone (a hub agent's starters) would be an empty bubble.
                view.set_class(answered and len(chips) == len(view.views) > 0, "-retired")
            answered = answered or turn.role == "user"

    def view_of_part(self, part: Part) -> Widget | None:
        """The mounted widget showing `part`, if any."""
        turn = self._owner_of(part)
        view = self.turn_view(turn) if turn is not None else None
        return view.view_for(part) if view is not None else None

    def action_cards(self) -> list[ActionCard]:
        """Every mounted action card, oldest first."""
        return list(self.query(ActionCard))
