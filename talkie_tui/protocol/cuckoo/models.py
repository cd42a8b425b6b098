"""Typed models of what a Cuckoo hub's client API answers (`notes/cuckoo.md` §1.3).

Field names are the hub's own. Unknown fields are ignored and values frozen; every string a
screen may show is cleaned of control sequences as it is parsed (`SafeStr`). The hub omits
empty fields rather than sending null, but a null is read as absent all the same; one bad row
of a list (a button, an attachment, a message of a page) is dropped, not the whole answer.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from talkie_tui.core.sanitize import SafeStr

__all__ = [
    "Action",
    "Attachment",
    "Body",
    "Button",
    "ButtonStyle",
    "Conversation",
    "CuckooModel",
    "Device",
    "Media",
    "MediaUsage",
    "Message",
    "MessageRetention",
    "Page",
    "Participant",
    "QuickReply",
    "ReplyTo",
    "ScheduleRef",
    "Sender",
    "SessionInfo",
    "SignInResult",
    "Storage",
    "Time",
    "User",
]

ButtonStyle = Literal["default", "primary", "danger"]
_STYLES: frozenset[str] = frozenset({"default", "primary", "danger"})


class CuckooModel(BaseModel):
    """Base of every model read from a hub: unknown fields ignored, values frozen."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _null_is_absent(cls, data: Any) -> Any:
        # The hub omits what is empty; a null from another hub means the same.
        if isinstance(data, dict):
            return {key: value for key, value in data.items() if value is not None}
        return data


def _time(value: Any) -> Any:
    """A time the hub sent, or None when it does not parse (a bad time hides nothing else)."""
    if isinstance(value, datetime):
        return value
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
    return None


Time = Annotated[datetime | None, BeforeValidator(_time)]


def _keep_readable(items: Any, model: type[BaseModel]) -> list[Any]:
    """The items of a list that `model` can read (not a list: none)."""
    if not isinstance(items, list | tuple):
        return []
    kept = []
    for item in items:
        try:
            model.model_validate(item)
        except ValidationError:
            continue
        kept.append(item)
    return kept


def _readable(model: type[BaseModel]) -> BeforeValidator:
    """A validator keeping the items of a list that `model` can read."""
    return BeforeValidator(lambda items: _keep_readable(items, model))


def strings(value: Any) -> list[str]:
    """The strings of a list (anything else in it dropped)."""
    if not isinstance(value, list | tuple):
        return []
    return [item for item in value if isinstance(item, str)]


class User(CuckooModel):
    """The signed-in person (`GET /v1/client/me`)."""

    id: str = Field(min_length=1)
    display_name: SafeStr = ""
    locale: SafeStr | None = None
    avatar_media_id: str | None = None
    timezone: SafeStr | None = None
    created_at: Time = None
    updated_at: Time = None


class Participant(CuckooModel):
    """A member of a conversation: the person, or an agent with its status."""

    kind: str = Field(min_length=1)  # "user" or "agent"; another kind is kept as sent
    id: str = Field(min_length=1)
    display_name: SafeStr = ""
    handle: SafeStr | None = None
    status: SafeStr | None = None  # idle, connected or unreachable (agents)
    has_avatar: bool = False
    starters: Annotated[tuple[SafeStr, ...], BeforeValidator(strings)] = ()
    supports_schedules: bool = False


class Sender(CuckooModel):
    """Who wrote a message: its kind ("user" or "agent") and id (no name in the client form)."""

    kind: str = Field(min_length=1)
    id: str = ""


def _levels(value: Any) -> tuple[int, ...]:
    """A voice note's waveform: up to 64 levels from 0 to 100 (out of range clamped, a
    value that is not a number dropped, anything else no waveform at all)."""
    if not isinstance(value, list | tuple):
        return ()
    kept = [v for v in value if isinstance(v, int | float) and not isinstance(v, bool)]
    return tuple(min(100, max(0, round(v))) for v in kept[:64])


class FileFacts(CuckooModel):
    """What the hub tells of a file: its kind, type, size, name, and its image or clip shape."""

    kind: SafeStr = "file"  # image, video, audio or file, as the hub sniffed it
    mime_type: SafeStr = "application/octet-stream"
    byte_size: int = Field(default=0, ge=0)
    file_name: SafeStr = ""
    width: int | None = None
    height: int | None = None
    has_thumbnail: bool = False
    duration_ms: int | None = None
    waveform: Annotated[tuple[int, ...], BeforeValidator(_levels)] = ()


class Attachment(FileFacts):
    """A file on a message; its bytes are at `GET /v1/client/media/{media_id}`."""

    media_id: str = Field(min_length=1)


class Button(CuckooModel):
    """A button under an agent's message: an `id` (a tap goes back) or a `url`, never both."""

    id: str | None = Field(default=None, min_length=1)
    url: str | None = Field(default=None, min_length=1)
    label: SafeStr = Field(min_length=1)
    style: ButtonStyle = "default"

    @field_validator("style", mode="before")
    @classmethod
    def _known_style(cls, value: Any) -> Any:
        return value if value in _STYLES else "default"  # a new style shows as the plain one

    @model_validator(mode="after")
    def _id_or_url(self) -> Button:
        if (self.id is None) == (self.url is None):
            raise ValueError("a button has an id or a url, never both")
        return self


