"""What a conversation is made of: turns, and the parts an assistant turn shows."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

# Only named in annotations: a conversation is built without talkie/1's pydantic models, which
# a Minara or Cuckoo session (and the server picker) never loads (issue 24).
if TYPE_CHECKING:
    from talkie_tui.protocol.talkie.cards import Card
    from talkie_tui.protocol.talkie.models import Action, OpenLink

__all__ = [
    "ActionPart",
    "AttachmentPart",
    "ButtonsPart",
    "CardPart",
    "InterjectionPart",
    "LinkPart",
    "MessageButton",
    "NoticeKind",
    "NoticePart",
    "Part",
    "Question",
    "QuestionKind",
    "QuestionOption",
    "QuestionPart",
    "QuickRepliesPart",
    "ReplyPart",
    "TextPart",
    "TodoPart",
    "ToolPart",
    "Turn",
    "TurnState",
    "UiBlockPart",
]

TurnState = Literal["streaming", "done", "error", "cancelled", "truncated", "failed"]
NoticeKind = Literal["failed", "cut_off", "malformed", "not_delivered"]
"""What a notice is about, whatever its words: the answer failed, its stream was cut off, an
event could not be read, the person's message did not reach the server. Behaviour follows the
kind (or `code`), never the text, which is translated or the server's own."""


@dataclass(slots=True, eq=False)
class TextPart:
    """Assistant text in the Markdown subset, kept as the deltas it arrived in."""

    message_id: str
    chunks: list[str] = field(default_factory=list)
    done: bool = False

    @property
    def text(self) -> str:
        """The whole text so far."""
        if len(self.chunks) > 1:
            self.chunks[:] = ["".join(self.chunks)]
        return self.chunks[0] if self.chunks else ""


@dataclass(slots=True, eq=False)
class ToolPart:
    """A tool the agent runs: its human label, then ok or the error text."""

    tool_call_id: str
    name: str
    label: str
    state: Literal["running", "ok", "failed"] = "running"
    error: str | None = None


@dataclass(slots=True, eq=False)
class CardPart:
    """A result card (§6)."""

    card: Card


@dataclass(slots=True, eq=False)
class ActionPart:
    """An action awaiting a decision; replaced in place as its state changes."""

    action: Action


@dataclass(slots=True, eq=False)
class LinkPart:
    """A suggested link (`talkie.open`)."""

    link: OpenLink


@dataclass(slots=True, eq=False)
class NoticePart:
    """An error or warning about this turn, in the server's words where it gave some."""

    text: str
    level: Literal["error", "warning"] = "error"
    code: str | None = None
    retryable: bool = False
    retry_after: float | None = None  # seconds, when the server said when to try again (429)
    kind: NoticeKind = "failed"


@dataclass(slots=True, eq=False)
class UiBlockPart:
    """A structured block the agent shows (Minara `ui_block`): `kind` is markdown, table, kv,
    link or chart, `data` the block's fields as sent, its strings cleaned; a block of another
    kind is kept only when it carries a `fallback_text` to show instead."""

    block_id: str
    kind: str
    data: dict[str, Any]


@dataclass(slots=True, eq=False)
class TodoPart:
    """The turn's todo list as (text, done) items, replaced whole as the agent updates it."""

    items: list[tuple[str, bool]]


QuestionKind = Literal["select", "confirm", "input", "secret"]


@dataclass(frozen=True, slots=True)
class QuestionOption:
    """One answer the person can pick, with its optional explanation."""

    label: str
    description: str | None = None


@dataclass(frozen=True, slots=True)
class Question:
    """One question of a question part: its text, the options (select, confirm), whether
    several may be picked, and the placeholder of a text box (input, secret)."""

    text: str
    options: tuple[QuestionOption, ...] = ()
    multi: bool = False
    placeholder: str | None = None


