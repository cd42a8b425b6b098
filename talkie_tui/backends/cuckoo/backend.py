"""The Cuckoo hub backend: a `CuckooClient` and one shared client socket behind the `Backend`
interface, with what a hub offers (buttons, files, paging back, live news).

A person signs in with an e-mailed code for a session token (`sign_in.py`), kept like every
sign-in in the one token store: a bearer grant under the hub's id (`hub_id`, its base URL),
sent to the hub's origin only. `connect` finds it there when no token is given, and raises
`HubSignInNeeded` (an UnauthorizedError naming the hub) when there is none or the hub refused
it, so the UI can ask for the e-mail address.

Threads are the person's conversations (the title is the agent's name; `HubThread` adds the
unread count and the agents' status). A hub's agents send buttons (`TakesTaps`) where
talkie/1 proposes actions and a Minara gateway asks questions: it implements neither
`Decides`, `Calls` nor `Answers`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from talkie_tui.backends.base import (
    Account,
    Attaches,
    Attachment,
    Backend,
    Capabilities,
    Devices,
    FollowsLive,
    KeptSignIn,
    LiveUpdate,
    LiveUpdates,
    PagesBack,
    ServerInfo,
    Session,
    SignedInDevice,
    StorageUse,
    TakesTaps,
    TapsAsMessages,
)
from talkie_tui.backends.cuckoo import account
from talkie_tui.backends.cuckoo.account import MAX_DISPLAY_NAME
from talkie_tui.backends.cuckoo.devices import as_device, as_storage
from talkie_tui.backends.cuckoo.feed import Feed
from talkie_tui.backends.cuckoo.live import live_updates
from talkie_tui.backends.cuckoo.media import VOICE_NOTE_SECONDS, upload, upload_voice_note
from talkie_tui.backends.cuckoo.reach import HubReach, arrange, contacts_of
from talkie_tui.backends.cuckoo.schedules import ConversationSchedules
from talkie_tui.backends.cuckoo.session import CuckooOutgoing, CuckooSession
from talkie_tui.backends.cuckoo.threads import AWAY, HubThread, hub_thread, recency
from talkie_tui.backends.parts.own import ChangesOwn
from talkie_tui.backends.parts.reach import ReachesAgents
from talkie_tui.backends.parts.schedules import RunsSchedules
from talkie_tui.backends.parts.voice_notes import RecordsVoiceNotes
from talkie_tui.backends.rest_backend import RestBackend, first_answer
from talkie_tui.chat.turns import Turn
from talkie_tui.core.errors import (
    AddressRefused,
    NotFoundError,
    ServerError,
    TalkieError,
    TransportError,
    UnauthorizedError,
)
from talkie_tui.core.sanitize import clean_text
from talkie_tui.core.tokens import StaticToken, TokenSource
from talkie_tui.i18n import _
from talkie_tui.protocol.cuckoo.client import CuckooClient, hub_base
from talkie_tui.protocol.cuckoo.models import User as UserModel
from talkie_tui.protocol.cuckoo.socket import ClientSocket
from talkie_tui.protocol.talkie.models import Thread, User

if TYPE_CHECKING:
    from talkie_tui.auth.store import TokenStore

__all__ = [
    "AWAY",
    "CAPABILITIES",
    "CuckooBackend",
    "HubSignInNeeded",
    "HubThread",
    "NotAHub",
    "connect",
    "hub_id",
    "hub_name",
    "kept_token",
]

CAPABILITIES = Capabilities(
    buttons=True,
    attachments=True,
    live=True,
    devices=True,
    stop=True,
    replies=True,
    voice_notes=True,
)
MAX_MESSAGE_CHARS = 8000


class NotAHub(TalkieError):
    """The address answers, but not as a Cuckoo hub."""


class HubSignInNeeded(UnauthorizedError):
    """The hub wants a signed-in person: sign in with an e-mailed code (`sign_in.start`).

    `base` is the hub's base URL, `hub_id` the key of its sign-in, `name` how it is shown.
    """

    def __init__(self, message: str, *, base: str, status: int = 401, code: str = "") -> None:
        super().__init__(
            message, status=status, code=code or "missing_credentials", retryable=False
        )
        self.base = base
        self.hub_id = hub_id(base)
        self.name = hub_name(base)


def hub_id(base: str) -> str:
    """The key of a hub's sign-in, drafts and settings: its base URL without the final "/"
    (its origin when it is served at the root)."""
    return base.rstrip("/")


def hub_name(base: str) -> str:
    """A hub names itself nowhere: on screen it is "Cuckoo hub · host:port"."""
    where = httpx.URL(base)
    shown = where.host + (f":{where.port}" if where.port else "")
    return _("Cuckoo hub · {where}").format(where=shown)


def kept_token(store: TokenStore | None, base: str) -> StaticToken | None:
    """The session token kept for the hub at `base` (in `store` first, then the others)."""
    from talkie_tui.auth.bearer_grants import find_bearer

    found = find_bearer(hub_id(base), base, store)
    return StaticToken(found[0]) if found is not None else None


HUB_REFUSALS = ("missing_credentials", "invalid_credentials", "user_required")
"""The codes of a hub's 401 on its client routes: it is a hub, and wants a person signed in."""


