"""What the TUI and `talkie ask` need from a server, whatever protocol it speaks.

One `Backend` per protocol (talkie/1 today; Minara gateways and Cuckoo hubs next) implements
these. The UI holds a Backend and the `Session`s it opens, and renders the conversation model
of `talkie_tui.chat`; it never reaches a wire module itself. Everything a backend raises is of
the `talkie_tui.core.errors` family, so the UI catches one kind of error for all protocols.

What each protocol can do differs: `Capabilities` says what this server offers, and the UI
shows only what is there (a Talkie server has actions and voice, a Minara gateway questions,
attachments and models, a Cuckoo hub buttons, replies and devices).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, runtime_checkable

from talkie_tui.core.attachments import AttachmentKind

if TYPE_CHECKING:
    from pathlib import Path

    import httpx

    from talkie_tui.auth.store import TokenStore
    from talkie_tui.chat.conversation import Change, Conversation
    from talkie_tui.chat.turns import QuestionPart
    from talkie_tui.protocol.talkie.models import Action, DecisionResult, Thread, UsageMeter, User
    from talkie_tui.voice.audio import AudioSink, AudioSource
    from talkie_tui.voice.call import VoiceCall
    from talkie_tui.voice.call_updates import Listener

__all__ = [
    "Account",
    "AnswerOutcome",
    "Answers",
    "Attaches",
    "Attachment",
    "AttachmentKind",
    "Backend",
    "Broken",
    "Capabilities",
    "ChoosesModel",
    "DecidedBy",
    "Decision",
    "Devices",
    "Dictates",
    "Failure",
    "KeptSignIn",
    "LiveUpdate",
    "LiveUpdates",
    "ModelChoice",
    "ModelList",
    "Outgoing",
    "PacesReads",
    "PagesBack",
    "ProtocolName",
    "ReasoningEffort",
    "Recovered",
    "SearchHit",
    "Searches",
    "ServerInfo",
    "Session",
    "SignIn",
    "SignedInDevice",
    "Steers",
    "StorageUse",
    "Transcription",
    "Update",
]

ProtocolName = Literal["talkie", "minara", "cuckoo"]
Decision = Literal["confirm", "cancel"]
DecidedBy = Literal["button", "voice"]
SignIn = Literal["oauth", "token", "email_code", "none"]
"""How a person signs in: OAuth 2.1 (talkie/1), a pasted bearer (a Minara gateway's
`GATEWAY_AUTH_TOKEN`), an e-mailed code for a session token (a Cuckoo hub), or not at all (a
local gateway without a token). Whatever it yields is kept in the one token store."""


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a server offers beyond plain chat; the UI shows only what is there."""

    voice: bool = False  # real-time calls
    actions: bool = False  # proposed actions a person confirms or cancels
    actions_by_voice: bool = False  # ... and may confirm by saying so during a call
    attachments: bool = False  # files sent with a message
    search: bool = False  # server-side search of threads, with snippets
    models: bool = False  # a model chosen per message
    interjections: bool = False  # a message sent into a running answer steers it
    devices: bool = False  # the person's signed-in devices can be listed and ended
    stop: bool = True  # the answer being written can be stopped
    questions: bool = False  # the agent asks back: select, confirm, input or secret
    buttons: bool = False  # messages carry buttons and quick replies to tap
    live: bool = False  # updates outside a turn arrive (see `LiveUpdates`)
    dictation: bool = False  # push-to-talk: a recording becomes text in the composer
    replies: bool = False  # a message may answer an earlier one, which it quotes (`reply_to`)


@dataclass(frozen=True, slots=True)
class ServerInfo:
    """Who the server is: the same for every person signed in to it."""

    server_id: str  # the key of its sign-in, drafts and cached logo
    origin: str
    protocol: ProtocolName
    name: str
    description: str = ""
    locale: str | None = None
    accent: str | None = None  # `#rrggbb`, added to the theme
    max_message_chars: int = 4000  # the longest message the server accepts
    sign_in: SignIn = "oauth"
    capabilities: Capabilities = field(default_factory=Capabilities)


