"""Deliberately broken Cuckoo hubs: a relay (HTTP and the agent socket) in front of the
reference hub. `HubProxy` changes nothing; each subclass breaks one rule and names the checks
that must then fail."""

from __future__ import annotations

import json
from typing import Any, ClassVar
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.websockets import WebSocket
from websockets.asyncio.client import ClientConnection

from talkie_tui.conformance.relay import Json, Relay

PING = 1.0  # the test hubs ping every second (the spec's 30 s)
PONG = 5.0  # and close a socket whose answer is 5 s late (the spec's 15 s): a loaded CI
# machine may stall a test process for seconds, and every proxied socket is pinged


class HubProxy(Relay):
    """A conformant pass-through to the reference hub. The peer's socket ends here, so the
    proxy's own server pings it (`pings`, as `StubServer` takes it), as the hub pings its own."""

    name: ClassVar[str] = "pass-through"
    fails: ClassVar[frozenset[str]] = frozenset()
    socket_paths = ("/v1/agent/socket", "/v1/client/socket")
    pings: ClassVar[tuple[float | None, float | None]] = (PING, PONG)


class RedeliversNothing(HubProxy):
    """An event is pushed once, whatever happens to it after."""

    name = "redelivers-nothing"
    fails = frozenset({"ack", "redelivery"})

    def __init__(self, upstream: str) -> None:
        super().__init__(upstream)
        self.pushed: set[str] = set()

    async def server_frames(self, frame: Json, websocket: WebSocket) -> list[Json]:
        event_id = frame.get("id")
        if isinstance(event_id, str):
            if event_id in self.pushed:
                return []
            self.pushed.add(event_id)
        return [frame]


class AcceptsTypos(HubProxy):
    """A field it does not know is dropped in silence."""

    name = "accepts-typos"
    fails = frozenset({"unknown-fields"})

    def request_json(self, path: str, data: Json) -> Json:
        return {k: v for k, v in data.items() if k != "txet"}


class ErrorsAs400(HubProxy):
    """A malformed request is 400, as in many APIs, not 422."""

    name = "errors-as-400"
    fails = frozenset(
        {
            "json-only",
            "unknown-fields",
            "body-cap",
            "buttons",
            "reply-and-quick-replies",
            "typing",
            "attachments",
            "events-paging",
            "media-limits",
        }
    )

    def answer_json(self, path: str, status: int, data: Any) -> tuple[int, Any]:
        return (400 if status == 422 else status), data


class SendsTwice(HubProxy):
    """A send repeated with its idempotency key is answered as a new message (201)."""

    name = "sends-twice"
    fails = frozenset({"idempotency"})

    def answer_json(self, path: str, status: int, data: Any) -> tuple[int, Any]:
        if path.startswith("/v1/agent/conversations/") and status == 200:
            return 201, data
        return status, data


class TwoSockets(HubProxy):
    """The older socket of an agent stays open when a second connects."""

    name = "two-sockets"
    fails = frozenset({"one-socket"})

    def close_code(self, code: int) -> int | None:
        return None if code == 4001 else code


class AppendsAfterFinish(HubProxy):
    """An append to a finished stream is taken (and lost)."""

    name = "appends-after-finish"
    fails = frozenset({"streaming", "stop"})

    def answer_json(self, path: str, status: int, data: Any) -> tuple[int, Any]:
        if path.endswith("/append") and status == 409:
            return 204, None
        return status, data


class TapsTwice(HubProxy):
    """A button can be tapped again."""

    name = "taps-twice"
    fails = frozenset({"buttons"})

    async def intercept(self, request: Request, body: bytes) -> Response | None:
        if request.url.path.startswith("/v1/client/") and b'"action"' in body:
            upstream = await self.forward(request, body)
            if upstream.status_code >= 400:
                return JSONResponse({"message": {"id": "msg_x"}}, status_code=201)
            return Response(upstream.content, upstream.status_code, media_type="application/json")
        return None