@dataclass(slots=True, eq=False)
class QuestionPart:
    """The agent asks back and waits: open while `outcome` is None, then "answered",
    "timeout" or "cancelled", whoever answered. `write_endpoint` is where a secret's value goes
    (never into the conversation)."""

    question_id: str
    kind: QuestionKind
    questions: list[Question]
    asked_by: dict[str, str] = field(default_factory=dict)
    expires_at: str | None = None
    write_endpoint: str | None = None
    outcome: str | None = None
    """None while open; "answered", "timeout" or "cancelled" (the server's word), or
    "elsewhere" when answering found it no longer pending (answered in another client)."""
    answered_with: str | None = None
    """What the person chose or typed here, shown with the outcome (never a secret's value;
    the wire does not say what another client answered)."""


@dataclass(slots=True, eq=False)
class AttachmentPart:
    """A file the person sent with a message: its name, type and size, and where the server
    keeps it (`key`, and `url` to fetch it back)."""

    key: str
    filename: str
    media_type: str
    size: int
    kind: str  # image, pdf, spreadsheet, text or office (Minara); image, audio, video or file
    url: str | None = None
    duration_ms: int | None = None  # a recording's length (a hub's voice note)
    waveform: tuple[int, ...] = ()  # a voice note's levels, 0 to 100 (`chat/voice_notes.py`)


@dataclass(slots=True, eq=False)
class InterjectionPart:
    """What the person said into a running turn, shown where it reached the agent."""

    text: str


@dataclass(frozen=True, slots=True)
class MessageButton:
    """One button under an agent's message: a `button_id` (a tap goes back to the agent) or
    a `url` (opened on the person's gesture only), never both; `style` is default, primary or
    danger."""

    label: str
    button_id: str | None = None
    url: str | None = None
    style: Literal["default", "primary", "danger"] = "default"


@dataclass(slots=True, eq=False)
class ButtonsPart:
    """The rows of buttons under the agent's message `source_message_id`; once one was taken
    (here or on another device) it is `selected_button_id`, and a button is taken only once."""

    source_message_id: str
    rows: list[tuple[MessageButton, ...]]
    selected_button_id: str | None = None


@dataclass(slots=True, eq=False)
class QuickRepliesPart:
    """Plain replies the agent offers; choosing one sends its label as the person's message."""

    labels: list[str]


@dataclass(slots=True, eq=False)
class ReplyPart:
    """The message this one answers: its id, who wrote it, and the start of its text."""

    message_id: str
    role: Literal["user", "assistant"] | None
    preview: str


Part = (
    TextPart
    | ToolPart
    | CardPart
    | ActionPart
    | LinkPart
    | NoticePart
    | UiBlockPart
    | TodoPart
    | QuestionPart
    | InterjectionPart
    | AttachmentPart
    | ButtonsPart
    | QuickRepliesPart
    | ReplyPart
)


@dataclass(slots=True, eq=False)
class Turn:
    """One message of the person, or one answer of the agent with everything it showed."""

    id: str
    role: Literal["user", "assistant"]
    parts: list[Part] = field(default_factory=list)
    state: TurnState = "done"
    run_id: str | None = None
    created_at: datetime | None = None
    channel: str = "chat"
    """"voice" for what was said in a voice call (§10.3), "chat" for typed messages."""
    pending_interjections: list[str] = field(default_factory=list)
    """Messages sent into the turn that the agent did not take in before it ended; the UI
    sends them again as ordinary messages."""
    author: str | None = None
    """Who wrote it where the protocol names its members (a hub agent's display name); None
    shows the plain "You" / "Agent"."""
    schedule: str | None = None
    """The title of the schedule it was sent for (a hub agent's message on a timer)."""

    @property
    def text(self) -> str:
        """All text parts joined (the user's message, or the assistant's answer)."""
        return "".join(part.text for part in self.parts if isinstance(part, TextPart))

    def delivered(self) -> bool:
        """The person's message reached the server: the "not delivered" notice of an earlier
        try (with its Retry) goes, and the turn no longer says so. True when it did."""
        dropped = self.drop_delivery_notice()
        if self.state == "failed":
            self.state = "done"
            return True
        return dropped

    def drop_delivery_notice(self) -> bool:
        """The "not delivered" notice of an earlier try goes (a new try's takes its place:
        one Retry, however many tries). True when there was one."""
        kept = [
            p for p in self.parts if not (isinstance(p, NoticePart) and p.kind == "not_delivered")
        ]
        if len(kept) == len(self.parts):
            return False
        self.parts = kept
        return True