@dataclass(frozen=True, slots=True)
class Account:
    """Who is signed in and what they may use: the header's user, meters and voice."""

    user: User
    usage: tuple[UsageMeter, ...] = ()
    voice_allowed: bool = False


@dataclass(frozen=True, slots=True)
class Recovered:
    """The wait for a broken stream's answer ended (§5 disconnect is not cancel).

    `complete` when the whole answer was loaded from the thread. Otherwise `reason` says why
    the wait ended without it (None when the stream was abandoned: its own reason says all),
    and `pending` is true when the answer may still come (the wait ran out or was stopped).
    They are words and hints for a person: they take no part in comparing two outcomes.
    """

    complete: bool
    reason: str | None = field(default=None, compare=False)
    pending: bool = field(default=False, compare=False)


@dataclass(frozen=True, slots=True)
class Broken:
    """The answer's stream broke before its end (§5 disconnect is not cancel).

    `reason` says what happened, for a person. `abandoned` when the client itself gave up on
    what the server sent (an event too large, a body it cannot decode): the thread holds the
    same, so no answer is awaited from it; otherwise the answer is now awaited from the thread.
    """

    reason: str
    abandoned: bool = False


@dataclass(frozen=True, slots=True)
class Failure:
    """The server's word that the answer failed: its message, its code, whether to retry."""

    message: str
    code: str | None = None
    retryable: bool = False


@dataclass(frozen=True, slots=True)
class KeptSignIn:
    """Where a backend finds the sign-in kept for its server, when no token is given.

    `store` opens the token store the settings name (None when it cannot be used here); it is
    called off the event loop, since a keyring may block on D-Bus. `oauth_client_id` is the
    client id for servers that sign in with OAuth; `warn` gets what a person should know.
    """

    store: Callable[[], TokenStore | None]
    oauth_client_id: str
    warn: Callable[[str], None] | None = None


class Outgoing(Protocol):
    """A message of the person on its way; sent again, it keeps its ids (idempotent)."""

    text: str
    message_id: str

    @property
    def settled(self) -> bool:
        """True once the answer ended (finished or failed): nothing is left to re-send."""
        ...

    @property
    def thread_id(self) -> str | None:
        """The thread the message goes to (the server's word once it answered)."""
        ...

    @property
    def run_id(self) -> str | None:
        """The id of its answer, for `Backend.stop` (None while the server has given none)."""
        ...

    @property
    def finished(self) -> bool:
        """The server said the answer is complete (an answer stopped on request too)."""
        ...

    @property
    def failure(self) -> Failure | None:
        """The server said the answer failed, and why (the last such word, if several)."""
        ...


OutgoingT = TypeVar("OutgoingT", bound=Outgoing)


class Update(Protocol):
    """One step of a send, in the terms the UI acts on."""

    @property
    def change(self) -> Change:
        """The part or turn this step changed (None: nothing visible)."""
        ...

    @property
    def lost(self) -> bool:
        """The stream broke: the answer is being fetched from the thread ("reconnecting")."""
        ...

    @property
    def recovered(self) -> Recovered | None:
        """The wait for a broken stream's answer ended (the conversation may be replaced)."""
        ...

    @property
    def delta(self) -> str | None:
        """Text appended to the answer by this step, when that is all it did."""
        ...

    @property
    def proposes_action(self) -> bool:
        """This step added an action that waits for the person's decision."""
        ...

    @property
    def broken(self) -> Broken | None:
        """How the stream broke, on the step that is `lost`."""
        ...

    @property
    def wire(self) -> str | None:
        """The event this step received, as one line of JSON in the protocol's own wire form
        (what `talkie ask --json` prints); None for a step that received none (a recovery)."""
        ...