class NoRequestId(HubProxy):
    """Errors carry no request_id."""

    name = "no-request-id"
    fails = frozenset({"error-envelope"})

    def answer_json(self, path: str, status: int, data: Any) -> tuple[int, Any]:
        if isinstance(data, dict) and isinstance(data.get("error"), dict):
            data["error"].pop("request_id", None)
        return status, data


class NewestFirst(HubProxy):
    """Catch-up lists the newest event first."""

    name = "newest-first"
    fails = frozenset({"events-catch-up", "events-paging"})

    def answer_json(self, path: str, status: int, data: Any) -> tuple[int, Any]:
        if path == "/v1/agent/events" and isinstance(data, dict):
            data["events"].reverse()
        return status, data


class KeepsReplacedSockets(HubProxy):
    """A socket of a replaced binding stays open."""

    name = "keeps-replaced-sockets"
    fails = frozenset({"replaced-binding"})

    def close_code(self, code: int) -> int | None:
        return None if code == 4002 else code


class NoClamp(HubProxy):
    """A clamped stream is not marked truncated."""

    name = "no-clamp"
    fails = frozenset({"text-clamp"})

    def answer_json(self, path: str, status: int, data: Any) -> tuple[int, Any]:
        if path.endswith("/finish") and isinstance(data, dict):
            data["message"]["truncated"] = False
        return status, data


class SevenQuickReplies(HubProxy):
    """Quick replies past six are dropped in silence."""

    name = "seven-quick-replies"
    fails = frozenset({"reply-and-quick-replies"})

    def request_json(self, path: str, data: Json) -> Json:
        if len(data.get("quick_replies") or []) > 6:
            return {**data, "quick_replies": data["quick_replies"][:6]}
        return data


class TypingAnswersJson(HubProxy):
    """Typing answers 200 with a body instead of 204."""

    name = "typing-answers-json"
    fails = frozenset({"typing"})

    async def intercept(self, request: Request, body: bytes) -> Response | None:
        if request.url.path.endswith("/typing"):
            upstream = await self.forward(request, body)
            if upstream.status_code == 204:
                return JSONResponse({"ok": True})
        return None


class WebhookProxy(HubProxy):
    """The hub's webhook posts pass through here (a binding's webhook_url is rewritten)."""

    follow_redirects: ClassVar[bool] = False

    def post_headers(self, headers: dict[str, str]) -> dict[str, str]:
        """Change the headers of a webhook post."""
        return headers

    async def intercept(self, request: Request, body: bytes) -> Response | None:
        if request.url.path == "/forward":
            headers = {k: v for k, v in request.headers.items() if k.lower().startswith("x-cuckoo")}
            return Response(
                status_code=await self.post_on(request.query_params["to"], body, headers)
            )
        if request.url.path.endswith("/binding") and b"webhook_url" in body:
            data = json.loads(body)
            forward = f"{request.base_url}forward?{urlencode({'to': data['webhook_url']})}"
            return await self.handle_json(request, {**data, "webhook_url": forward})
        return None

    async def post_on(self, url: str, body: bytes, headers: dict[str, str]) -> int:
        """Post the hub's webhook post on to the receiver; the status it answered."""
        answer = await self.http.post(
            url,
            content=body,
            headers={"Content-Type": "application/json", **self.post_headers(headers)},
            follow_redirects=self.follow_redirects,
        )
        return answer.status_code

    async def handle_json(self, request: Request, data: Json) -> Response:
        upstream = await self.forward(request, json.dumps(data).encode())
        return Response(upstream.content, upstream.status_code, media_type="application/json")


class UnsignedWebhooks(WebhookProxy):
    """Webhook posts carry no signature."""

    name = "unsigned-webhooks"
    fails = frozenset({"webhook-signing"})

    def post_headers(self, headers: dict[str, str]) -> dict[str, str]:
        return {k: v for k, v in headers.items() if k.lower() != "x-cuckoo-signature"}