async def _probe(client: CuckooClient) -> UserModel:
    """Who is signed in at `client`'s hub, checking on the way that it is one: `GET /healthz`
    succeeds and `GET /v1/client/me` answers the person, or a 401 in the hub's envelope
    (HubSignInNeeded). NotAHub when something else answers; TransportError when nothing
    does."""
    base = client.base_url
    try:
        await client.healthz()
        return await client.me()
    except UnauthorizedError as refused:
        if refused.code not in HUB_REFUSALS:
            raise _not_a_hub(client, refused) from None
        raise _sign_in_needed(base, refused, client.tokens is not None) from None
    except (TransportError, AddressRefused):
        raise
    except TalkieError as error:  # another status, or a 2xx that is not the hub's answer
        raise _not_a_hub(client, error) from None


def _not_a_hub(client: CuckooClient, error: TalkieError) -> NotAHub:
    return NotAHub(
        _("{origin} answers, but not as a Cuckoo hub ({error})").format(
            origin=client.origin, error=error.message.rstrip(".")
        )
        + ".",
        retryable=error.retryable and isinstance(error, ServerError) and error.status >= 500,
    )


async def connect(
    address: str,
    *,
    tokens: TokenSource | None = None,
    kept: KeptSignIn | None = None,
    allow_private_http: bool = False,
    http: httpx.AsyncClient | None = None,
    socket_options: dict[str, Any] | None = None,
    session_options: dict[str, Any] | None = None,
) -> CuckooBackend:
    """The hub at `address`, signed in with `tokens`, else with the session kept for it.

    Checks that it is a hub (`GET /healthz`, `GET /v1/client/me`: else NotAHub) and that the
    session is taken: HubSignInNeeded when there is none or the hub refused it.
    """
    base = hub_base(address, allow_private_http=allow_private_http)
    client = CuckooClient(base, tokens=tokens, http=http, allow_private_http=allow_private_http)
    user = await first_answer(
        client, kept, lambda store: kept_token(store, base), lambda: _probe(client)
    )
    backend = CuckooBackend(
        client,
        socket_options=socket_options,
        allow_private_http=allow_private_http,
        session_options=session_options,
    )
    backend.user = User(id=user.id, name=user.display_name)
    return backend


def _sign_in_needed(base: str, refused: UnauthorizedError, had_token: bool) -> HubSignInNeeded:
    name = hub_name(base)
    if had_token:
        text = _("{hub} did not take the sign-in kept for it ({reason}); sign in again.")
    else:
        text = _("{hub} wants you signed in: your e-mail address, then the code it sends.")
    return HubSignInNeeded(
        text.format(hub=name, reason=clean_text(refused.message)),
        base=base,
        code=refused.code or "",
    )


