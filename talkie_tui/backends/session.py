"""One thread of one server as every protocol has it: the `Session` that sends into it, the
`Outgoing` message on its way, each `Update` of its answer, and how an answer ends when it
does not end well (`Broken`, `Recovered`, `Failure`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from talkie_tui.chat.conversation import Change, Conversation

__all__ = [
    "Broken",
    "Failure",
    "Outgoing",
    "OutgoingMessage",
    "OutgoingT",
    "Recovered",
    "Session",
    "StepOfAnswer",
    "Update",
]


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


class OutgoingMessage:
    """What a protocol's `Outgoing` holds whatever its wire: its words and id, the thread it
    goes to (the server's word once it answered), and how its answer ended. A protocol says
    when the server took it (`accepted`), and adds what its wire sends."""

    def __init__(self, text: str, message_id: str, thread_id: str | None) -> None:
        self.text = text
        self.message_id = message_id
        self.thread_id = thread_id
        self.finished = False
        self.failure: Failure | None = None

    @property
    def accepted(self) -> bool:
        """The server took the message (its answer may be stopped from now on)."""
        return False

    @property
    def settled(self) -> bool:
        """True once the answer ended (finished or failed): nothing is left to re-send."""
        return self.finished or self.failure is not None

    @property
    def run_id(self) -> str | None:
        """What `Backend.stop` stops: the thread's running answer, once the message is
        `accepted`."""
        return self.thread_id if self.accepted else None


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


class StepOfAnswer:
    """What an `Update` of a protocol without talkie/1's actions says the same way: a step
    with `broken` is a loss, and none proposes an action."""

    __slots__ = ()
    broken: Broken | None

    @property
    def lost(self) -> bool:
        """The connection dropped: it is reconnecting."""
        return self.broken is not None

    @property
    def proposes_action(self) -> bool:
        """Only talkie/1 proposes actions (`Decides`)."""
        return False


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