class FollowsRedirects(WebhookProxy):
    """A webhook answering with a redirect is followed there."""

    name = "follows-redirects"
    fails = frozenset({"webhook-redirects"})
    follow_redirects = True


class KeysOpenEverything(HubProxy):
    """An API key is taken as a person's session."""

    name = "keys-open-everything"
    fails = frozenset({"scopes"})

    async def intercept(self, request: Request, body: bytes) -> Response | None:
        key = request.headers.get("authorization", "").startswith("Bearer mgt_tok_")
        if request.url.path == "/v1/client/me" and key:
            return JSONResponse({"user": {"id": "usr_key", "display_name": "key"}})
        return None


class HugeFrames(HubProxy):
    """A frame over 64 KiB is dropped in silence; the socket stays open."""

    name = "huge-frames"
    fails = frozenset({"frame-cap"})

    async def client_frame(self, frame: Json, upstream: ClientConnection) -> Json | None:
        return None if len(json.dumps(frame)) > 64 * 1024 else frame


class StopIgnored(HubProxy):
    """A person's stop is answered but the stream goes on."""

    name = "stop-ignored"
    fails = frozenset({"stop"})

    async def intercept(self, request: Request, body: bytes) -> Response | None:
        if request.url.path.endswith("/stop"):
            return JSONResponse({"stopped": []})
        return None


class KindFromName(HubProxy):
    """An upload's kind is taken from its name."""

    name = "kind-from-name"
    fails = frozenset({"media-kind"})

    def answer_json(self, path: str, status: int, data: Any) -> tuple[int, Any]:
        if path == "/v1/agent/media" and isinstance(data, dict) and "media" in data:
            data["media"]["kind"] = "file"
        return status, data


class ElevenFiles(HubProxy):
    """Files past ten are dropped from a message in silence."""

    name = "eleven-files"
    fails = frozenset({"attachments"})

    def request_json(self, path: str, data: Json) -> Json:
        if len(data.get("attachments") or []) > 10:
            return {**data, "attachments": data["attachments"][:10]}
        return data


class NoIdleTruncation(HubProxy):
    """A stream the hub finished for being idle is shown as complete, not truncated."""

    name = "no-idle-truncation"
    fails = frozenset({"idle-truncation"})

    def answer_json(self, path: str, status: int, data: Any) -> tuple[int, Any]:
        if path.startswith("/v1/client/") and isinstance(data, dict) and "messages" in data:
            for message in data["messages"]:
                message["truncated"] = False
        return status, data


class NoHealthz(HubProxy):
    """GET /healthz wants credentials."""

    name = "no-healthz"
    fails = frozenset({"healthz"})

    async def intercept(self, request: Request, body: bytes) -> Response | None:
        if request.url.path == "/healthz":
            return JSONResponse({"error": {"code": "unauthorized"}}, status_code=401)
        return None


class SecretsOpenClient(HubProxy):
    """A binding secret is taken as a person's session on the client API."""

    name = "secrets-open-client"
    fails = frozenset({"credentials"})

    async def intercept(self, request: Request, body: bytes) -> Response | None:
        secret = request.headers.get("authorization", "").startswith("Bearer bnd_sec_")
        if request.url.path == "/v1/client/me" and secret:
            return JSONResponse({"user": {"id": "usr_secret", "display_name": "secret"}})
        return None


class BareEvents(HubProxy):
    """Pushed events lack the envelope's agent_id."""

    name = "bare-events"
    fails = frozenset({"socket-push"})

    async def server_frames(self, frame: Json, websocket: WebSocket) -> list[Json]:
        return [{k: v for k, v in frame.items() if k != "agent_id"}]