class CuckooBackend(RestBackend):
    """A Cuckoo hub reached through one client and one shared client socket."""

    client: CuckooClient

    def __init__(
        self,
        client: CuckooClient,
        *,
        socket_options: dict[str, Any] | None = None,
        session_options: dict[str, Any] | None = None,
        allow_private_http: bool = False,
    ) -> None:
        self.client = client
        self.user: User | None = None
        self._socket_options = {"allow_plain": allow_private_http, **(socket_options or {})}
        self._session_options = dict(session_options or {})
        self.feed = Feed(self._make_socket)
        self._agents_of: dict[str, set[str]] = {}  # agent id -> conversations with it

    def _make_socket(self) -> ClientSocket:
        return ClientSocket(self.client.socket_url(), self.client.tokens, **self._socket_options)

    @property
    def base(self) -> str:
        """The hub's base URL (ending in "/")."""
        return self.client.base_url

    @property
    def info(self) -> ServerInfo:
        """The hub as the UI shows it: "Cuckoo hub · host:port"."""
        return ServerInfo(
            server_id=hub_id(self.base),
            origin=self.client.origin,
            protocol="cuckoo",
            name=hub_name(self.base),
            max_message_chars=MAX_MESSAGE_CHARS,
            sign_in="email_code",
            capabilities=CAPABILITIES,
        )

    async def use_tokens(self, tokens: TokenSource | None) -> None:
        """Sign in with another session token (after the e-mail sign-in): the routes and the
        socket (reopened with it when next needed)."""
        self.client.tokens = tokens
        await self.feed.reset()

    def new_session(self, thread_id: str | None = None) -> CuckooSession:
        """A session for `thread_id` (load it to see its messages); without one, the first
        message goes to the person's conversation with an agent (the most recent)."""
        return CuckooSession(self.client, self.feed, thread_id, **self._session_options)

    async def account(self) -> Account:
        """`GET /v1/client/me`: the person (a hub tells no usage)."""
        user = await self.client.me()
        self.user = User(id=user.id, name=user.display_name)
        return Account(self.user)

    async def threads(self) -> list[Thread]:
        """The person's conversations, pinned first, then most recent first: titled by the
        agent's name, with the unread count, the agent's status and the person's choices
        about it (`HubThread`); the archived ones are `reach.archived_threads`'."""
        return list(arrange(await self.all_threads(), await contacts_of(self.client)))

    async def all_threads(self) -> list[HubThread]:
        """Every conversation of the person, most recent first, archived or not."""
        conversations = await self.client.conversations()
        self._agents_of.clear()
        threads: list[HubThread] = []
        for conversation in conversations:
            for agent in conversation.agents():
                self._agents_of.setdefault(agent.id, set()).add(conversation.id)
            threads.append(hub_thread(conversation))
        threads.sort(key=recency, reverse=True)
        return threads

    @property
    def reach(self) -> HubReach:
        """Pairing codes, the catalogue and the person's contacts on this hub."""
        return HubReach(self.client, self.all_threads)

    async def delete_thread(self, thread_id: str) -> None:
        """Hide the conversation's messages so far for this person (`POST …/clear`); the hub
        deletes nothing for the agent. A hub without it: a clear refusal."""
        try:
            await self.client.clear(thread_id)
        except NotFoundError as error:
            if error.code != "route_not_found":
                raise
            raise TalkieError(
                _(
                    "A conversation on a hub cannot be deleted; this hub cannot clear it for "
                    "you either."
                )
            ) from None

    async def stop(self, run_id: str) -> None:
        """`POST …/stop`: the agents' replies in progress end where they stand (`run_id` is
        the conversation)."""
        await self.client.stop(run_id)

    async def aclose(self) -> None:
        """Close the socket and the HTTP connections."""
        await self.feed.aclose()
        await self.client.aclose()

    # --- the person's devices and storage ------------------------------------------------

    async def devices(self) -> list[SignedInDevice]:
        """Every signed-in device of the person (`current`: this one)."""
        return [as_device(device) for device in await self.client.devices()]

    async def end_device(self, device_id: str) -> None:
        """Sign one device out."""
        await self.client.end_device(device_id)

    async def end_other_devices(self) -> None:
        """Sign out every device but this one."""
        await self.client.end_other_devices()

    async def storage(self) -> StorageUse:
        """The media budget used, and how long messages are kept."""
        return as_storage(await self.client.storage())

    # --- ChangesOwn and RunsSchedules ----------------------------------------------------

    max_display_name = MAX_DISPLAY_NAME

    async def rename(self, display_name: str) -> User:
        """Change the person's display name on the hub (`account.rename`)."""
        return await account.rename(self, display_name)

    async def hide_for_me(self, session: Session[Any], turn: Turn) -> None:
        """Hide one message for the person (`account.hide_for_me`)."""
        await account.hide_for_me(self, _cuckoo_session(session), turn)

    async def clear_for_me(self, session: Session[Any]) -> None:
        """Hide the conversation's messages so far for the person (`account.clear_for_me`)."""
        await account.clear_for_me(self, _cuckoo_session(session))

    def schedules(self, conversation_id: str) -> ConversationSchedules:
        """The schedules of a conversation (read them with `load`)."""
        return ConversationSchedules(self, conversation_id)

    # --- PagesBack -----------------------------------------------------------------------

    async def load_earlier(self, session: Session[Any]) -> bool:
        """Put the previous page before the session's messages; False when there is none
        (then a notice stands first where retention cut the history)."""
        cuckoo = _cuckoo_session(session)
        conversation = cuckoo.conversation
        before = conversation.next_before
        conversation_id = cuckoo.thread_id
        if before is None or conversation_id is None:
            cuckoo.mark_trimmed()
            return False
        page = await self.client.messages(conversation_id, before=before)
        conversation.load_page(page)
        cuckoo.mark_trimmed()
        return bool(page.messages)

    # --- TakesTaps ----------------------------------------------------------------------

    async def tap(self, session: Session[Any], message_id: str, button_id: str) -> None:
        """Tap a button of the agent's message `message_id`: the hub sends its label as the
        person's message and marks the button taken (the reply comes live: `follow()`, or
        use `session.prepare_tap` with `send` to follow it)."""
        cuckoo = _cuckoo_session(session)
        conversation_id = cuckoo.thread_id
        if conversation_id is None:
            raise TalkieError(_("There is no conversation to tap a button in."))
        message = await self.client.tap(conversation_id, button_id, message_id)
        cuckoo.conversation.apply_message(message)

    # --- Attaches ------------------------------------------------------------------------

    async def upload(
        self, path: Path, *, progress: Callable[[int, int], None] | None = None
    ) -> Attachment:
        """`POST /v1/client/media`, its kind and size checked first (`media.upload`)."""
        return await upload(self.client, path, progress=progress)

    # --- RecordsVoiceNotes ---------------------------------------------------------------

    @property
    def voice_note_seconds(self) -> int:
        """What fits the hub's 16 MiB of WAV: 8:44 (`protocol.cuckoo.voice_note`)."""
        return VOICE_NOTE_SECONDS

    async def upload_voice_note(self, pcm: bytes, rate: int) -> Attachment:
        """The recording as the hub's voice note, uploaded (`media.upload_voice_note`)."""
        return await upload_voice_note(self.client, pcm, rate)

    # --- LiveUpdates ---------------------------------------------------------------------

    def live(self) -> AsyncGenerator[LiveUpdate, None]:
        """What happens outside the conversation a session follows (`live.updates`)."""
        return live_updates(self.feed, self._agents_of)


def _cuckoo_session(session: Session[Any]) -> CuckooSession:
    if not isinstance(session, CuckooSession):
        raise TypeError("a session of another backend")
    return session


def _implements_backend(backend: CuckooBackend) -> Backend:
    """Checked by mypy only: the Cuckoo backend has every member of the interface."""
    return backend


def _implements_session(session: CuckooSession) -> Session[CuckooOutgoing]:
    """Checked by mypy only: the Cuckoo session has every member of the interface."""
    return session


def _implements_session_parts(session: CuckooSession) -> tuple[TapsAsMessages, FollowsLive]:
    """Checked by mypy only: a hub's session sends taps as messages and follows live."""
    return session, session


def _implements_extras(
    backend: CuckooBackend,
) -> tuple[PagesBack, TakesTaps, Attaches, LiveUpdates, Devices, RecordsVoiceNotes]:
    """Checked by mypy only: the optional parts the capabilities promise."""
    return backend, backend, backend, backend, backend, backend


def _implements_hub_parts(
    backend: CuckooBackend,
) -> tuple[ReachesAgents, RunsSchedules, ChangesOwn]:
    """Checked by mypy only: the parts only a hub has (reach, schedules, one's own)."""
    return backend, backend, backend
