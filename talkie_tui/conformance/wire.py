"""The wire as the checks see it: raw answers, the §3 envelope, and runs read event by event.

The checks judge the server, so they read what it actually sent: a raw request keeps the exact
status and body, and a run is decoded here (with the protocol layer's SSE and event decoders)
rather than through `TalkieClient.run`, which forgives what a client should forgive.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import ag_ui.core as agui
import httpx

from talkie_tui.conformance.report import CheckFailed, show
from talkie_tui.core.errors import TalkieError
from talkie_tui.core.tokens import StaticToken
from talkie_tui.protocol.net.bearer import BearerAuth
from talkie_tui.protocol.net.failures import describe_transport_error
from talkie_tui.protocol.talkie.client import USER_AGENT, TalkieClient
from talkie_tui.protocol.talkie.events import (
    DecodedEvent,
    EventDecoder,
    MalformedEvent,
    iter_event_data,
)
from talkie_tui.protocol.talkie.run_request import RunRequest

__all__ = [
    "Answer",
    "RunResult",
    "RunStream",
    "Timed",
    "Wire",
    "answer_of",
    "collect_run",
    "event_name",
    "expect_error",
    "expect_ok",
    "open_run",
]

_T = agui.EventType
REQUEST_TIMEOUT = httpx.Timeout(20.0, connect=10.0)
MAX_BODY = 64 * 1024
# After RUN_FINISHED / RUN_ERROR the server has this long to close the stream.
CLOSE_WAIT = 5.0
EVENT_STREAM = "text/event-stream"


def _media_type(response: httpx.Response) -> str:
    content_type: str = response.headers.get("content-type", "")
    return content_type.split(";", 1)[0].strip().lower()


@dataclass(frozen=True)
class Answer:
    """A raw HTTP answer: status, media type and (at most 64 kB of) body."""

    status: int
    media_type: str
    body: bytes

    def json(self) -> Any:
        """The body as JSON, or None when it is not JSON."""
        try:
            return json.loads(self.body)
        except (ValueError, UnicodeDecodeError):
            return None

    @property
    def text(self) -> str:
        """The body as text (undecodable bytes replaced)."""
        return self.body.decode("utf-8", "replace")

    def expect_refused(self, what: str, rule: str, *, status: int | None = None) -> None:
        """Fail the check ("`what` answered …; `rule`") unless the server refused the request,
        with `status` when one is required."""
        refused = self.status >= 400 if status is None else self.status == status
        if not refused:
            raise CheckFailed(f"{what} answered {self.describe()}; {rule}")

    def describe(self) -> str:
        """A short description for a reason: status, and the §3 code/message or the body."""
        data = self.json()
        error = data.get("error") if isinstance(data, dict) else None
        if isinstance(error, dict):
            return (
                f"HTTP {self.status} {show(error.get('code'), 30)}: "
                f"{show(error.get('message'), 80)}"
            )
        if self.media_type == EVENT_STREAM:
            return f"HTTP {self.status} with an event stream"
        body = self.body.decode("utf-8", "replace").strip()
        what = self.media_type or "no content type"
        return f"HTTP {self.status} ({what}) {show(body, 60)}" if body else f"HTTP {self.status}"


async def answer_of(response: httpx.Response) -> Answer:
    """Read a response into an Answer without ever waiting on an event stream."""
    media_type = _media_type(response)
    body = bytearray()
    try:
        # A stream where a plain answer was due may never end: judge it by its headers.
        if media_type != EVENT_STREAM:
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > MAX_BODY:
                    break
    finally:
        await response.aclose()
    return Answer(response.status_code, media_type, bytes(body[:MAX_BODY]))


class Wire:
    """Raw HTTP to the server's endpoints, with the same bearer token the client sends."""

    def __init__(self, client: TalkieClient, token: str | None, http: httpx.AsyncClient) -> None:
        self._client = client
        self.token = token
        self._http = http
        # The client's own bearer auth (issuer origin only); a pasted token never refreshes,
        # so the checks see the server's 401 as it is.
        self._bearer = BearerAuth(client.server.origin, StaticToken(token) if token else None)

    @property
    def origin(self) -> str:
        """The server's origin (where the bearer may go)."""
        return self._client.server.origin

    def url(self, endpoint: str, params: Mapping[str, str] | None = None) -> str:
        """The absolute URL of a manifest endpoint."""
        return self._client.server.endpoint(endpoint, **(params or {}))

    def headers(self, *, stream: bool = False) -> dict[str, str]:
        """Request headers (the bearer is added by the auth, for the issuer origin only)."""
        return {
            "User-Agent": USER_AGENT,
            "Accept": EVENT_STREAM if stream else "application/json",
        }

    @asynccontextmanager
    async def stream(
        self,
        method: str,
        endpoint: str,
        params: Mapping[str, str] | None = None,
        *,
        json_body: object = None,
        content: bytes | None = None,
        auth: bool = True,
        event_stream: bool = False,
    ) -> AsyncIterator[httpx.Response]:
        """Send a request and yield the response with its body still unread."""
        headers = self.headers(stream=event_stream)
        if content is not None:
            headers["Content-Type"] = "application/json"
        # `auth=False` leaves the bearer out on purpose.
        request = self._http.build_request(
            method,
            self.url(endpoint, params),
            json=json_body,
            content=content,
            headers=headers,
            timeout=REQUEST_TIMEOUT,
        )
        try:
            response = await self._http.send(
                request, stream=True, auth=self._bearer if auth else None, follow_redirects=False
            )
        except httpx.HTTPError as error:
            raise CheckFailed(describe_transport_error(error, self.origin).message) from error
        try:
            yield response
        finally:
            await response.aclose()

    async def request(
        self, method: str, endpoint: str, params: Mapping[str, str] | None = None, **send: Any
    ) -> Answer:
        """Send a request (with the options of `stream`) and return its raw answer."""
        async with self.stream(method, endpoint, params, **send) as response:
            try:
                return await answer_of(response)
            except httpx.HTTPError as error:
                raise CheckFailed(describe_transport_error(error, self.origin).message) from error


