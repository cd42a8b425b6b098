"""What the TUI and `talkie ask` need from a server, whatever protocol it speaks.

One `Backend` per protocol (talkie/1 today; Minara gateways and Cuckoo hubs next) implements
these. The UI holds a Backend and the `Session`s it opens, and renders the conversation model
of `talkie_tui.chat`; it never reaches a wire module itself. Everything a backend raises is of
the `talkie_tui.core.errors` family, so the UI catches one kind of error for all protocols.

What each protocol can do differs: `Capabilities` says what this server offers, and the UI
shows only what is there (a Talkie server has actions and voice, a Minara gateway questions,
attachments and models, a Cuckoo hub buttons and devices).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    import httpx

    from talkie_tui.chat.conversation import Change, Conversation
    from talkie_tui.protocol.models import Action, DecisionResult, Thread, UsageMeter, User
    from talkie_tui.voice.audio import AudioSink, AudioSource
    from talkie_tui.voice.call import Listener, VoiceCall

__all__ = [
    "Account",
    "Backend",
    "Capabilities",
    "DecidedBy",
    "Decision",
    "Outgoing",
    "ProtocolName",
    "Recovered",
    "ServerInfo",
    "Session",
    "Update",
]

ProtocolName = Literal["talkie", "minara", "cuckoo"]
Decision = Literal["confirm", "cancel"]
DecidedBy = Literal["button", "voice"]


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


class Outgoing(Protocol):
    """A message of the person on its way; sent again, it keeps its ids (idempotent)."""

    text: str
    message_id: str

    @property
    def settled(self) -> bool:
        """True once the answer ended (finished or failed): nothing is left to re-send."""
        ...


class Update(Protocol):
    """One step of a send, in the terms the UI acts on."""

    change: Change

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


class Session(Protocol):
    """One thread of one server: its conversation, and the messages sent into it."""

    conversation: Conversation

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

    def prepare(self, text: str) -> Outgoing:
        """A new message for this thread; keep it to retry with the same ids."""
        ...

    def again(self, text: str, message_id: str) -> Outgoing:
        """The message `message_id` once more (a retry: the server keeps only one)."""
        ...

    def send(self, outgoing: Outgoing) -> AsyncIterator[Update]:
        """Send (or re-send) a message and yield each step of the answer."""
        ...


class Backend(Protocol):
    """A connection to one server, signed in or not, in its protocol."""

    @property
    def info(self) -> ServerInfo:
        """Who the server is and what it offers."""
        ...

    def new_session(self, thread_id: str | None = None) -> Session:
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
