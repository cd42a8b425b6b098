"""Deliberately broken talkie/1 servers: a proxy in front of the reference server.

`Proxy` forwards every request to a reference server unchanged (apart from the manifest's
issuer, which must be the proxy's own origin), so it is conformant; each subclass breaks exactly
one rule and names the checks that must then fail.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import uuid
from collections.abc import AsyncIterator
from typing import Any, ClassVar

import anyio
import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from talkie_tui.protocol.talkie.manifest import MANIFEST_PATH

_FORWARDED = ("authorization", "accept", "content-type")
_METHODS = ["GET", "POST", "DELETE", "PUT", "PATCH"]
_ERROR_FIELDS = ("code", "message", "retryable")


def _origin(request: Request) -> str:
    return f"{request.url.scheme}://{request.url.netloc}"


def _is_run(request: Request) -> bool:
    return request.method == "POST" and request.url.path.endswith("/run")


class Proxy:
    """A conformant pass-through to the reference server; subclasses break one rule."""

    name: ClassVar[str] = "pass-through"
    fails: ClassVar[frozenset[str]] = frozenset()
    timeout_cap: ClassVar[float | None] = None

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self._http: httpx.AsyncClient | None = None

    def app(self) -> Starlette:
        """The ASGI app to serve."""
        return Starlette(routes=[Route("/{path:path}", self.handle, methods=_METHODS)])

    @property
    def http(self) -> httpx.AsyncClient:
        # Created on first use so it belongs to the proxy server's event loop.
        if self._http is None:
            self._http = httpx.AsyncClient(timeout=httpx.Timeout(30.0, read=60.0))
        return self._http

    async def handle(self, request: Request) -> Response:
        """Answer one request: a breakage's own answer, or the upstream one."""
        special = await self.intercept(request)
        return special if special is not None else await self.forward(request)

    # --- hooks -------------------------------------------------------------------------------

    async def intercept(self, request: Request) -> Response | None:
        """Answer a request without (or before) the upstream; None forwards it."""
        return None

    def manifest(self, data: dict[str, Any]) -> None:
        """Change the manifest in place."""

    def run_body(self, body: bytes) -> bytes:
        """Change a run request body."""
        return body

    def event(self, event: dict[str, Any]) -> dict[str, Any]:
        """Change one AG-UI event on its way to the client."""
        return event

    def error(self, status: int, body: bytes) -> Response:
        """Change an error answer."""
        return Response(body, status, media_type="application/json")

    async def relay(
        self, request: Request, upstream: httpx.Response, run_id: str
    ) -> AsyncIterator[str]:
        """Pass the upstream event stream on, event by event, through `event`."""
        try:
            async for line in upstream.aiter_lines():
                if line.startswith("data:"):
                    event = self.event(json.loads(line[5:]))
                    yield f"data: {json.dumps(event, ensure_ascii=False)}\n\n"
                elif line.startswith(":"):
                    yield f"{line}\n\n"
        finally:
            await upstream.aclose()

    # --- plumbing ----------------------------------------------------------------------------

    async def send(self, request: Request, body: bytes) -> httpx.Response:
        """The request as sent upstream, with its response unread."""
        url = self.upstream + request.url.path
        if request.url.query:
            url += "?" + request.url.query
        headers = {k: v for k, v in request.headers.items() if k.lower() in _FORWARDED}
        upstream = self.http.build_request(request.method, url, content=body, headers=headers)
        return await self.http.send(upstream, stream=True)

    async def forward(self, request: Request) -> Response:
        """Relay a request to the reference server and its answer back."""
        body = await request.body()
        run_id = ""
        if _is_run(request):
            body = self.run_body(body)
            # A malformed body is the upstream's to refuse.
            with contextlib.suppress(ValueError, AttributeError):
                run_id = str(json.loads(body).get("runId", ""))
        upstream = await self.send(request, body)
        media_type = upstream.headers.get("content-type", "").split(";")[0]
        if media_type == "text/event-stream" and upstream.is_success:
            return StreamingResponse(
                self.relay(request, upstream, run_id),
                media_type=media_type,
                headers={"Cache-Control": "no-cache"},
            )
        content = await upstream.aread()
        await upstream.aclose()
        if request.url.path == MANIFEST_PATH and upstream.is_success:
            data = json.loads(content)
            data["issuer"] = _origin(request)
            self.manifest(data)
            return JSONResponse(data)
        if upstream.status_code >= 400:
            return self.error(upstream.status_code, content)
        return Response(content, upstream.status_code, media_type=media_type)


class EchoAltered(Proxy):
    """Collapses doubled spaces in text, as a careless normaliser would."""

    name = "echo-altered"
    fails = frozenset({"echo"})

    def event(self, event: dict[str, Any]) -> dict[str, Any]:
        if event.get("type") == "TEXT_MESSAGE_CONTENT":
            event["delta"] = re.sub(" {2,}", " ", event["delta"])
        return event


class WrongSpec(Proxy):
    """Announces another major version of the protocol."""

    name = "wrong-spec"
    fails = frozenset({"discovery"})

    def manifest(self, data: dict[str, Any]) -> None:
        data["spec"] = "talkie/2"


class NotTestMode(Proxy):
    """A production manifest: conformance cannot run the destructive checks."""

    name = "not-test-mode"
    fails = frozenset({"test-mode"})

    def manifest(self, data: dict[str, Any]) -> None:
        data["testMode"] = False


