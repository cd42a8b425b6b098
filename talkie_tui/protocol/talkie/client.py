"""TalkieClient: every talkie/1 endpoint as a typed async method (§4, §5, §8, §9).

Every request leaves through `_send`: the bearer by `BearerAuth` (issuer origin only, one
refresh on 401), no redirect followed, network failures as TransportError, a refused answer
read no further than 64 kB."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any, Literal, TypeVar

import ag_ui.core as agui
import httpx
from pydantic import BaseModel, ValidationError

from talkie_tui.core.errors import (
    EventTooLarge,
    TalkieError,
    TooLargeError,
    TransportError,
)
from talkie_tui.core.sanitize import clean_text
from talkie_tui.core.tokens import TokenSource
from talkie_tui.core.urls import origin_of
from talkie_tui.i18n import _
from talkie_tui.protocol.net.bearer import BearerAuth, BearerClient
from talkie_tui.protocol.net.failures import describe_transport_error, network_errors
from talkie_tui.protocol.net.http import make_http_client, read_capped
from talkie_tui.protocol.talkie.answers import checked_stream, error_for, json_of, parse_model
from talkie_tui.protocol.talkie.events import (
    MAX_EVENT_CHARS,
    DecodedEvent,
    EventDecoder,
    StreamTruncated,
    iter_event_data,
)
from talkie_tui.protocol.talkie.manifest import (
    DiscoveredServer,
    ManifestCache,
    check_signaling_url,
    discover_address,
)
from talkie_tui.protocol.talkie.models import Action, DecisionResult, Status, Thread, ThreadHistory
from talkie_tui.protocol.talkie.run_request import RunRequest, new_id
from talkie_tui.protocol.talkie.voice_models import VoiceSession, VoiceToolResult, VoiceUsage

__all__ = [
    "BearerAuth",
    "RunRequest",
    "TalkieClient",
    "make_http_client",
    "new_id",
]


_M = TypeVar("_M", bound=BaseModel)
USER_AGENT = "talkie-tui/0.1 (talkie/1)"
DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=10.0)


# The server pings every 15 s; four missed pings mean the stream is gone.
STREAM_TIMEOUT = httpx.Timeout(30.0, connect=10.0, read=60.0)
SEND_ATTEMPTS = 3


class TalkieClient(BearerClient):
    """A connection to one Talkie server: discovery done, tokens attached to its origin only."""

    def __init__(
        self,
        server: DiscoveredServer,
        *,
        tokens: TokenSource | None = None,
        http: httpx.AsyncClient | None = None,
        cache: ManifestCache | None = None,
        max_event_chars: int = MAX_EVENT_CHARS,
        retry_delay: float = 0.5,
        close_http: bool | None = None,
    ) -> None:
        self.server = server
        self._auth = BearerAuth(server.origin, tokens)
        # Closed with the client when it made it, or when `close_http` hands it over.
        self._own_http = http is None if close_http is None else close_http
        self._http = http or make_http_client()
        self._cache = cache or ManifestCache()
        self._max_event_chars = max_event_chars
        self.read_pause = 0.0  # rest after a run's read that waited (see iter_event_data)
        self._retry_delay = retry_delay

    @classmethod
    async def connect(
        cls,
        address: str,
        *,
        tokens: TokenSource | None = None,
        http: httpx.AsyncClient | None = None,
        cache: ManifestCache | None = None,
        allow_private_http: bool = False,
        accepted_origins: set[str] | None = None,
        **options: Any,
    ) -> TalkieClient:
        """Discover the server at `address` (§1) and return a client for it."""
        cache = cache or ManifestCache()
        server, http, own_http = await discover_address(
            address,
            cache=cache,
            http=http,
            allow_private_http=allow_private_http,
            accepted_origins=accepted_origins,
        )
        return cls(server, tokens=tokens, http=http, cache=cache, close_http=own_http, **options)

    async def aclose(self) -> None:
        """Close the HTTP connections this client (and its token source) opened."""
        if self._own_http:
            await self._http.aclose()
        # An OAuth token source keeps its own connection to the authorization server.
        close_tokens = getattr(self.tokens, "aclose", None)
        if close_tokens is not None:
            await close_tokens()

    # --- plumbing ------------------------------------------------------------------------

    async def _send(
        self,
        method: str,
        url: str,
        *,
        body: object = None,
        content: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        timeouts: httpx.Timeout = DEFAULT_TIMEOUT,
        stream: bool = False,
    ) -> httpx.Response:
        """The one way a request leaves this client (see the module docstring).

        A 2xx answer comes back unread with `stream`, read otherwise; any other answer comes
        back read (at most 64 kB) and closed. Network failures raise TransportError.
        """
        request = self._http.build_request(
            method,
            url,
            json=body,
            content=content,
            headers={"User-Agent": USER_AGENT, **(headers or {})},
            timeout=timeouts,
        )
        with network_errors(origin_of(url)):
            response = await self._http.send(
                request,
                auth=self._auth,
                stream=True,
                follow_redirects=False,  # whatever client the caller gave us
            )
            if not response.is_success:
                await read_capped(response)
            elif not stream:
                try:
                    await response.aread()
                finally:
                    await response.aclose()
        return response

    async def _refresh_after(self, response: httpx.Response) -> bool:
        """§1: after a 401 or 404, fetch the manifest again; True means try again.

        A 401 to a request the bearer auth already retried with a new token is final.
        """
        if response.status_code == 404 or (
            response.status_code == 401 and not BearerAuth.retried(response)
        ):
            return await self._refresh_manifest()
        return False

    async def _refresh_manifest(self) -> bool:
        """Fetch the manifest again (§1: refresh on 401/404); True if the endpoints changed."""
        self._cache.invalidate(self.server.manifest_url)
        try:
            fresh = await self._cache.discover(self._http, self.server.manifest_url)
        except TalkieError:
            return False
        if fresh.origin != self.server.origin or fresh.server_id != self.server.server_id:
            return False
        changed = fresh.manifest.endpoints != self.server.manifest.endpoints
        fresh.accepted_origins |= self.server.accepted_origins
        self.server = fresh
        return changed

    async def _request(
        self,
        method: str,
        endpoint: str,
        params: Mapping[str, str] | None = None,
        body: object = None,
    ) -> httpx.Response:
        for attempt in range(2):
            url = self.server.endpoint(endpoint, **(params or {}))
            response = await self._send(method, url, body=body)
            if response.is_success:
                return response
            if attempt == 0 and await self._refresh_after(response):
                continue
            raise error_for(response)
        raise AssertionError("unreachable")  # pragma: no cover

    def resolve_url(self, url: str) -> str:
        """An absolute URL for a server-given `url` (a same-origin path or an absolute URL)."""
        return str(httpx.URL(self.server.origin + "/").join(url))

    def is_same_origin(self, url: str) -> bool:
        """True when `url` (absolute or a path) points at the issuer origin."""
        try:
            return origin_of(self.resolve_url(url)) == self.server.origin
        except (httpx.InvalidURL, TypeError):
            return False

    @asynccontextmanager
    async def open_stream(self, url: str) -> AsyncIterator[httpx.Response]:
        """GET `url` as a stream: the bearer only if it is same-origin; redirects never followed.

        Used for same-origin file downloads (§6) and the brand logo; a non-2xx answer raises.
        A network failure while the body is read inside the block raises TransportError too.
        """
        url = self.resolve_url(url)
        response = await self._send("GET", url, stream=True)
        try:
            if not response.is_success:
                raise error_for(response)
            with network_errors(origin_of(url)):
                yield response
        finally:
            await response.aclose()

    async def _get_model(
        self, model: type[_M], endpoint: str, params: Mapping[str, str] | None = None
    ) -> _M:
        return parse_model(model, await self._request("GET", endpoint, params), endpoint)

    # --- §4 status -----------------------------------------------------------------------

    async def status(self) -> Status:
        """Who is signed in, whether chat and voice work, and usage."""
        return await self._get_model(Status, "status")

    # --- §9 threads ----------------------------------------------------------------------

    async def threads(self) -> list[Thread]:
        """The thread list, newest first."""
        response = await self._request("GET", "threads")
        data = json_of(response, "threads")
        items = data.get("threads") if isinstance(data, dict) else None
        if not isinstance(items, list):
            raise TalkieError(_("The server's thread list is unreadable (no 'threads' list)."))
        threads = []
        for item in items:
            try:
                threads.append(Thread.model_validate(item))
            except ValidationError:
                continue  # one unreadable row must not hide the others
        return threads

    async def thread(self, thread_id: str) -> ThreadHistory:
        """A thread with its messages and actions."""
        return await self._get_model(ThreadHistory, "thread", {"threadId": thread_id})

    async def delete_thread(self, thread_id: str) -> None:
        """Delete a thread; the server cancels its pending actions."""
        await self._request("DELETE", "thread", {"threadId": thread_id})

    # --- §8 actions ----------------------------------------------------------------------

    async def action(self, action_id: str) -> Action:
        """The current, authoritative state of an action."""
        return await self._get_model(Action, "action", {"actionId": action_id})

    async def decide(
        self,
        action: Action,
        decision: Literal["confirm", "cancel"],
        method: Literal["button", "voice"] = "button",
    ) -> DecisionResult:
        """Send a human decision; 409 conflict/stale and 410 expired raise distinct errors."""
        body = {"decision": decision, "paramsHash": action.params_hash, "method": method}
        response = await self._request("POST", "decision", {"actionId": action.id}, body)
        return parse_model(DecisionResult, response, "decision")

    # --- §10 voice ----------------------------------------------------------------------

    async def voice_session(
        self,
        thread_id: str | None = None,
        locale: str | None = None,
        *,
        allow_http_signaling: bool = False,
    ) -> VoiceSession:
        """Start a voice session (§10.1); its signaling URL is checked before it is returned."""
        body = {k: v for k, v in (("threadId", thread_id), ("locale", locale)) if v}
        response = await self._request("POST", "voiceSessions", None, body)
        session = parse_model(VoiceSession, response, "voiceSessions")
        check_signaling_url(
            session.signaling.url,
            self.server.manifest.voice.get("signalingHosts"),
            allow_http=allow_http_signaling,
        )
        return session

    async def voice_tool(
        self, session: VoiceSession, name: str, call_id: str, arguments: str
    ) -> VoiceToolResult:
        """Run a tool the provider asked for (§10.2); 409 means this callId was already used."""
        params = {"voiceSessionId": session.voice_session_id, "name": name}
        body = {"callId": call_id, "arguments": arguments}
        response = await self._request("POST", "voiceTool", params, body)
        return parse_model(VoiceToolResult, response, "voiceTool")

    async def voice_transcript(
        self, session: VoiceSession, role: Literal["user", "assistant"], text: str, item_id: str
    ) -> None:
        """Store a final transcript in the thread (§10.3)."""
        params = {"voiceSessionId": session.voice_session_id}
        body = {"role": role, "text": text, "itemId": item_id}
        await self._request("POST", "voiceTranscript", params, body)

    async def voice_usage(
        self, session: VoiceSession, seconds: float, *, final: bool = False
    ) -> VoiceUsage:
        """Report the seconds of the call so far (§10.3); the answer says how many are left."""
        params = {"voiceSessionId": session.voice_session_id}
        body = {"seconds": round(seconds), "final": final}
        response = await self._request("POST", "voiceUsage", params, body)
        return parse_model(VoiceUsage, response, "voiceUsage")

    # --- §5 runs -------------------------------------------------------------------------

    async def cancel_run(self, run_id: str) -> None:
        """Ask the server to stop a run (it answers ok also when the run already ended)."""
        await self._request("POST", "cancelRun", {"runId": run_id}, {})

    def check_length(self, text: str) -> None:
        """Refuse a message longer than `limits.maxMessageChars` before it is sent."""
        limit = self.server.manifest.limits.max_message_chars
        if len(text) > limit:
            message = _(
                "The message has {count:,} characters; this server accepts at most {limit:,}. "
                "Shorten it and send again."
            ).format(count=len(text), limit=limit)
            raise TooLargeError(message, status=413, code="too_large", retryable=False)

    async def run(self, request: RunRequest) -> AsyncIterator[DecodedEvent]:
        """Send a user message and yield the run's events as they arrive.

        A send that fails before the stream starts is retried with the same ids. A stream
        that ends without RUN_FINISHED or RUN_ERROR ends with a StreamTruncated event.
        """
        self.check_length(request.text)
        response = await self._open_run(request)
        decoder = EventDecoder()
        ended = False
        try:
            async for batch in iter_event_data(response, self._max_event_chars, self.read_pause):
                for data in batch:
                    for event in decoder.decode(data):
                        cls = type(event)
                        if ended and cls not in _AFTER_END:
                            continue  # after RUN_FINISHED only a late error or a new run counts
                        if cls in _LIFECYCLE:
                            if isinstance(event, agui.RunStartedEvent):
                                request.thread_id = event.thread_id
                                ended = False
                            elif isinstance(event, agui.RunFinishedEvent):
                                ended = request.finished = True
                            elif isinstance(event, agui.RunErrorEvent):
                                ended = True
                                request.error = event
                        yield event
        except TalkieError as error:
            request.truncated = error.message
            request.abandoned = isinstance(error, EventTooLarge)
        except httpx.DecodingError as error:
            # A body that cannot be decoded (a broken gzip stream…) is no network hiccup.
            request.truncated = _(
                "The server's event stream could not be decoded ({error}); the answer was "
                "abandoned."
            ).format(error=clean_text(str(error) or type(error).__name__)[:200])
            request.abandoned = True
        except httpx.HTTPError as error:
            request.truncated = describe_transport_error(error, self.server.origin).message
        finally:
            await response.aclose()
        for event in decoder.finish():
            yield event
        if not ended:
            request.truncated = request.truncated or _(
                "The connection closed before the answer was complete."
            )
        if request.truncated:
            yield StreamTruncated(request.truncated, abandoned=request.abandoned)

    async def _open_run(self, request: RunRequest) -> httpx.Response:
        # A 401 is retried by the bearer auth with a new token; a 502/503/504 or a network
        # failure here. Every attempt carries the same message id, so the server stores the
        # message once (§5).
        refreshed = False
        headers = {"Accept": "text/event-stream", "Content-Type": "application/json"}
        for attempt in range(1, SEND_ATTEMPTS + 1):
            url = self.server.endpoint("run")
            try:
                response = await self._send(
                    "POST",
                    url,
                    content=request.body(),
                    headers=headers,
                    timeouts=STREAM_TIMEOUT,
                    stream=True,
                )
            except TransportError as error:
                failure: TalkieError = error
            else:
                if response.is_success:
                    return await checked_stream(response)
                if not refreshed and await self._refresh_after(response):
                    refreshed = True
                    continue
                failure = error_for(response)
                if not (failure.retryable and response.status_code in (502, 503, 504)):
                    raise failure
            if attempt == SEND_ATTEMPTS:
                raise failure
            await asyncio.sleep(self._retry_delay * 2 ** (attempt - 1))
        raise AssertionError("unreachable")  # pragma: no cover


_AFTER_END = (agui.RunErrorEvent, agui.RunStartedEvent)
_LIFECYCLE = (agui.RunStartedEvent, agui.RunFinishedEvent, agui.RunErrorEvent)
