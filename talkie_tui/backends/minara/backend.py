"""The Minara gateway backend: a `MinaraClient` and its stream socket behind the `Backend`
interface, with what only Minara offers (search, interjections, questions, attachments, models,
dictation).

The bearer is a pasted token (`--token`, `MINARA_TOKEN`) or the one kept for the gateway's
origin in the token store; there is no OAuth here. A gateway asks questions where talkie/1
proposes actions, and dictates where talkie/1 calls: it implements neither `Decides` nor `Calls`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from talkie_tui.backends.base import (
    Account,
    AnswerOutcome,
    Answers,
    Attaches,
    Attachment,
    Backend,
    Capabilities,
    ChoosesModel,
    Dictates,
    KeptSignIn,
    ModelChoice,
    ModelList,
    Reattaches,
    Searches,
    SearchHit,
    ServerInfo,
    Session,
    SignInKind,
    Steers,
    Transcription,
)
from talkie_tui.backends.minara.session import MinaraOutgoing, MinaraSession
from talkie_tui.backends.rest_backend import RestBackend, first_answer
from talkie_tui.chat.turns import QuestionPart
from talkie_tui.core.errors import TalkieError
from talkie_tui.core.tokens import StaticToken, TokenSource
from talkie_tui.i18n import _
from talkie_tui.protocol.minara.client import MinaraClient, gateway_base
from talkie_tui.protocol.minara.models import SessionSummary
from talkie_tui.protocol.minara.stream import MinaraStream
from talkie_tui.protocol.talkie.models import Thread, User

if TYPE_CHECKING:
    from talkie_tui.auth.store import TokenStore

__all__ = [
    "DEFAULT_GATEWAY",
    "MinaraBackend",
    "connect",
    "gateway_name",
    "kept_token",
    "minara_base",
]

PAGE_SIZE = 100
"""Sessions asked for in one `GET /v1/sessions`."""
MAX_THREADS = 2000
"""The most sessions the thread list holds (the newest): it stays fast, search finds the rest."""

DEFAULT_GATEWAY = "http://localhost:8080"
"""Where `minara serve` listens by default: what a bare `localhost` means for Minara."""

CAPABILITIES = Capabilities(
    questions=True,
    attachments=True,
    search=True,
    models=True,
    interjections=True,
    stop=True,
    dictation=True,
)


def minara_base(address: str, *, allow_private_http: bool = False) -> str:
    """The gateway base URL for `address`; a bare `localhost` or `127.0.0.1` is port 8080."""
    text = address.strip()
    if text in ("localhost", "127.0.0.1", "[::1]", "::1"):
        host = "[::1]" if ":" in text else text
        text = f"http://{host}:8080"
    return gateway_base(text, allow_private_http=allow_private_http)


def gateway_name(origin: str) -> str:
    """A gateway names itself nowhere: on screen it is "Minara gateway · host:port"."""
    where = httpx.URL(origin)
    shown = where.host + (f":{where.port}" if where.port else "")
    return _("Minara gateway · {where}").format(where=shown)


def kept_token(store: TokenStore | None, origin: str) -> StaticToken | None:
    """The token kept for the gateway at `origin` (in `store` first, then the other stores),
    if one was kept for that origin: a bearer grant under the origin as its server id."""
    from talkie_tui.auth.bearer_grants import find_bearer

    found = find_bearer(origin, origin, store)
    return StaticToken(found[0]) if found is not None else None


async def _probe(client: MinaraClient) -> None:
    """A gateway answers `GET /healthz` and takes the token (a signed-in `GET /v1/sessions`)."""
    if not await client.healthz():
        raise TalkieError(
            _("{origin} answers, but not as a Minara gateway (GET /healthz).").format(
                origin=client.origin
            )
        )
    await client.sessions(limit=1)


async def connect(
    address: str,
    *,
    tokens: TokenSource | None = None,
    kept: KeptSignIn | None = None,
    allow_private_http: bool = False,
    http: httpx.AsyncClient | None = None,
    stream_options: dict[str, Any] | None = None,
) -> MinaraBackend:
    """The gateway at `address`, with `tokens`, else the token kept for its origin.

    Checks that the gateway answers (`GET /healthz`) and takes the token (a signed-in
    `GET /v1/sessions`): UnauthorizedError when it wants one (so the UI can ask for it).
    """
    base = minara_base(address, allow_private_http=allow_private_http)
    client = MinaraClient(base, tokens=tokens, http=http)
    await first_answer(
        client, kept, lambda store: kept_token(store, client.origin), lambda: _probe(client)
    )
    sign_in: SignInKind = "token" if client.tokens is not None else "none"
    options = {"allow_plain": allow_private_http, **(stream_options or {})}
    stream = MinaraStream(client.stream_url(), client.tokens, **options)
    return MinaraBackend(client, stream, sign_in=sign_in)


def _timestamp(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


class MinaraBackend(RestBackend):
    """A Minara gateway reached through one client and one stream socket."""

    client: MinaraClient

    def __init__(
        self, client: MinaraClient, stream: MinaraStream, *, sign_in: SignInKind = "none"
    ) -> None:
        self.client = client
        self.stream = stream
        self._sign_in = sign_in

    @property
    def info(self) -> ServerInfo:
        """The gateway as the UI shows it: "Minara gateway · host:port"."""
        return ServerInfo(
            server_id=self.client.origin,
            origin=self.client.origin,
            protocol="minara",
            name=gateway_name(self.client.origin),
            sign_in=self._sign_in,
            capabilities=CAPABILITIES,
        )

    def pace_reads(self, seconds: float) -> None:
        """Rest `seconds` after a frame of the stream socket that waited (PacesReads)."""
        self.stream.read_pause = seconds

    def use_tokens(self, tokens: TokenSource | None) -> None:
        """Sign in with another token (the person pasted one): the routes and the socket."""
        self.client.tokens = tokens
        self.stream.tokens = tokens
        self._sign_in = "token" if tokens is not None else "none"

    def new_session(self, thread_id: str | None = None) -> MinaraSession:
        """A session for a new conversation, or for the stored session `thread_id`."""
        return MinaraSession(self.client, self.stream, thread_id)

    async def account(self) -> Account:
        """A gateway names no user: an anonymous account, once the token was taken."""
        await self.client.sessions(limit=1)
        return Account(User())

    async def threads(self) -> list[Thread]:
        """`GET /v1/sessions`, page after page (up to `MAX_THREADS`), as the thread list
        shows them: most recently updated first."""
        sessions: list[SessionSummary] = []
        while len(sessions) < MAX_THREADS:
            page = await self.client.sessions(kind="chat", limit=PAGE_SIZE, offset=len(sessions))
            sessions.extend(page.sessions)
            total = page.total if page.total is not None else len(sessions)
            if not page.sessions or len(sessions) >= total:
                break
        seen: set[str] = set()
        threads = []
        for s in sessions[:MAX_THREADS]:
            if s.id in seen:  # a session updated while the pages were read moved up a page
                continue
            seen.add(s.id)
            threads.append(
                Thread(
                    id=s.id,
                    title=s.title,
                    channel=s.kind or "chat",
                    created_at=_timestamp(s.created_at),
                    updated_at=_timestamp(s.updated_at),
                )
            )
        return threads

    async def delete_thread(self, thread_id: str) -> None:
        """`DELETE /v1/sessions/:id`."""
        await self.client.delete_session(thread_id)

    async def stop(self, run_id: str) -> None:
        """`POST /v1/chat/interrupt` (`run_id` is the session of the running turn)."""
        await self.client.interrupt(run_id)

    async def aclose(self) -> None:
        """Close the socket and the HTTP connections."""
        await self.stream.aclose()
        await self.client.aclose()

    # --- Searches ------------------------------------------------------------------------

    async def search(self, query: str) -> list[SearchHit]:
        """`GET /v1/sessions/search?q=`: best matches first, the match between « and »."""
        return [
            SearchHit(r.session_id, r.message_id, r.title, r.snippet)
            for r in await self.client.search(query)
        ]

    # --- Steers --------------------------------------------------------------------------

    async def interject(self, session: Session[Any], text: str) -> bool:
        """`POST /v1/chat/interject`; False when no turn runs (send `text` as a new turn)."""
        session_id = session.thread_id
        if session_id is None:
            return False
        return await self.client.interject(session_id, text)

    # --- Answers -------------------------------------------------------------------------

    async def answer(self, question: QuestionPart, answers: list[list[str]]) -> AnswerOutcome:
        """One list per question: the chosen labels (select, confirm), or the typed text as
        its one item (input); "not_pending" when answered elsewhere or timed out."""
        if question.kind == "secret":
            raise TalkieError(_("A secret is answered with provide_secret, never as text."))
        body = []
        for index, chosen in enumerate(answers):
            if question.kind == "input":
                body.append({"questionIndex": index, "free_text": chosen[0] if chosen else ""})
            else:
                body.append({"questionIndex": index, "selected_labels": list(chosen)})
        return await self.client.answer_interaction(question.question_id, body)

    async def provide_secret(self, question: QuestionPart, value: str | None) -> AnswerOutcome:
        """PUT the value to the question's `writeEndpoint` (this gateway's only), then answer
        "provided"; None answers "declined". The value is never kept or logged."""
        if value is not None:
            endpoint = question.write_endpoint
            if not endpoint:
                raise TalkieError(_("The gateway asked for a secret without saying where it goes."))
            await self.client.put_credential(endpoint, value)
            del value  # nothing here holds on to it
            outcome = "provided"
        else:
            outcome = "declined"
        body = [{"questionIndex": 0, "selected_labels": [outcome]}]
        return await self.client.answer_interaction(question.question_id, body)

    # --- Attaches ------------------------------------------------------------------------

    async def upload(
        self, path: Path, *, progress: Callable[[int, int], None] | None = None
    ) -> Attachment:
        """`POST /v1/files`, its limits checked first (FileRefused with the reason)."""
        probed, stored = await self.client.upload(path, progress=progress)
        return Attachment(
            key=stored.key,
            filename=probed.filename,
            media_type=stored.media_type or probed.media_type,
            size=stored.size if stored.size is not None else probed.size,
            kind=probed.kind,
            url=stored.url,
        )

    # --- ChoosesModel --------------------------------------------------------------------

    async def models(self) -> ModelList:
        """`GET /v1/llm/available-models`."""
        offered = await self.client.models()
        return ModelList(
            tuple(
                ModelChoice(m.id, m.label or m.id, reasoning=m.reasoning) for m in offered.models
            ),
            offered.default,
        )

    # --- Dictates ------------------------------------------------------------------------

    async def transcribe(self, wav: bytes, *, language: str | None = None) -> Transcription:
        """`POST /v1/voice/transcribe?persist`: the text, and the key of the stored audio
        (send it as the message's `voice_input_key`)."""
        heard = await self.client.transcribe(wav, language=language)
        return Transcription(heard.text, heard.file_key)


def _implements_backend(backend: MinaraBackend) -> Backend:
    """Checked by mypy only: the Minara backend has every member of the interface."""
    return backend


def _implements_session(session: MinaraSession) -> Session[MinaraOutgoing]:
    """Checked by mypy only: the Minara session has every member of the interface."""
    return session


def _implements_session_parts(session: MinaraSession) -> Reattaches:
    """Checked by mypy only: a gateway's session follows a turn that runs as it is loaded."""
    return session


def _implements_extras(
    backend: MinaraBackend,
) -> tuple[Searches, Steers, Answers, Attaches, ChoosesModel, Dictates]:
    """Checked by mypy only: the optional protocols the capabilities promise."""
    return backend, backend, backend, backend, backend, backend