class QuickReply(CuckooModel):
    """A plain reply an agent offers; choosing it sends its label as text."""

    label: SafeStr = Field(min_length=1)


class Action(CuckooModel):
    """What a tap names: the button, and the message it was on."""

    button_id: str = Field(min_length=1)
    source_message_id: str = Field(min_length=1)


def _button_rows(value: Any) -> list[list[Any]]:
    """The rows of buttons, each with its readable buttons; rows left empty are dropped."""
    if not isinstance(value, list | tuple):
        return []
    rows = [_keep_readable(row, Button) for row in value]
    return [row for row in rows if row]


class Body(CuckooModel):
    """What a message says: text, files, and an agent's buttons and quick replies."""

    text: SafeStr = ""
    attachments: Annotated[tuple[Attachment, ...], _readable(Attachment)] = ()
    buttons: Annotated[tuple[tuple[Button, ...], ...], BeforeValidator(_button_rows)] = ()
    quick_replies: Annotated[tuple[QuickReply, ...], _readable(QuickReply)] = ()
    action: Action | None = None
    selected_button_id: str | None = None

    @field_validator("action", mode="before")
    @classmethod
    def _readable_action(cls, value: Any) -> Any:
        try:
            return Action.model_validate(value)
        except ValidationError:
            return None  # a tap that names nothing is plain text


class ReplyTo(CuckooModel):
    """The message a message answers: its id, who wrote it, and the start of its text."""

    id: str = Field(min_length=1)
    sender_kind: str = ""
    text_preview: SafeStr = ""


class ScheduleRef(CuckooModel):
    """The schedule a message was sent for."""

    id: str = Field(min_length=1)
    title: SafeStr = ""


class Message(CuckooModel):
    """A message in the client form (`notes/cuckoo.md` §1.3)."""

    id: str = Field(min_length=1)
    conversation_id: str = ""
    sender: Sender
    body: Body = Body()
    reply_to: ReplyTo | None = None
    status: str = "complete"  # "streaming" while an agent writes it
    truncated: bool = False
    stopped: bool = False
    schedule: ScheduleRef | None = None
    delivery_status: str | None = None  # pending, delivered or failed (the person's messages)
    created_at: Time = None

    @field_validator("body", mode="before")
    @classmethod
    def _any_body(cls, value: Any) -> Any:
        return value if isinstance(value, dict) else {}

    @field_validator("reply_to", "schedule", mode="before")
    @classmethod
    def _readable_reference(cls, value: Any, info: ValidationInfo) -> Any:
        model = ReplyTo if info.field_name == "reply_to" else ScheduleRef
        try:
            return model.model_validate(value)
        except ValidationError:
            return None

    @property
    def streaming(self) -> bool:
        """True while the agent is still writing it."""
        return self.status == "streaming"


class Conversation(CuckooModel):
    """A conversation in `GET /v1/client/conversations`."""

    id: str = Field(min_length=1)
    kind: str = "dm"
    participants: Annotated[tuple[Participant, ...], _readable(Participant)] = ()
    last_message: Message | None = None
    unread_count: int = Field(default=0, ge=0)
    created_at: Time = None

    @field_validator("last_message", mode="before")
    @classmethod
    def _readable_last(cls, value: Any) -> Any:
        try:
            return Message.model_validate(value)
        except ValidationError:
            return None

    def agents(self) -> tuple[Participant, ...]:
        """The agents in it."""
        return tuple(member for member in self.participants if member.kind == "agent")


class Page(CuckooModel):
    """One page of history: newest first back from `before`, oldest first on from `after`."""

    messages: Annotated[tuple[Message, ...], _readable(Message)] = ()
    next_before: str | None = None
    next_after: str | None = None
    trimmed: bool = False  # the conversation began before the hub's retention window


class Media(FileFacts):
    """An uploaded file (`POST /v1/client/media`): its id goes on a message."""

    id: str = Field(min_length=1)
    created_at: Time = None


class Device(CuckooModel):
    """A signed-in device of the person; `current` is the one asking."""

    id: str = Field(min_length=1)
    name: SafeStr = ""
    last_seen_at: Time = None
    created_at: Time = None
    expires_at: Time = None
    current: bool = False


class MediaUsage(CuckooModel):
    """How much of the person's media budget their files use."""

    used_bytes: int = Field(default=0, ge=0)
    budget_bytes: int = Field(default=0, ge=0)


class MessageRetention(CuckooModel):
    """How long the hub keeps messages, and the earliest moment it still covers."""

    kept_days: int = Field(default=0, ge=0)
    kept_since: Time = None


class Storage(CuckooModel):
    """`GET /v1/client/me/storage`."""

    media: MediaUsage = MediaUsage()
    messages: MessageRetention = MessageRetention()


class SessionInfo(CuckooModel):
    """The session a sign-in opened."""

    id: str = Field(min_length=1)
    expires_at: Time = None


class SignInResult(CuckooModel):
    """`POST /v1/auth/email/verify`: the session token (shown nowhere), and who signed in."""

    token: str = Field(min_length=1, repr=False)
    session: SessionInfo
    user: User
    is_new: bool = False