class ImpatientRetries(WebhookProxy):
    """A failed webhook post is retried at once, three times, instead of after 1, 5 and 30 s."""

    name = "impatient-retries"
    fails = frozenset({"webhook-retries"})

    async def post_on(self, url: str, body: bytes, headers: dict[str, str]) -> int:
        status = await super().post_on(url, body, headers)
        for _ in range(3):
            if 200 <= status < 300:
                break
            status = await super().post_on(url, body, headers)
        return status


class StallsAfterALease(HubProxy):
    """A socket gets the first lease of events and, acknowledged, nothing newer."""

    name = "stalls-after-a-lease"
    fails = frozenset({"push-backlog"})
    lease = 5  # the test hub's lease_batch

    def __init__(self, upstream: str) -> None:
        super().__init__(upstream)
        self.seen: dict[int, set[str]] = {}

    async def server_frames(self, frame: Json, websocket: WebSocket) -> list[Json]:
        seen = self.seen.setdefault(id(websocket), set())
        event_id = frame.get("id")
        if isinstance(event_id, str) and event_id not in seen:
            if len(seen) >= self.lease:
                return []
            seen.add(event_id)
        return [frame]


class UnboundedPages(HubProxy):
    """`/events` ignores `limit`."""

    name = "unbounded-pages"
    fails = frozenset({"events-paging"})

    async def intercept(self, request: Request, body: bytes) -> Response | None:
        if request.url.path == "/v1/agent/events" and "limit" in request.query_params:
            params = {k: v for k, v in request.query_params.items() if k != "limit"}
            upstream = await self.http.get(
                self.upstream + request.url.path,
                params=params,
                headers={"Authorization": request.headers.get("authorization", "")},
            )
            return Response(upstream.content, upstream.status_code, media_type="application/json")
        return None


class TypingNeverExpires(HubProxy):
    """The person's typing indicator is shown for an hour."""

    name = "typing-never-expires"
    fails = frozenset({"typing-expiry"})

    async def server_frames(self, frame: Json, websocket: WebSocket) -> list[Json]:
        data = frame.get("data")
        if frame.get("type") == "activity" and isinstance(data, dict):
            return [{**frame, "data": {**data, "expires_at": "2999-01-01T00:00:00Z"}}]
        return [frame]


class BigFiles413(HubProxy):
    """A file over its kind's limit is refused with 413."""

    name = "big-files-413"
    fails = frozenset({"media-limits"})

    def answer_json(self, path: str, status: int, data: Any) -> tuple[int, Any]:
        if path == "/v1/agent/media" and status == 422:
            return 413, data
        return status, data


class NoPings(HubProxy):
    """The sockets are never pinged, so one that stopped answering is never let go. One rule,
    both of its checks: the pings, and the closing of a socket that leaves them unanswered."""

    name = "no-pings"
    fails = frozenset({"socket-pings", "socket-ping-timeout"})
    pings = (None, PONG)


class KeepsSilentSockets(HubProxy):
    """The sockets are pinged, but one that never answers stays open."""

    name = "keeps-silent-sockets"
    fails = frozenset({"socket-ping-timeout"})
    pings = (PING, None)


BREAKAGES: list[type[HubProxy]] = [
    HubProxy,
    NoHealthz,
    SecretsOpenClient,
    BareEvents,
    RedeliversNothing,
    AcceptsTypos,
    ErrorsAs400,
    SendsTwice,
    TwoSockets,
    AppendsAfterFinish,
    TapsTwice,
    NoRequestId,
    NewestFirst,
    KeepsReplacedSockets,
    NoClamp,
    SevenQuickReplies,
    TypingAnswersJson,
    UnsignedWebhooks,
    FollowsRedirects,
    KeysOpenEverything,
    HugeFrames,
    StopIgnored,
    KindFromName,
    ElevenFiles,
    NoIdleTruncation,
    ImpatientRetries,
    StallsAfterALease,
    UnboundedPages,
    TypingNeverExpires,
    BigFiles413,
    NoPings,
    KeepsSilentSockets,
]
