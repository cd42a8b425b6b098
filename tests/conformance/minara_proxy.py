"""Deliberately broken Minara gateways: a proxy (HTTP and the stream socket) in front of the
reference gateway.

`GatewayProxy` forwards every request and frame unchanged, so it is conformant; each subclass
breaks exactly one rule and names the checks that must then fail.
"""

from __future__ import annotations

from typing import Any, ClassVar

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.websockets import WebSocket
from websockets.asyncio.client import ClientConnection

from talkie_tui.conformance.relay import Json, Relay
from tests.helpers import TEST_TOKEN


class GatewayProxy(Relay):
    """A conformant pass-through to the reference gateway; subclasses break one rule."""

    name: ClassVar[str] = "pass-through"
    fails: ClassVar[frozenset[str]] = frozenset()
    socket_paths = ("/v1/stream",)


# --- breakages ------------------------------------------------------------------------------


def _is_event(frame: Json, kind: str | None = None) -> bool:
    return frame.get("type") == "event" and (kind is None or frame["event"].get("type") == kind)


class SkipsASeq(GatewayProxy):
    """Numbers the events after a turn's first text from one too high: a gap in `seq`."""

    name = "skips-a-seq"
    fails = frozenset({"seq", "first-seq", "resume"})

    async def server_frames(self, frame: Json, websocket: WebSocket) -> list[Json]:
        if _is_event(frame) and frame["seq"] > 2:
            return [{**frame, "seq": frame["seq"] + 1}]
        return [frame]


class Anonymous(GatewayProxy):
    """Lets anyone in: requests and sockets without the token get it added."""

    name = "anonymous"
    fails = frozenset({"auth-http", "auth-socket"})

    async def intercept(self, request: Request, body: bytes) -> Response | None:
        if request.url.path.startswith("/v1/") and "authorization" not in request.headers:
            upstream = await self.http.request(
                request.method,
                self.upstream + request.url.path,
                params=request.query_params,
                content=body,
                headers={"Authorization": f"Bearer {TEST_TOKEN}"},
            )
            return Response(upstream.content, status_code=upstream.status_code)
        return None

    async def socket(self, websocket: WebSocket) -> None:
        websocket.scope["query_string"] = f"token={TEST_TOKEN}".encode()
        await super().socket(websocket)


class NoReplay(GatewayProxy):
    """A subscription from seq 0 starts with the live events: the turn's start is lost."""

    name = "no-replay"
    fails = frozenset({"turn-replay", "first-seq", "seq"})

    async def server_frames(self, frame: Json, websocket: WebSocket) -> list[Json]:
        return [] if _is_event(frame, "start") else [frame]


class ResumeRepeats(GatewayProxy):
    """A resubscription from seq N replays N again: an event applied twice."""

    name = "resume-repeats"
    fails = frozenset({"resume"})

    async def client_frame(self, frame: Json, upstream: ClientConnection) -> Json | None:
        if frame.get("type") == "subscribe" and frame.get("fromSeq", 0) > 0:
            return {**frame, "fromSeq": frame["fromSeq"] - 1}
        return frame


class HistoryDiffers(GatewayProxy):
    """The stored answer loses its last character."""

    name = "history-differs"
    fails = frozenset({"history"})

    def answer_json(self, path: str, status: int, data: Any) -> tuple[int, Any]:
        if path.startswith("/v1/sessions/") and isinstance(data, dict) and "messages" in data:
            for row in data["messages"]:
                if row.get("role") == "assistant" and row.get("content"):
                    row["content"] = row["content"][:-1]
        return status, data


class OldestFirst(GatewayProxy):
    """Lists sessions oldest first."""

    name = "oldest-first"
    fails = frozenset({"sessions-list"})

    def answer_json(self, path: str, status: int, data: Any) -> tuple[int, Any]:
        if path == "/v1/sessions" and isinstance(data, dict) and "sessions" in data:
            data["sessions"].reverse()
        return status, data


class PlainSnippets(GatewayProxy):
    """Search snippets without the « » marks."""

    name = "plain-snippets"
    fails = frozenset({"search"})

    def answer_json(self, path: str, status: int, data: Any) -> tuple[int, Any]:
        if path == "/v1/sessions/search" and isinstance(data, dict):
            for result in data.get("results", []):
                result["snippet"] = result["snippet"].replace("«", "").replace("»", "")
        return status, data


