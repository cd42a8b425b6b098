"""Who a server is and what it offers, in the terms of every protocol: `ServerInfo` with its
`Capabilities`, and the `Account` of the person signed in to it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from talkie_tui.protocol.talkie.models import UsageMeter, User

__all__ = ["Account", "Capabilities", "ProtocolName", "ServerInfo", "SignInKind"]

ProtocolName = Literal["talkie", "minara", "cuckoo"]
SignInKind = Literal["oauth", "token", "email_code", "none"]
"""How a person signs in: OAuth 2.1 (talkie/1), a pasted bearer (a Minara gateway's
`GATEWAY_AUTH_TOKEN`), an e-mailed code for a session token (a Cuckoo hub), or not at all (a
local gateway without a token). Whatever it yields is kept in the one token store."""


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a server offers beyond plain chat; the UI shows only what is there.

    Each flag that names a part (`backends.parts`) is true only where the backend implements
    that part: `actions` is `Decides`, `voice` is `Calls`, `buttons` is `TakesTaps`…"""

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
    voice_notes: bool = False  # push-to-talk records a voice note, and notes play back


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
    sign_in: SignInKind = "oauth"
    capabilities: Capabilities = field(default_factory=Capabilities)


@dataclass(frozen=True, slots=True)
class Account:
    """Who is signed in and what they may use: the header's user, meters and voice."""

    user: User
    usage: tuple[UsageMeter, ...] = ()
    voice_allowed: bool = False