def expect_error(answer: Answer, status: int, code: str, what: str) -> None:
    """Require a §3 error answer: this status, a JSON envelope, this code, message, retryable."""
    if answer.status != status:
        raise CheckFailed(f"{what}: expected HTTP {status} {code}, got {answer.describe()}")
    data = answer.json()
    error = data.get("error") if isinstance(data, dict) else None
    if not isinstance(error, dict):
        body = answer.body.decode("utf-8", "replace")
        raise CheckFailed(
            f"{what}: the HTTP {status} body is not the §3 envelope "
            f"{{error: {{code, message, retryable}}}}: {show(body)}"
        )
    problems = []
    if error.get("code") != code:
        problems.append(f"error.code is {show(error.get('code'), 30)}, not {show(code)}")
    message = error.get("message")
    if not isinstance(message, str) or not message.strip():
        problems.append("error.message is missing or empty")
    if "retryable" not in error:
        problems.append("error.retryable is missing")
    elif not isinstance(error["retryable"], bool):
        problems.append(f"error.retryable is {show(error['retryable'], 20)}, not a boolean")
    if problems:
        raise CheckFailed(f"{what}: HTTP {status} envelope: " + "; ".join(problems))


def expect_ok(answer: Answer, what: str) -> None:
    """Require `200 {"ok": true}`."""
    if answer.status != 200:
        raise CheckFailed(f"{what}: expected HTTP 200 {{ok: true}}, got {answer.describe()}")
    data = answer.json()
    if not isinstance(data, dict) or data.get("ok") is not True:
        raise CheckFailed(f"{what}: expected {{ok: true}}, got {show(data)}")


def event_name(event: DecodedEvent) -> str:
    """The wire name of an event, for reasons (`TEXT_MESSAGE_CONTENT`, `talkie.card`, …)."""
    kind = getattr(event, "type", None)
    if isinstance(kind, agui.EventType):
        return kind.value
    names = {
        "CardReceived": "talkie.card",
        "ActionProposed": "talkie.action",
        "LinkSuggested": "talkie.open",
        "UsageReported": "talkie.usage",
    }
    return names.get(type(event).__name__, type(event).__name__)


@dataclass(frozen=True)
class Timed:
    """An event and when it arrived (seconds since the request was sent)."""

    at: float
    event: DecodedEvent


