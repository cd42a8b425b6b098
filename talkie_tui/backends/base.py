"""What the TUI and `talkie ask` need from a server, whatever protocol it speaks.

One `Backend` per protocol (talkie/1 today; Minara gateways and Cuckoo hubs next) implements
these. The UI holds a Backend and the `Session`s it opens, and renders the conversation model
of `talkie_tui.chat`; it never reaches a wire module itself. Everything a backend raises is of
the `talkie_tui.core.errors` family, so the UI catches one kind of error for all protocols.

What each protocol can do differs: `Capabilities` says what this server offers, and the UI
shows only what is there (a Talkie server has actions and voice, a Minara gateway questions,
attachments and models, a Cuckoo hub buttons, replies and devices).

The interface lives in modules named for what they hold: `server` (who a server is, what it
offers), `session` (a thread and its answers), `backend` (what every backend does) and
`parts/` (what only some do). This module gathers their names, and keeps `KeptSignIn`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from talkie_tui.backends.backend import Backend
from talkie_tui.backends.parts.actions import DecidedBy, Decides, Decision
from talkie_tui.backends.parts.buttons import TakesTaps, TapsAsMessages
from talkie_tui.backends.parts.calls import Calls
from talkie_tui.backends.parts.devices import Devices, SignedInDevice, StorageUse
from talkie_tui.backends.parts.dictation import Dictates, Transcription
from talkie_tui.backends.parts.files import Attaches, Attachment
from talkie_tui.backends.parts.history import FollowsLive, PagesBack, Reattaches
from talkie_tui.backends.parts.live import LiveUpdate, LiveUpdates
from talkie_tui.backends.parts.models import ChoosesModel, ModelChoice, ModelList, ReasoningEffort
from talkie_tui.backends.parts.pacing import PacesReads
from talkie_tui.backends.parts.questions import AnswerOutcome, Answers
from talkie_tui.backends.parts.search import Searches, SearchHit
from talkie_tui.backends.parts.steering import Steers
from talkie_tui.backends.parts.voice_notes import RecordsVoiceNotes
from talkie_tui.backends.server import Account, Capabilities, ProtocolName, ServerInfo, SignInKind
from talkie_tui.backends.session import (
    Broken,
    Failure,
    Outgoing,
    OutgoingT,
    Recovered,
    Session,
    Update,
)
from talkie_tui.core.attachments import AttachmentKind

if TYPE_CHECKING:
    from talkie_tui.auth.store import TokenStore

__all__ = [
    "Account",
    "AnswerOutcome",
    "Answers",
    "Attaches",
    "Attachment",
    "AttachmentKind",
    "Backend",
    "Broken",
    "Calls",
    "Capabilities",
    "ChoosesModel",
    "DecidedBy",
    "Decides",
    "Decision",
    "Devices",
    "Dictates",
    "Failure",
    "FollowsLive",
    "KeptSignIn",
    "LiveUpdate",
    "LiveUpdates",
    "ModelChoice",
    "ModelList",
    "Outgoing",
    "OutgoingT",
    "PacesReads",
    "PagesBack",
    "ProtocolName",
    "ReasoningEffort",
    "Reattaches",
    "RecordsVoiceNotes",
    "Recovered",
    "SearchHit",
    "Searches",
    "ServerInfo",
    "Session",
    "SignInKind",
    "SignedInDevice",
    "Steers",
    "StorageUse",
    "TakesTaps",
    "TapsAsMessages",
    "Transcription",
    "Update",
]


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
