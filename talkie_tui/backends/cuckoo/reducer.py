"""The Cuckoo reducer: a hub's messages folded into the protocol-neutral conversation.

A message comes whole (a history page, `message.created`, a stream's `message.started` and
`message.completed`) or as text to append (`message.delta`); either way it is keyed by its
id, so a message seen twice (a push and the page that fills a gap after a reconnect, a
duplicate push) is one turn, updated in place. A person's message is a user turn, an agent's
an assistant turn; turns stand in the order of their ids, which the hub makes in time order,
so an older page folds in above what is shown.

A whole message is the record: its text replaces what the deltas built, and a stream already
complete ignores late deltas and a late start. A tap (a person's message with `body.action`)
marks its button taken on the source message, as the hub does in history, so what was seen
live is what history shows. Pushes of other conversations, unknown types and malformed frames
are skipped: bad input never raises.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

from talkie_tui.backends.parts.activity import AgentActivity
from talkie_tui.chat.conversation import Change, Conversation
from talkie_tui.chat.turns import (
    AttachmentPart,
    ButtonsPart,
    MessageButton,
    NoticePart,
    Part,
    QuickRepliesPart,
    ReplyPart,
    TextPart,
    Turn,
    TurnState,
)
from talkie_tui.chat.voice_notes import quoted_files
from talkie_tui.i18n import _
from talkie_tui.protocol.cuckoo.models import Attachment, Message, Page, Participant
from talkie_tui.protocol.cuckoo.pushes import (
    ActivityPush,
    AgentStatusPush,
    DeliveryPush,
    MessageDeltaPush,
    MessagePush,
    Push,
    ReadPush,
    parse_push,
)
from talkie_tui.protocol.net.rest import path_segment

__all__ = ["CuckooConversation", "attachment_part", "conversation_from_page"]


def attachment_part(attachment: Attachment) -> AttachmentPart:
    """A file of a message, fetched back from the hub's media route (a path on the hub)."""
    return AttachmentPart(
        attachment.media_id,
        attachment.file_name or attachment.media_id,
        attachment.mime_type,
        attachment.byte_size,
        attachment.kind,
        f"v1/client/media/{path_segment(attachment.media_id)}",
        attachment.duration_ms if attachment.kind == "audio" else None,
        attachment.waveform if attachment.kind == "audio" else (),
    )


def _buttons(message: Message, selected: str | None) -> ButtonsPart | None:
    rows = [
        tuple(MessageButton(b.label, b.id, b.url, b.style) for b in row)
        for row in message.body.buttons
    ]
    if not rows:
        return None
    return ButtonsPart(message.id, rows, message.body.selected_button_id or selected)


def _notice(message: Message) -> NoticePart | None:
    """What the person is told of a reply that did not end on its own."""
    if message.stopped:
        text = _("Stopped before the end.")
        return NoticePart(text, level="warning", code="stopped", kind="cut_off")
    if message.truncated:
        text = _("The agent stopped sending it, and the hub closed it after a silence.")
        return NoticePart(text, level="warning", code="truncated", kind="cut_off")
    return None


def _state(message: Message) -> TurnState:
    if message.streaming:
        return "streaming"
    if message.stopped:
        return "cancelled"
    return "truncated" if message.truncated else "done"