@dataclass(frozen=True)
class RunResult:
    """A complete, well-formed run: RUN_STARTED first, one terminal event last."""

    request: RunRequest
    events: tuple[Timed, ...]
    started: agui.RunStartedEvent
    terminal: agui.RunFinishedEvent | agui.RunErrorEvent
    ended_at: float  # monotonic clock, when the terminal event was read

    @property
    def duration(self) -> float:
        """Seconds from sending the request to reading the terminal event."""
        return self.events[-1].at

    @property
    def thread_id(self) -> str:
        """The thread id from RUN_STARTED (authoritative, §5)."""
        return self.started.thread_id

    def of_type(self, kind: agui.EventType) -> list[Any]:
        """The AG-UI events of one type, in order."""
        return [t.event for t in self.events if getattr(t.event, "type", None) is kind]

    def of_class(self, cls: type[Any]) -> list[Any]:
        """The decoded talkie events of one class (CardReceived, ActionProposed, …)."""
        return [t.event for t in self.events if isinstance(t.event, cls)]

    @property
    def deltas(self) -> list[Timed]:
        """The TEXT_MESSAGE_CONTENT events with their arrival times."""
        return [t for t in self.events if getattr(t.event, "type", None) is _T.TEXT_MESSAGE_CONTENT]

    @property
    def text(self) -> str:
        """All assistant text of the run, concatenated."""
        return "".join(t.event.delta for t in self.deltas)  # type: ignore[union-attr]

    def expect_finished(self) -> None:
        """Require RUN_FINISHED (a RUN_ERROR fails the check, naming the server's error)."""
        if isinstance(self.terminal, agui.RunErrorEvent):
            raise CheckFailed(
                f"{show(self.request.text, 40)} ended with RUN_ERROR "
                f"{show(self.terminal.code, 30)}: {show(self.terminal.message, 80)}"
            )


@dataclass
class _Sequence:
    """AG-UI ordering rules that hold for every run, checked event by event."""

    open_messages: set[str] = field(default_factory=set)
    open_tools: set[str] = field(default_factory=set)

    def check(self, event: DecodedEvent) -> None:
        kind = getattr(event, "type", None)
        if kind is _T.TEXT_MESSAGE_START:
            self.open_messages.add(event.message_id)  # type: ignore[union-attr]
        elif kind is _T.TEXT_MESSAGE_CONTENT or kind is _T.TEXT_MESSAGE_END:
            message_id = event.message_id  # type: ignore[union-attr]
            if message_id not in self.open_messages:
                raise CheckFailed(
                    f"{kind.value} for message {show(message_id, 40)} without an open "
                    "TEXT_MESSAGE_START"
                )
            if kind is _T.TEXT_MESSAGE_END:
                self.open_messages.discard(message_id)
        elif kind is _T.TOOL_CALL_START:
            self.open_tools.add(event.tool_call_id)  # type: ignore[union-attr]
        elif kind is _T.TOOL_CALL_END:
            call_id = event.tool_call_id  # type: ignore[union-attr]
            if call_id not in self.open_tools:
                raise CheckFailed(
                    f"TOOL_CALL_END for {show(call_id, 40)} without an open TOOL_CALL_START"
                )
            self.open_tools.discard(call_id)
        elif kind is _T.RUN_FINISHED and (self.open_messages or self.open_tools):
            still_open = sorted(self.open_messages | self.open_tools)
            raise CheckFailed(
                f"RUN_FINISHED while {show(still_open, 60)} was never ended "
                "(TEXT_MESSAGE_END / TOOL_CALL_END missing)"
            )


