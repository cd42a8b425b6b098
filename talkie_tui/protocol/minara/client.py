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
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel, ValidationError

from talkie_tui.core.errors import EventTooLarge, ServerError, TalkieError, TransportError
from talkie_tui.core.sanitize import clean_text
from talkie_tui.core.tokens import TokenSource
from talkie_tui.core.urls import is_loopback_host, origin_of
from talkie_tui.i18n import _
from talkie_tui.protocol.bearer import BearerAuth
from talkie_tui.protocol.events import iter_event_data
from talkie_tui.protocol.failures import describe_transport_error, network_errors
from talkie_tui.protocol.http import make_http_client, read_capped
from talkie_tui.protocol.manifest import check_secure

from .errors import EndpointRefused, error_for
from .files import MultipartFile, ProbedFile, check_count, probe_file
from .models import (
    AvailableModels,
    SearchResult,
    SessionDetail,
    SessionList,
    Transcript,
    TurnAccepted,
    TurnRequest,
    UploadedFile,
)

__all__ = [
    "DEFAULT_TIMEOUT",
    "MAX_ANSWER_BYTES",
    "AnswerOutcome",
    "MinaraClient",
    "SseTurn",
    "gateway_base",
]

_M = TypeVar("_M", bound=BaseModel)
AnswerOutcome = Literal["answered", "not_pending"]

DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=10.0)
# The older revision streams the turn in the answer: a quiet agent may think for a while.
SSE_TIMEOUT = httpx.Timeout(30.0, connect=10.0, read=120.0)
# An upload may take long on a slow line; each write of a chunk must still progress.
UPLOAD_TIMEOUT = httpx.Timeout(60.0, connect=10.0, write=60.0, read=120.0)
MAX_ANSWER_BYTES = 64 * 1024 * 1024
"""The largest JSON answer read (a long session's transcript); more is refused."""


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


def _segment(value: str) -> str:
    """One path segment from a server-given id ("." and ".." kept as data)."""
    encoded = quote(value, safe="")
    return encoded.replace(".", "%2E") if set(value) <= {"."} else encoded


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


class MinaraClient:
    """One Minara gateway: its routes as typed methods, the bearer for its origin only."""

    def __init__(
        self,
        base_url: str,
        *,
        tokens: TokenSource | None = None,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        self.base_url = base_url if base_url.endswith("/") else base_url + "/"
        self.origin = origin_of(self.base_url)
        self._auth = BearerAuth(self.origin, tokens)
        self._own_http = http is None
        self._http = http or make_http_client()

    @property
    def tokens(self) -> TokenSource | None:
        """Where the bearer comes from; assign a new source after the token changed."""
        return self._auth.tokens

    @tokens.setter
    def tokens(self, tokens: TokenSource | None) -> None:
        self._auth.tokens = tokens

    async def aclose(self) -> None:
        """Close the connections this client opened."""
        if self._own_http:
            await self._http.aclose()

    async def __aenter__(self) -> MinaraClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # --- plumbing ------------------------------------------------------------------------

    def url(self, route: str) -> str:
        """The absolute URL of a route such as `v1/sessions` (relative to the base)."""
        return self.base_url + route.lstrip("/")

    def resolve_url(self, url: str) -> str:
        """A server-given URL (a path of the gateway, or absolute) made absolute."""
        if url.startswith("/") and not url.startswith("//"):
            return self.origin + url
        return str(httpx.URL(self.base_url).join(url))

    def is_same_origin(self, url: str) -> bool:
        """True when `url` (absolute or a path) is on the gateway's origin."""
        try:
            return origin_of(self.resolve_url(url)) == self.origin
        except (httpx.InvalidURL, TypeError, ValueError):
            return False

    async def _send(
        self,
        method: str,
        url: str,
        *,
        body: object = None,
        content: bytes | AsyncIterator[bytes] | None = None,
        headers: Mapping[str, str] | None = None,
        params: Mapping[str, str] | None = None,
        timeout: httpx.Timeout = DEFAULT_TIMEOUT,  # noqa: ASYNC109 (httpx's own timeouts)
        stream: bool = False,
    ) -> httpx.Response:
        """Send one request (see the module docstring); a non-2xx answer raises, a 2xx one
        comes back read (at most `MAX_ANSWER_BYTES`), or unread with `stream`."""
        request = self._http.build_request(
            method,
            url,
            json=body,
            content=content,
            headers=headers,
            params=params,
            timeout=timeout,
        )
        with network_errors(self.origin):
            response = await self._http.send(
                request, auth=self._auth, stream=True, follow_redirects=False
            )
            if not response.is_success:
                await read_capped(response)
                raise error_for(response)
            if not stream:
                await _read_limited(response)
        return response

    async def _json(self, method: str, route: str, **options: Any) -> Any:
        response = await self._send(method, self.url(route), **options)
        try:
            return response.json()
        except (ValueError, RecursionError):
            raise _unreadable(route, _("not JSON")) from None

    async def _model(self, model: type[_M], method: str, route: str, **options: Any) -> _M:
        data = await self._json(method, route, **options)
        try:
            return model.model_validate(data)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise _unreadable(route, f"{where}: {first['msg']}") from None

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
            await _read_limited(response)
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
        return await self._model(SessionDetail, "GET", f"v1/sessions/{_segment(session_id)}")

    async def delete_session(self, session_id: str) -> None:
        """`DELETE /v1/sessions/:id`."""
        await self._send("DELETE", self.url(f"v1/sessions/{_segment(session_id)}"))

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
                self.url(f"v1/interactions/{_segment(question_id)}/answer"),
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


async def _read_limited(response: httpx.Response, limit: int = MAX_ANSWER_BYTES) -> None:
    """Read a 2xx answer whole, refusing one over `limit`."""
    body = bytearray()
    try:
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > limit:
                raise TransportError(
                    _("The gateway's answer is larger than {limit} MiB; it was refused.").format(
                        limit=limit // 1048576
                    ),
                    retryable=False,
                )
    finally:
        await response.aclose()
    response._content = bytes(body)


def _unreadable(route: str, problem: str) -> TalkieError:
    return TalkieError(
        _("The gateway's answer to '{route}' is unreadable ({problem}).").format(
            route=route.split("?", 1)[0], problem=clean_text(problem)[:200]
        )
    )