class NoRetryable(Proxy):
    """Error envelopes without `retryable`."""

    name = "no-retryable"
    fails = frozenset(
        {
            "error-not-found",
            "error-invalid-request",
            "error-unauthorized",
            "decision-conflict",
            "decision-stale",
        }
    )

    def error(self, status: int, body: bytes) -> Response:
        data = json.loads(body)
        data["error"].pop("retryable", None)
        return JSONResponse(data, status)


class HtmlNotFound(Proxy):
    """A 404 that is a web page (with terminal escapes in it), not the §3 envelope."""

    name = "html-not-found"
    fails = frozenset({"error-not-found"})

    def error(self, status: int, body: bytes) -> Response:
        if status != 404:
            return super().error(status, body)
        page = "<html><body>\x1b]0;owned\x07\x1b[31mNot Found\n\rgo away</body></html>"
        return Response(page, 404, media_type="text/html")


class DuplicateAnswers(Proxy):
    """Forgets message ids: a retried message is stored, and answered, a second time."""

    name = "duplicate-answers"
    fails = frozenset({"idempotent-retry"})

    def __init__(self, upstream: str) -> None:
        super().__init__(upstream)
        self._seen: set[str] = set()
        self._run_ids: dict[str, str] = {}

    def run_body(self, body: bytes) -> bytes:
        try:
            data = json.loads(body)
            message = data["messages"][-1]
        except (ValueError, KeyError, IndexError, TypeError):
            return body
        if not isinstance(message, dict):
            return body
        if message["id"] not in self._seen:
            self._seen.add(message["id"])
            return body
        # A retry: upstream sees a brand-new message (and run), the client its own run id.
        message["id"] = f"m_dup_{uuid.uuid4().hex}"
        fresh = f"r_dup_{uuid.uuid4().hex}"
        self._run_ids[fresh] = data["runId"]
        data["runId"] = fresh
        return json.dumps(data).encode()

    def event(self, event: dict[str, Any]) -> dict[str, Any]:
        if event.get("runId") in self._run_ids:
            event["runId"] = self._run_ids[event["runId"]]
        return event


class CancelIgnored(Proxy):
    """Says ok to cancelRun but lets the run go on."""

    name = "cancel-ignored"
    fails = frozenset({"cancel"})

    async def intercept(self, request: Request) -> Response | None:
        if request.url.path.endswith("/cancel"):
            return JSONResponse({"ok": True})
        return None


class OppositeDecisionAllowed(Proxy):
    """Answers 200 to the opposite decision instead of 409 conflict."""

    name = "opposite-decision-allowed"
    fails = frozenset({"decision-conflict"})

    def __init__(self, upstream: str) -> None:
        super().__init__(upstream)
        self._last_action: Any = None

    def error(self, status: int, body: bytes) -> Response:
        if status == 409 and json.loads(body)["error"]["code"] == "conflict":
            return JSONResponse({"action": self._last_action, "events": []})
        return super().error(status, body)

    async def intercept(self, request: Request) -> Response | None:
        if request.url.path.endswith("/decision"):
            # Remember the action as it is now, to answer as if the decision went through.
            path = request.url.path.removesuffix("/decision")
            headers = {"authorization": request.headers.get("authorization", "")}
            current = await self.http.get(self.upstream + path, headers=headers)
            self._last_action = current.json()
        return None


class Buffered(Proxy):
    """Holds the whole event stream back and sends it at the end, like a buffering proxy."""

    name = "buffered"
    fails = frozenset({"slow"})

    async def relay(
        self, request: Request, upstream: httpx.Response, run_id: str
    ) -> AsyncIterator[str]:
        frames = [frame async for frame in super().relay(request, upstream, run_id)]
        yield "".join(frames)


class CancelOnDisconnect(Proxy):
    """Cancels a run when its client hangs up (disconnect must not cancel)."""

    name = "cancel-on-disconnect"
    fails = frozenset({"disconnect"})

    async def relay(
        self, request: Request, upstream: httpx.Response, run_id: str
    ) -> AsyncIterator[str]:
        ended = False
        try:
            async for frame in super().relay(request, upstream, run_id):
                ended = ended or '"RUN_FINISHED"' in frame or '"RUN_ERROR"' in frame
                yield frame
        finally:
            if not ended and run_id:
                # Starlette cancels the response when the client leaves: shield the cancel call.
                with anyio.CancelScope(shield=True):
                    await self.http.post(
                        f"{self.upstream}/api/talkie/runs/{run_id}/cancel",
                        json={},
                        headers={"authorization": request.headers.get("authorization", "")},
                    )


class HungStatus(Proxy):
    """Never answers a signed-in GET status (until the client gives up)."""

    name = "hung-status"
    fails = frozenset({"status"})
    timeout_cap = 8.0

    async def intercept(self, request: Request) -> Response | None:
        if not request.url.path.endswith("/status") or "authorization" not in request.headers:
            return None
        while not await request.is_disconnected():
            await asyncio.sleep(0.1)
        return Response(status_code=204)


class RunErrorNotRetryable(Proxy):
    """RUN_ERROR without metadata.retryable."""

    name = "run-error-not-retryable"
    fails = frozenset({"run-error"})

    def event(self, event: dict[str, Any]) -> dict[str, Any]:
        if event.get("type") == "RUN_ERROR":
            event.pop("metadata", None)
        return event


BREAKAGES: tuple[type[Proxy], ...] = (
    Proxy,
    EchoAltered,
    WrongSpec,
    NotTestMode,
    NoRetryable,
    HtmlNotFound,
    DuplicateAnswers,
    CancelIgnored,
    OppositeDecisionAllowed,
    Buffered,
    CancelOnDisconnect,
    HungStatus,
    RunErrorNotRetryable,
)
