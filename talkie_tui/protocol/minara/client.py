"""MinaraClient: every REST route of the Minara gateway (`minara-chat.md`, `minara-stream.md`).

Every request leaves through `_send`: the bearer by `BearerAuth` for the gateway's origin only,
no redirect followed, a timeout on every wait, network failures as TransportError, error
answers as the `talkie_tui.core.errors` family in the gateway's words (`errors.error_for`).

`chat_stream` reads both revisions of the turn request: the current one answers
`{session_id, kind, is_new}` and streams the turn over the socket (`stream.py`); the older one
answers `text/event-stream`, each event's data one `{type, data}` chat event (`SseTurn`).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

import httpx
from pydantic import ValidationError

from talkie_tui.core.errors import EventTooLarge, ServerError, TalkieError, TransportError
from talkie_tui.core.sanitize import clean_text
from talkie_tui.core.urls import is_loopback_host, origin_of
from talkie_tui.i18n import _
from talkie_tui.protocol.minara.errors import EndpointRefused, error_for
from talkie_tui.protocol.minara.files import MultipartFile, ProbedFile, check_count, probe_file
from talkie_tui.protocol.minara.models import (
    AvailableModels,
    SearchResult,
    SessionDetail,
    SessionList,
    Transcript,
    TurnAccepted,
    TurnRequest,
    UploadedFile,
)
from talkie_tui.protocol.net.addresses import check_secure
from talkie_tui.protocol.net.failures import describe_transport_error, network_errors
from talkie_tui.protocol.net.rest import (
    DEFAULT_TIMEOUT,
    MAX_ANSWER_BYTES,
    RestClient,
    path_segment,
    read_limited,
)
from talkie_tui.protocol.net.sse import iter_event_data

__all__ = [
    "DEFAULT_TIMEOUT",
    "MAX_ANSWER_BYTES",
    "AnswerOutcome",
    "MinaraClient",
    "SseTurn",
    "gateway_base",
]

AnswerOutcome = Literal["answered", "not_pending"]

# The older revision streams the turn in the answer: a quiet agent may think for a while.
SSE_TIMEOUT = httpx.Timeout(30.0, connect=10.0, read=120.0)
# An upload may take long on a slow line; each write of a chunk must still progress.
UPLOAD_TIMEOUT = httpx.Timeout(60.0, connect=10.0, write=60.0, read=120.0)


def gateway_base(address: str, *, allow_private_http: bool = False) -> str:
    """The gateway's base URL (origin plus any path prefix, ending in "/") for an address:
    `host[:port]` (plain http for loopback, else https) or a URL. Plain http is refused off
    this computer (and on a private LAN without the development switch)."""
    text = address.strip()
    if not text:
        raise TalkieError(_("No gateway address given."))
    if "://" not in text:
        host = text.split("/", 1)[0]
        try:
            bare = httpx.URL(f"http://{host}").host
        except httpx.InvalidURL:
            bare = host
        text = ("http://" if is_loopback_host(bare) else "https://") + text
    try:
        url = httpx.URL(text)
    except httpx.InvalidURL as error:
        raise TalkieError(
            _("'{address}' is not a gateway address: {error}.").format(address=address, error=error)
        ) from None
    if not url.host:
        raise TalkieError(_("'{address}' has no host name.").format(address=address))
    if url.userinfo:
        raise TalkieError(_("Gateway addresses must not contain a user name or password."))
    check_secure(url, allow_private_http=allow_private_http)
    path = url.path if url.path.endswith("/") else url.path + "/"
    return str(url.copy_with(path=path, query=None, fragment=None))


class SseTurn:
    """A turn answered the older way: its `{type, data}` events in the answer's event stream.

    Iterate `events()` once; `aclose()` (or leaving `async with`) drops the connection.
    """

    def __init__(self, response: httpx.Response, origin: str) -> None:
        self.response = response
        self._origin = origin

    async def events(self) -> AsyncIterator[dict[str, Any]]:
        """The turn's events as they arrive; a data line that is no event is skipped.

        A dropped connection raises TransportError; an event over 1 MiB, EventTooLarge.
        """
        try:
            async for batch in iter_event_data(self.response):
                for data in batch:
                    try:
                        event = json.loads(data)
                    except (ValueError, RecursionError):
                        continue
                    if isinstance(event, dict) and isinstance(event.get("type"), str):
                        yield event
        except EventTooLarge:
            raise
        except httpx.HTTPError as error:
            raise describe_transport_error(error, self._origin) from error
        finally:
            await self.response.aclose()

    async def aclose(self) -> None:
        """Drop the connection (the turn goes on on the gateway)."""
        await self.response.aclose()

    async def __aenter__(self) -> SseTurn:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


class MinaraClient(RestClient):
    """One Minara gateway: its routes as typed methods, the bearer for its origin only."""

    def _error_for(self, response: httpx.Response) -> ServerError:
        return error_for(response)

    def _unreadable(self, route: str, problem: str) -> TalkieError:
        return _unreadable(route, problem)

    def _too_large(self, limit: int) -> TalkieError:
        return TransportError(
            _("The gateway's answer is larger than {limit} MiB; it was refused.").format(
                limit=limit // 1048576
            ),
            retryable=False,
        )

    # --- health --------------------------------------------------------------------------

    async def healthz(self) -> bool:
        """`GET /healthz` (no sign-in): True when it answers `{"ok": true}`."""
        response = await self._send("GET", self.url("healthz"), timeout=httpx.Timeout(10.0))
        try:
            data = response.json()
        except (ValueError, RecursionError):
            return False
        return isinstance(data, dict) and data.get("ok") is True

    # --- turns ---------------------------------------------------------------------------

    async def chat_stream(self, request: TurnRequest) -> TurnAccepted | SseTurn:
        """`POST /v1/chat/stream`: the turn accepted (follow it on the socket), or, from a
        gateway of the older revision, its event stream to read (an `SseTurn`, to close)."""
        check_count(len(request.attachments))
        response = await self._send(
            "POST",
            self.url("v1/chat/stream"),
            body=request.body(),
            # The spec's revision (JSON, then the socket) is asked for; an older gateway answers
            # with its event stream whatever is asked, and that is read too.
            headers={"Accept": "application/json"},
            timeout=SSE_TIMEOUT,
            stream=True,
        )
        media_type = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if media_type == "text/event-stream":
            return SseTurn(response, self.origin)
        try:
            await read_limited(response, MAX_ANSWER_BYTES, self._too_large)
        except httpx.HTTPError as error:
            raise describe_transport_error(error, self.origin) from error
        try:
            return TurnAccepted.model_validate(response.json())
        except (ValueError, ValidationError, RecursionError):
            raise _unreadable("v1/chat/stream", _("no session_id")) from None

    async def interrupt(self, session_id: str) -> str:
        """`POST /v1/chat/interrupt`: "interrupted", or "no_active_turn" when nothing runs."""
        data = await self._json("POST", "v1/chat/interrupt", body={"session_id": session_id})
        status = data.get("status") if isinstance(data, dict) else None
        return status if isinstance(status, str) else "interrupted"

    async def interject(self, session_id: str, message: str) -> bool:
        """`POST /v1/chat/interject`: True when the running turn took it, False when none runs
        (409 `no_active_turn`: send it as a new turn)."""
        try:
            await self._send(
                "POST",
                self.url("v1/chat/interject"),
                body={"session_id": session_id, "message": message},
            )
        except ServerError as error:
            if error.status == 409:
                return False
            raise
        return True

    # --- sessions ------------------------------------------------------------------------

    async def sessions(
        self,
        *,
        kind: str | None = None,
        origin: str | None = None,
        limit: int | None = None,
        offset: int | None = None,
    ) -> SessionList:
        """`GET /v1/sessions`: most recently updated first."""
        chosen = {"kind": kind, "origin": origin, "limit": limit, "offset": offset}
        params = {name: str(value) for name, value in chosen.items() if value is not None}
        return await self._model(SessionList, "GET", "v1/sessions", params=params)

    async def session(self, session_id: str) -> SessionDetail:
        """`GET /v1/sessions/:id`: the transcript rows, whether a turn runs, open questions."""
        return await self._model(SessionDetail, "GET", f"v1/sessions/{path_segment(session_id)}")

    async def delete_session(self, session_id: str) -> None:
        """`DELETE /v1/sessions/:id`."""
        await self._send("DELETE", self.url(f"v1/sessions/{path_segment(session_id)}"))

    async def search(self, query: str) -> list[SearchResult]:
        """`GET /v1/sessions/search?q=`: best matches first; unreadable hits are dropped."""
        data = await self._json("GET", "v1/sessions/search", params={"q": query})
        items = data.get("results") if isinstance(data, dict) else None
        results = []
        for item in items if isinstance(items, list) else []:
            try:
                results.append(SearchResult.model_validate(item))
            except ValidationError:
                continue
        return results

    # --- questions -----------------------------------------------------------------------

    async def answer_interaction(
        self, question_id: str, answers: list[dict[str, Any]]
    ) -> AnswerOutcome:
        """`POST /v1/interactions/:id/answer`; "not_pending" (404) when it was answered
        elsewhere or timed out, which is no error."""
        try:
            await self._send(
                "POST",
                self.url(f"v1/interactions/{path_segment(question_id)}/answer"),
                body={"answers": answers},
            )
        except ServerError as error:
            if error.status == 404:
                return "not_pending"
            raise
        return "answered"

    def credentials_url(self, write_endpoint: str) -> str:
        """The absolute URL of a question's `writeEndpoint`; EndpointRefused when it is not
        one of this gateway's credential routes (another origin, or another route)."""
        try:
            url = self.resolve_url(write_endpoint)
            same = origin_of(url) == self.origin
        except (httpx.InvalidURL, TypeError, ValueError):
            same, url = False, write_endpoint
        if not same or not url.startswith(self.url("v1/credentials/")) or ".." in url:
            raise EndpointRefused(
                _(
                    "The gateway asked for a secret to be sent to {target}, which is not its "
                    "own credentials route; nothing was sent."
                ).format(target=clean_text(write_endpoint)[:200]),
                status=0,
                code="foreign_endpoint",
                retryable=False,
            )
        return url

    async def put_credential(self, write_endpoint: str, value: str) -> None:
        """`PUT writeEndpoint {"value"}` on this gateway only (checked before anything is sent).

        The value is neither logged nor kept: it is in the one request body and nowhere else.
        """
        url = self.credentials_url(write_endpoint)
        await self._send("PUT", url, body={"value": value})

    # --- files ---------------------------------------------------------------------------

    async def upload(
        self,
        path: Path,
        *,
        progress: Callable[[int, int], None] | None = None,
        probed: ProbedFile | None = None,
    ) -> tuple[ProbedFile, UploadedFile]:
        """`POST /v1/files` (multipart field "file"), its limits checked before a byte goes;
        `progress(sent, total)` as the file's bytes go out."""
        probed = probed or probe_file(path)
        body = MultipartFile("file", probed.filename, probed.media_type, path, progress=progress)
        headers = {"Content-Type": body.content_type, "Content-Length": str(body.length)}
        stored = await self._model(
            UploadedFile,
            "POST",
            "v1/files",
            content=body.chunks(),
            headers=headers,
            timeout=UPLOAD_TIMEOUT,
        )
        return probed, stored

    def file_url(self, key_or_url: str) -> str:
        """Where a stored file is served: its `url` as given, else `/v1/files/:key`."""
        if key_or_url.startswith(("/", "http://", "https://")):
            return self.resolve_url(key_or_url)
        return self.url("v1/files/" + quote(key_or_url, safe="/"))

    @asynccontextmanager
    async def open_file(self, key_or_url: str) -> AsyncIterator[httpx.Response]:
        """A streamed `GET /v1/files/:key` (or a same-origin URL the gateway gave)."""
        url = self.file_url(key_or_url)
        response = await self._send("GET", url, stream=True)
        try:
            with network_errors(self.origin):
                yield response
        finally:
            await response.aclose()

    # --- models and voice ----------------------------------------------------------------

    async def models(self) -> AvailableModels:
        """`GET /v1/llm/available-models`."""
        return await self._model(AvailableModels, "GET", "v1/llm/available-models")

    async def transcribe(
        self, wav: bytes, *, language: str | None = None, persist: bool = True
    ) -> Transcript:
        """`POST /v1/voice/transcribe[?persist]` with a WAV recording (multipart "file")."""
        fields = {"language": language} if language else None
        body = MultipartFile("file", "recording.wav", "audio/wav", wav, fields=fields)
        headers = {"Content-Type": body.content_type, "Content-Length": str(body.length)}
        route = "v1/voice/transcribe" + ("?persist" if persist else "")
        return await self._model(
            Transcript,
            "POST",
            route,
            content=body.chunks(),
            headers=headers,
            timeout=UPLOAD_TIMEOUT,
        )

    # --- the socket ----------------------------------------------------------------------

    def stream_url(self) -> str:
        """The URL of the stream socket: `ws[s]://…/v1/stream` (wss unless http was allowed)."""
        url = httpx.URL(self.url("v1/stream"))
        return str(url.copy_with(scheme="wss" if url.scheme == "https" else "ws"))


def _unreadable(route: str, problem: str) -> TalkieError:
    return TalkieError(
        _("The gateway's answer to '{route}' is unreadable ({problem}).").format(
            route=route.split("?", 1)[0], problem=clean_text(problem)[:200]
        )
    )