class AnswersAnything(GatewayProxy):
    """An answer to a question that is not pending is 200."""

    name = "answers-anything"
    fails = frozenset({"interaction-not-pending"})

    async def intercept(self, request: Request, body: bytes) -> Response | None:
        if request.url.path.startswith("/v1/interactions/"):
            return JSONResponse({"ok": True, "status": "answered"})
        return None


class InjectsIntoNothing(GatewayProxy):
    """An interjection with no running turn is "injected"."""

    name = "injects-into-nothing"
    fails = frozenset({"interject-idle"})

    def answer_json(self, path: str, status: int, data: Any) -> tuple[int, Any]:
        if path == "/v1/chat/interject" and data == {"status": "no_active_turn"}:
            return 200, {"status": "injected"}
        return status, data


class InterruptIgnored(GatewayProxy):
    """An interrupt answers "interrupted" and does nothing."""

    name = "interrupt-ignored"
    fails = frozenset({"interrupt"})

    async def intercept(self, request: Request, body: bytes) -> Response | None:
        if request.url.path == "/v1/chat/interrupt" and b"session_id" in body:
            return JSONResponse({"status": "interrupted"})
        return None


class NineAttachments(GatewayProxy):
    """A turn over the attachment count is cut to eight files and run."""

    name = "nine-attachments"
    fails = frozenset({"attachment-limits"})

    def request_json(self, path: str, data: Json) -> Json:
        if path == "/v1/chat/stream" and len(data.get("attachments", [])) > 8:
            return {**data, "attachments": data["attachments"][:8]}
        return data


class ModelsAsList(GatewayProxy):
    """The models list is a bare array."""

    name = "models-as-list"
    fails = frozenset({"models"})

    def answer_json(self, path: str, status: int, data: Any) -> tuple[int, Any]:
        if path == "/v1/llm/available-models":
            return status, data["models"]
        return status, data


class HtmlErrors(GatewayProxy):
    """A 404 is an HTML page."""

    name = "html-errors"
    fails = frozenset({"error-bodies"})

    async def intercept(self, request: Request, body: bytes) -> Response | None:
        if request.method == "GET" and "conformance-unknown" in request.url.path:
            return Response("<h1>Not Found</h1>", status_code=404, media_type="text/html")
        return None


class StrictFields(GatewayProxy):
    """A turn request with a field the gateway does not know is refused."""

    name = "strict-fields"
    fails = frozenset({"unknown-fields"})

    async def intercept(self, request: Request, body: bytes) -> Response | None:
        if request.url.path == "/v1/chat/stream" and b"x_conformance" in body:
            return JSONResponse(
                {"error": {"code": "invalid_request", "message": "Unknown field."}},
                status_code=400,
            )
        return None


class GuardedHealthz(GatewayProxy):
    """GET /healthz wants the token like every other route."""

    name = "guarded-healthz"
    fails = frozenset({"healthz"})

    async def intercept(self, request: Request, body: bytes) -> Response | None:
        if request.url.path == "/healthz" and "authorization" not in request.headers:
            return JSONResponse(
                {"error": {"code": "unauthorized", "message": "Token required."}}, status_code=401
            )
        return None


class AlwaysNew(GatewayProxy):
    """Every accepted turn says `is_new: true`, a follow-up in an old session too."""

    name = "always-new"
    fails = frozenset({"turn-accepted"})

    def answer_json(self, path: str, status: int, data: Any) -> tuple[int, Any]:
        if path == "/v1/chat/stream" and isinstance(data, dict) and "is_new" in data:
            return status, {**data, "is_new": True}
        return status, data


class BareErrorEnd(GatewayProxy):
    """A turn that completes ends in an `error` event with neither code nor message."""

    name = "bare-error-end"
    fails = frozenset({"turn-end"})

    async def server_frames(self, frame: Json, websocket: WebSocket) -> list[Json]:
        # An interrupted turn keeps its `done` (that is the interrupt check's rule).
        if _is_event(frame, "done") and not frame["event"].get("data", {}).get("interrupted"):
            return [{**frame, "event": {"type": "error", "data": {}}}]
        return [frame]


BREAKAGES: list[type[GatewayProxy]] = [
    GatewayProxy,
    GuardedHealthz,
    AlwaysNew,
    BareErrorEnd,
    SkipsASeq,
    Anonymous,
    NoReplay,
    ResumeRepeats,
    HistoryDiffers,
    OldestFirst,
    PlainSnippets,
    AnswersAnything,
    InjectsIntoNothing,
    InterruptIgnored,
    NineAttachments,
    ModelsAsList,
    HtmlErrors,
    StrictFields,
]