class RunStream:
    """A run being read: every event is checked for order as it arrives."""

    def __init__(self, request: RunRequest, response: httpx.Response, origin: str) -> None:
        self.request = request
        self._origin = origin
        self._sent_at = time.monotonic()
        self._events: list[Timed] = []
        self._decoder = EventDecoder()
        self._sequence = _Sequence()
        self._iterator = self._decode(response)
        self.started: agui.RunStartedEvent | None = None
        self.terminal: agui.RunFinishedEvent | agui.RunErrorEvent | None = None
        self._ended_at = 0.0

    async def _decode(self, response: httpx.Response) -> AsyncGenerator[DecodedEvent, None]:
        async for batch in iter_event_data(response):
            for payload in batch:
                for event in self._decoder.decode(payload):
                    yield event
        for event in self._decoder.finish():
            yield event

    async def aclose(self) -> None:
        """Stop reading (the caller closes the response)."""
        await self._iterator.aclose()

    @property
    def text(self) -> str:
        """The assistant text received so far."""
        return "".join(
            t.event.delta  # type: ignore[union-attr]
            for t in self._events
            if getattr(t.event, "type", None) is _T.TEXT_MESSAGE_CONTENT
        )

    async def next(self) -> DecodedEvent | None:
        """The next event (checked), or None when the server closed the stream."""
        try:
            event = await anext(self._iterator, None)
        except TalkieError as error:
            raise CheckFailed(f"the event stream broke: {error.message}") from error
        except httpx.HTTPError as error:
            reason = describe_transport_error(error, self._origin).message
            raise CheckFailed(f"the event stream broke: {reason}") from error
        if event is not None:
            self._record(event)
        return event

    def _record(self, event: DecodedEvent) -> None:
        name = event_name(event)
        if isinstance(event, MalformedEvent):
            raise CheckFailed(f"unreadable {show(event.type, 30)} event: {show(event.reason, 80)}")
        if self.terminal is not None:
            raise CheckFailed(f"{name} arrived after {self.terminal.type.value}")
        if self.started is None:
            if not isinstance(event, agui.RunStartedEvent):
                raise CheckFailed(f"the first event is {name}, not RUN_STARTED")
            if event.run_id != self.request.run_id:
                raise CheckFailed(
                    f"RUN_STARTED carries runId {show(event.run_id, 40)}, not the client's "
                    f"{show(self.request.run_id, 40)}"
                )
            if not event.thread_id:
                raise CheckFailed("RUN_STARTED carries no threadId")
            self.started = event
        elif isinstance(event, agui.RunStartedEvent):
            raise CheckFailed("a second RUN_STARTED in one run")
        self._sequence.check(event)
        if isinstance(event, agui.RunFinishedEvent | agui.RunErrorEvent):
            self.terminal = event
            self._ended_at = time.monotonic()
        self._events.append(Timed(time.monotonic() - self._sent_at, event))

    async def until(self, predicate: Callable[[DecodedEvent], bool], what: str) -> DecodedEvent:
        """Read until an event matches; failing if the run ends first."""
        while self.terminal is None:
            event = await self.next()
            if event is None:
                break
            if predicate(event):
                return event
        raise CheckFailed(f"{show(self.request.text, 40)} ended before {what}")

    async def read_to_end(self) -> RunResult:
        """Read the rest of the run and require a terminal event followed by the stream's end."""
        while self.terminal is None:
            if await self.next() is None:
                if self.started is None:
                    raise CheckFailed(f"{show(self.request.text, 40)} answered an empty stream")
                raise CheckFailed(
                    f"the stream of {show(self.request.text, 40)} closed without RUN_FINISHED "
                    "or RUN_ERROR"
                )
        try:
            async with asyncio.timeout(CLOSE_WAIT):
                await self.next()  # anything but the end of the stream fails in _record
        except TimeoutError:
            raise CheckFailed(
                f"the stream stayed open {CLOSE_WAIT:g} s after {self.terminal.type.value}"
            ) from None
        assert self.started is not None  # _record guarantees RUN_STARTED came first
        return RunResult(
            self.request, tuple(self._events), self.started, self.terminal, self._ended_at
        )


@asynccontextmanager
async def open_run(wire: Wire, request: RunRequest) -> AsyncIterator[RunStream]:
    """POST a run and yield its stream; a refusal or a non-SSE answer fails the check."""
    async with wire.stream("POST", "run", content=request.body(), event_stream=True) as response:
        if response.status_code != 200 or _media_type(response) != EVENT_STREAM:
            answer = await answer_of(response)
            raise CheckFailed(
                f"{show(request.text, 40)} was not answered with a 200 event stream: "
                f"{answer.describe()}"
            )
        stream = RunStream(request, response, wire.origin)
        try:
            yield stream
        finally:
            await stream.aclose()


async def collect_run(wire: Wire, request: RunRequest | str) -> RunResult:
    """Send a message and read its whole run."""
    if isinstance(request, str):
        request = RunRequest(request)
    async with open_run(wire, request) as stream:
        return await stream.read_to_end()