class CuckooConversation(Conversation):
    """One conversation of a hub: `apply` folds in a push, `apply_message` a whole message,
    `load_page` a page of history. Besides the turns it keeps what the socket tells of the
    conversation: delivery of the person's messages, the agents' activity and status, and
    how far the person has read."""

    def __init__(self, conversation_id: str | None = None) -> None:
        super().__init__(conversation_id)
        self._by_id: dict[str, Turn] = {}
        self._buttons: dict[str, ButtonsPart] = {}  # by the message they are under
        self._taps: dict[str, str] = {}  # source message id -> the button taken
        self.delivery: dict[str, str] = {}  # the person's message id -> pending/delivered/failed
        self.activity: dict[str, AgentActivity] = {}  # by agent id
        self.agent_status: dict[str, str] = {}  # by agent id
        self.read_up_to: str | None = None
        self.next_before: str | None = None  # where the next older page starts (None: no more)
        self.trimmed = False  # the conversation began before the hub's retention window
        self.names: dict[str, str] = {}  # members' display names by id (the client form's
        # messages name no sender)
        self._senders: dict[str, str] = {}  # an agent message's id -> its agent's id

    @property
    def last_message_id(self) -> str | None:
        """The newest message known: where `messages(after=…)` fills a gap from."""
        return self.turns[-1].id if self.turns else None

    @property
    def agents_away(self) -> bool:
        """Whether an agent of the conversation is unreachable (what it is sent waits)."""
        return any(status == "unreachable" for status in self.agent_status.values())

    @property
    def agent_activities(self) -> list[AgentActivity]:
        """What each agent last said it is doing."""
        return list(self.activity.values())

    def turn(self, message_id: str) -> Turn | None:
        """The turn of a message, if it is here."""
        return self._by_id.get(message_id)

    # --- pushes --------------------------------------------------------------------------

    def apply_frame(self, frame: str | bytes | Mapping[str, Any]) -> Change:
        """Fold in one raw socket frame `{type, data}` (unknown or malformed: nothing)."""
        push = parse_push(frame)
        return self.apply(push) if push is not None else None

    def apply(self, push: Push) -> Change:
        """Fold in one push and return what changed (None: nothing visible)."""
        if isinstance(push, AgentStatusPush):
            self.agent_status[push.agent_id] = push.status
            return None
        conversation_id = getattr(push, "conversation_id", None)
        if conversation_id is None or not self._ours(conversation_id):
            return None  # `ready`, or another conversation's news
        if isinstance(push, MessagePush):
            return self.apply_message(push.message)
        if isinstance(push, MessageDeltaPush):
            return self._on_delta(push)
        if isinstance(push, DeliveryPush):
            self.delivery[push.message_id] = push.delivery_status
            return self._by_id.get(push.message_id)
        if isinstance(push, ActivityPush):
            self.activity[push.agent_id] = AgentActivity(push.state, push.label, push.expires_at)
            return None
        if isinstance(push, ReadPush):
            self.read_up_to = push.read_up_to
        return None

    def _ours(self, conversation_id: str) -> bool:
        if self.thread_id is None:
            self.thread_id = conversation_id  # the first news names the conversation
        return conversation_id == self.thread_id

    def _on_delta(self, push: MessageDeltaPush) -> Change:
        turn = self._by_id.get(push.message_id)
        if not push.text:
            return None
        if turn is None:
            # The start was missed (the socket came up mid-stream): the bubble begins here,
            # and the completed message (or the page after a reconnect) sets it right.
            turn = self._place(Turn(push.message_id, "assistant", state="streaming"))
        if turn.state != "streaming":
            return None  # a late delta of a finished stream: the whole message is the record
        part = _text_part(turn)
        if part is None:
            part = TextPart(turn.id)
            turn.parts.insert(_text_index(turn), part)
        part.chunks.append(push.text)
        return part

    # --- whole messages ------------------------------------------------------------------

    def load_page(self, page: Page, *, older: bool = True) -> list[Change]:
        """Fold in a page of history (in any order); with `older`, it is a page back, whose
        `next_before` says where the next one starts."""
        changes = [self.apply_message(message) for message in page.messages]
        if older:
            self.next_before = page.next_before
            self.trimmed = self.trimmed or page.trimmed
        return changes

    def apply_message(self, message: Message) -> Change:
        """Fold in one whole message: a new turn in its place, or its turn updated."""
        if message.conversation_id and not self._ours(message.conversation_id):
            return None
        if message.delivery_status is not None:
            self.delivery[message.id] = message.delivery_status
        turn = self._by_id.get(message.id)
        if turn is None:
            turn = self._place(
                Turn(message.id, "user" if message.sender.kind == "user" else "assistant")
            )
        elif message.streaming and turn.state != "streaming":
            return None  # a late start (or a replayed creation) of a finished stream
        self._fill(turn, message)
        if message.body.action is not None:
            self._tap(message.body.action.source_message_id, message.body.action.button_id)
        return turn

    def adopt_sent(self, turn: Turn, message: Message) -> Turn:
        """The person's turn shown before the hub answered (under a local id) becomes the
        message the hub stored: keyed by its id, showing it as stored. When the hub's message
        is here already (a retry the hub answered with the first send's message), that turn
        stays and the local one goes."""
        known = self._by_id.get(message.id)
        if known is not None and known is not turn:
            if turn in self.turns:
                self.turns.remove(turn)
            turn = known
        else:
            if turn in self.turns:
                self.turns.remove(turn)
            turn.id = message.id
            self._place(turn)
        self._fill(turn, message)
        if message.delivery_status is not None:
            self.delivery[message.id] = message.delivery_status
        if message.body.action is not None:
            self._tap(message.body.action.source_message_id, message.body.action.button_id)
        return turn

    def forget(self, turn: Turn) -> None:
        """Take a message out of the conversation (the person hid it for themselves)."""
        if turn in self.turns:
            self.turns.remove(turn)
        for kept in (self._by_id, self._buttons, self._senders):
            kept.pop(turn.id, None)

    def _place(self, turn: Turn) -> Turn:
        """Put a new turn where its id orders it (the hub's ids grow with time)."""
        self._by_id[turn.id] = turn
        index = len(self.turns)
        while index > 0 and self.turns[index - 1].id > turn.id:
            index -= 1
        self.turns.insert(index, turn)
        return turn

    def _fill(self, turn: Turn, message: Message) -> None:
        """Make `turn` show `message` (its text, files, buttons, quick replies, notices)."""
        text = message.body.text
        if message.streaming:
            # Deltas may have run ahead of this copy of the stream: the longer text stands.
            shown = turn.text
            text = shown if len(shown) > len(text) else text
        parts: list[Part] = []
        if message.reply_to is not None:
            reply = message.reply_to
            role: Literal["user", "assistant"] | None = (
                "user" if reply.sender_kind == "user" else "assistant"
            )
            if reply.sender_kind not in ("user", "agent"):
                role = None
            quoted = self._by_id.get(reply.id)
            preview = reply.text_preview or (quoted_files(quoted.parts) if quoted else "")
            parts.append(ReplyPart(reply.id, role, preview))
        if text or message.streaming:
            parts.append(TextPart(message.id, [text] if text else [], done=not message.streaming))
        parts.extend(attachment_part(attachment) for attachment in message.body.attachments)
        buttons = _buttons(message, self._taps.get(message.id))
        if buttons is not None:
            self._buttons[message.id] = buttons
            parts.append(buttons)
        if message.body.quick_replies:
            parts.append(QuickRepliesPart([reply.label for reply in message.body.quick_replies]))
        notice = _notice(message)
        if notice is not None:
            parts.append(notice)
        turn.parts = parts
        if message.sender.kind == "agent":
            self._senders[turn.id] = message.sender.id
            turn.author = self.names.get(message.sender.id) or turn.author
        turn.state = _state(message)
        turn.created_at = message.created_at or turn.created_at
        if message.schedule is not None:
            turn.schedule = message.schedule.title or message.schedule.id

    def name_members(self, participants: Iterable[Participant]) -> list[Change]:
        """Learn the members' display names: agents' turns carry their agent's name."""
        for member in participants:
            if member.display_name:
                self.names[member.id] = member.display_name
        named: list[Change] = []
        for turn in self.turns:
            name = self.names.get(self._senders.get(turn.id, ""))
            if name and turn.author != name:
                turn.author = name
                named.append(turn)
        return named

    def _tap(self, source_message_id: str, button_id: str) -> None:
        """A button was taken: shown on its message now, or when the message comes."""
        self._taps[source_message_id] = button_id
        part = self._buttons.get(source_message_id)
        if part is not None and part.selected_button_id is None:
            part.selected_button_id = button_id


def _text_part(turn: Turn) -> TextPart | None:
    return next((part for part in turn.parts if isinstance(part, TextPart)), None)


def _text_index(turn: Turn) -> int:
    """Where a turn's text goes: after the message it answers, before everything else."""
    return 1 if turn.parts and isinstance(turn.parts[0], ReplyPart) else 0


def conversation_from_page(page: Page, conversation_id: str | None = None) -> CuckooConversation:
    """A conversation rebuilt from a page of history through the same reducer as live pushes."""
    conversation = CuckooConversation(conversation_id)
    conversation.load_page(page)
    return conversation