class Session(Protocol[OutgoingT]):
    """One thread of one server: its conversation, and the messages sent into it.

    A session sends only the messages it prepared itself (`OutgoingT` is its own kind).
    """

    @property
    def conversation(self) -> Conversation:
        """The thread's turns (replaced when a stored thread is loaded)."""
        ...

    @property
    def thread_id(self) -> str | None:
        """The thread this session writes to (None until the first message)."""
        ...

    @property
    def waiting(self) -> bool:
        """True while a broken stream's answer is awaited from the thread."""
        ...

    def stop_waiting(self) -> bool:
        """Stop waiting for a broken stream's answer; True when there was a wait to stop."""
        ...

    async def load(self, thread_id: str) -> Conversation:
        """Replace the conversation with the stored thread."""
        ...

    def prepare(self, text: str) -> OutgoingT:
        """A new message for this thread; keep it to retry with the same ids."""
        ...

    def again(self, text: str, message_id: str) -> OutgoingT:
        """The message `message_id` once more (a retry: the server keeps only one)."""
        ...

    def send(self, outgoing: OutgoingT, /) -> AsyncIterator[Update]:
        """Send (or re-send) a message and yield each step of the answer."""
        ...


class Backend(Protocol):
    """A connection to one server, signed in or not, in its protocol."""

    @property
    def info(self) -> ServerInfo:
        """Who the server is and what it offers."""
        ...

    def new_session(self, thread_id: str | None = None) -> Session[Any]:
        """A session for a new thread, or for `thread_id`."""
        ...

    async def account(self) -> Account:
        """Who is signed in, their usage, and whether they may call."""
        ...

    async def threads(self) -> list[Thread]:
        """The person's threads, newest first."""
        ...

    async def delete_thread(self, thread_id: str) -> None:
        """Delete a thread for good."""
        ...

    async def stop(self, run_id: str) -> None:
        """Stop the answer being written (its partial work stays)."""
        ...

    async def action(self, action_id: str) -> Action:
        """The current state of an action (the server's word is authoritative)."""
        ...

    async def decide(self, action: Action, decision: Decision, method: DecidedBy) -> DecisionResult:
        """Send the person's decision on an action, made by `method` (button or voice)."""
        ...

    def is_same_origin(self, url: str) -> bool:
        """True when `url` belongs to this server (its links open, its files download)."""
        ...

    def resolve_url(self, url: str) -> str:
        """`url` made absolute against the server."""
        ...

    def download(self, url: str) -> AbstractAsyncContextManager[httpx.Response]:
        """A streamed GET of one of the server's files, signed in."""
        ...

    async def logo(self) -> bytes | None:
        """The server's logo (PNG or JPEG, size-checked), or None."""
        ...

    def voice_call(
        self,
        *,
        microphone: AudioSource,
        speaker: AudioSink,
        listener: Listener,
        thread_id: str | None,
        allow_http_signaling: bool = False,
    ) -> VoiceCall:
        """A real-time call in `thread_id` (only where `capabilities.voice`); not yet started."""
        ...

    async def aclose(self) -> None:
        """Close the connections."""
        ...


# --- what only some protocols offer: a backend implements these where its capability says so


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One match of a server-side search: where it is, and its words around the match."""

    thread_id: str
    message_id: str | None
    title: str
    snippet: str  # the match between « and »


@runtime_checkable
class Searches(Protocol):
    """Server-side search of the person's threads (`capabilities.search`)."""

    async def search(self, query: str) -> list[SearchHit]:
        """The best matches of `query`, best first."""
        ...


@runtime_checkable
class PagesBack(Protocol):
    """History that comes in pages, back to the server's retention window."""

    async def load_earlier(self, session: Session[Any]) -> bool:
        """Put the previous page before the session's turns; False when there is no more."""
        ...


@runtime_checkable
class Steers(Protocol):
    """A message sent while the agent works steers the running turn (`interjections`)."""

    async def interject(self, session: Session[Any], text: str) -> bool:
        """Send `text` into the running turn; False when none runs (send it as a new turn)."""
        ...


AnswerOutcome = Literal["answered", "not_pending"]


@runtime_checkable
class Answers(Protocol):
    """The person answers what the agent asked (`questions`) or taps a button (`buttons`)."""

    async def answer(self, question: QuestionPart, answers: list[list[str]]) -> AnswerOutcome:
        """One list per question of `question`: the chosen labels (select, confirm) or the
        typed text as its one item (input); "not_pending" when it was answered elsewhere or
        timed out (not an error)."""
        ...

    async def provide_secret(self, question: QuestionPart, value: str | None) -> AnswerOutcome:
        """Write a secret's `value` to the question's write endpoint (the server's own origin
        only, else refused) and answer "provided"; None declines. The value is never kept."""
        ...

    async def tap(self, session: Session[Any], message_id: str, button_id: str) -> None:
        """Tap a button of the message `message_id` (the server sends it as the person)."""
        ...


@dataclass(frozen=True, slots=True)
class Attachment:
    """A file uploaded to the server and named in the next message (`attachments`)."""

    key: str  # the server's name of the stored file
    filename: str
    media_type: str
    size: int
    kind: str  # the server's word: an `AttachmentKind` (Minara); image, audio, video or file (hub)
    url: str | None = None  # where the server serves it back


@runtime_checkable
class Attaches(Protocol):
    """Files go with a message (`capabilities.attachments`): uploaded first, then named."""

    async def upload(
        self, path: Path, *, progress: Callable[[int, int], None] | None = None
    ) -> Attachment:
        """Upload one file (its limits checked first: `TalkieError` with the reason), calling
        `progress(sent, total)` as bytes go out."""
        ...


ReasoningEffort = Literal["low", "medium", "high"]


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """A model the server offers for a message."""

    id: str
    label: str
    reasoning: bool = False  # takes a reasoning effort


@dataclass(frozen=True, slots=True)
class ModelList:
    """The models offered, and the server's default (which a choice never changes)."""

    models: tuple[ModelChoice, ...]
    default: str | None = None


@runtime_checkable
class ChoosesModel(Protocol):
    """A model (and reasoning effort) chosen per message (`capabilities.models`)."""

    async def models(self) -> ModelList:
        """The models the server offers now."""
        ...


@dataclass(frozen=True, slots=True)
class Transcription:
    """What a recording said, and the server's key of the stored audio (sent with the text)."""

    text: str
    audio_key: str | None = None


@runtime_checkable
class PacesReads(Protocol):
    """A streamed answer may be read in batches: a screen drawing some 24 frames a second
    loses nothing when a read rests a little and the next one takes several tokens at once."""

    def pace_reads(self, seconds: float) -> None:
        """Rest `seconds` after a read of an answer that waited (0: read as it comes)."""
        ...


@runtime_checkable
class Dictates(Protocol):
    """Push-to-talk dictation (`capabilities.dictation`): a recording becomes text."""

    async def transcribe(self, wav: bytes, *, language: str | None = None) -> Transcription:
        """The text of a WAV recording (stored on the server for the message's history)."""
        ...


@dataclass(frozen=True, slots=True)
class LiveUpdate:
    """Something that happened outside the turn being read."""

    kind: Literal["question_resolved", "message_elsewhere", "agent_status", "thread_changed"]
    thread_id: str | None = None
    detail: str = ""  # the question id, the agent's new status…


@runtime_checkable
class LiveUpdates(Protocol):
    """A stream of changes outside any turn (`capabilities.live`)."""

    def live(self) -> AsyncIterator[LiveUpdate]:
        """Updates as they come, until the backend is closed."""
        ...


@dataclass(frozen=True, slots=True)
class SignedInDevice:
    """One device signed in as the person: its name, when it was last used, and whether it is
    the one asking (`current`)."""

    id: str
    name: str
    last_used: datetime | None = None
    current: bool = False


@dataclass(frozen=True, slots=True)
class StorageUse:
    """What the server keeps of the person: files' bytes of their budget, and messages kept
    for `kept_days` (since `kept_since`)."""

    used_bytes: int = 0
    budget_bytes: int = 0
    kept_days: int = 0
    kept_since: datetime | None = None


@runtime_checkable
class Devices(Protocol):
    """The person's signed-in devices, listed and signed out (`capabilities.devices`)."""

    async def devices(self) -> Sequence[SignedInDevice]:
        """Every signed-in device of the person (`current`: this one)."""
        ...

    async def storage(self) -> StorageUse:
        """How much of the person's file budget is used, and how long messages are kept."""
        ...

    async def end_device(self, device_id: str) -> None:
        """Sign out one device (another than this one)."""
        ...

    async def end_other_devices(self) -> None:
        """Sign out every device but this one."""
        ...
