"""The fake provider's HTTP side on 127.0.0.1: SDP signalling like OpenAI's, plus test controls.

- `POST /v1/realtime/calls` with `Authorization: Bearer <clientSecret>` and an
  `application/sdp` offer → `201` with the SDP answer and `Location: /v1/realtime/calls/<id>`.
  A wrong, expired or reused secret → `401`.
- Test mode only: `POST /fake-voice/script` `{"voiceSessionId"?, "utterances": [...]}` sets what
  the user "says" (one session, or the default for new sessions); `GET /fake-voice/calls` lists
  the calls with the event types each one sent and received.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
from collections.abc import Callable, Iterator
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from talkie_tui.devserver.common.http import bearer_token
from talkie_tui.devserver.talkie.fake_voice.call import FakeCall
from talkie_tui.devserver.talkie.fake_voice.script import (
    Line,
    Script,
    ScriptError,
    default_lines,
    parse_lines,
)
from talkie_tui.devserver.talkie.voice import VoiceGrant
from talkie_tui.voice.ice import LOOPBACK

logger = logging.getLogger(__name__)

CALLS_PATH = "/v1/realtime/calls"
STARTUP_TIMEOUT = 10.0
MAX_OFFER_BYTES = 64_000


def _error(status: int, code: str, message: str) -> JSONResponse:
    """An error in OpenAI's shape (not the §3 envelope: this is the provider, not Talkie)."""
    body = {"error": {"message": message, "type": "invalid_request_error", "code": code}}
    return JSONResponse(body, status_code=status)


class _EmbeddedServer(uvicorn.Server):
    """uvicorn inside an already running loop: the outer server owns the signal handlers."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """Leave signals alone (installing handlers would steal Ctrl+C from the devserver)."""
        yield


class FakeRealtimeProvider:
    """Answers SDP offers with aiortc peers that run the scripted realtime conversation."""

    def __init__(
        self,
        authorize: Callable[[str], VoiceGrant | None],
        *,
        control: bool = False,
        script: dict[str, list[Line]] | None = None,
    ) -> None:
        self._authorize = authorize
        self._control = control
        self._configured_script = script
        self._default_override: list[Line] | None = None
        self._scripts: dict[str, Script] = {}
        self.calls: dict[str, FakeCall] = {}
        self._server: _EmbeddedServer | None = None
        self._task: asyncio.Task[None] | None = None
        self._port = 0
        self._socket: socket.socket | None = None
        # Hang-ups in progress: held so the tasks are not garbage-collected half-way.
        self._closing: set[asyncio.Task[None]] = set()

    @property
    def origin(self) -> str:
        """`http://127.0.0.1:<port>` once started."""
        return f"http://{LOOPBACK}:{self._port}"

    @property
    def signaling_url(self) -> str:
        """Where clients POST their SDP offer."""
        return f"{self.origin}{CALLS_PATH}"

    async def start(self) -> None:
        """Listen on a free loopback port (call inside the server's event loop)."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.bind((LOOPBACK, 0))
        self._port = sock.getsockname()[1]
        routes = [Route(CALLS_PATH, self._create_call, methods=["POST"])]
        if self._control:
            routes += [
                Route("/fake-voice/script", self._set_script, methods=["POST"]),
                Route("/fake-voice/calls", self._list_calls, methods=["GET"]),
            ]
        config = uvicorn.Config(
            Starlette(routes=routes), lifespan="off", log_level="warning", access_log=False
        )
        server = self._server = _EmbeddedServer(config)
        self._task = asyncio.ensure_future(server.serve(sockets=[sock]))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + STARTUP_TIMEOUT
        while not server.started:
            if self._task.done() or loop.time() > deadline:
                sock.close()
                raise RuntimeError("the fake voice provider failed to start")
            await asyncio.sleep(0.01)
        self._socket = sock
        logger.info("fake voice provider at %s", self.signaling_url)

    async def stop(self) -> None:
        """Hang up every call and stop listening."""
        await asyncio.gather(*(call.close() for call in list(self.calls.values())))
        await asyncio.gather(*self._closing, return_exceptions=True)
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._server = self._task = None
        if self._socket is not None:
            self._socket.close()
            self._socket = None

    def hang_up(self, voice_session_id: str, reason: str) -> None:
        """End the calls of a voice session (the server says its time is up or it ended)."""
        self._scripts.pop(voice_session_id, None)  # an ended session opens no new call
        for call in list(self.calls.values()):
            if call.grant.voice_session_id == voice_session_id:
                task = asyncio.ensure_future(call.close(f"The voice session ended ({reason})."))
                self._closing.add(task)
                task.add_done_callback(self._closing.discard)

    def script_for(self, grant: VoiceGrant) -> Script:
        """The session's script: shared by its calls, so a control update reaches a live call."""
        script = self._scripts.get(grant.voice_session_id)
        if script is None:
            lines = self._default_override
            if lines is None:
                lines = default_lines(self._configured_script, grant.locale)
            script = self._scripts[grant.voice_session_id] = Script(list(lines), grant.locale)
        script.locale = grant.locale
        return script

    # --- HTTP --------------------------------------------------------------------------------

    async def _create_call(self, request: Request) -> Response:
        secret = bearer_token(request.headers.get("authorization"))
        if secret is None:
            return _error(401, "invalid_api_key", "Missing bearer authentication in header.")
        media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if media_type != "application/sdp":
            return _error(400, "invalid_content_type", "The offer must be application/sdp.")
        body = await request.body()
        if len(body) > MAX_OFFER_BYTES:
            return _error(400, "invalid_offer", "The SDP offer is too large.")
        offer = body.decode("utf-8", errors="replace")
        if "m=application" not in offer:
            return _error(400, "invalid_offer", "The offer has no data channel for oai-events.")
        # Checked last, so a malformed request does not use up the single-use secret.
        grant = self._authorize(secret)
        if grant is None:
            return _error(
                401, "invalid_api_key", "The client secret is invalid, expired or already used."
            )
        call = FakeCall(grant, self.script_for(grant), on_closed=self._forget)
        try:
            answer = await call.answer(offer)
        except Exception as exc:
            logger.info("fake voice: refused an offer: %s", exc)
            await call.close()
            return _error(400, "invalid_offer", f"The SDP offer could not be used: {exc}")
        self.calls[call.id] = call
        logger.info("fake voice call %s for %s", call.id, grant.voice_session_id)
        return Response(
            answer,
            status_code=201,
            media_type="application/sdp",
            headers={"Location": f"{CALLS_PATH}/{call.id}"},
        )

    def _forget(self, call: FakeCall) -> None:
        self.calls.pop(call.id, None)

    async def _set_script(self, request: Request) -> JSONResponse:
        try:
            payload: Any = json.loads(await request.body())
            if not isinstance(payload, dict):
                raise ScriptError("the body is a JSON object with `utterances`")
            lines = parse_lines(payload.get("utterances"))
        except (json.JSONDecodeError, UnicodeDecodeError, ScriptError) as exc:
            return _error(400, "invalid_script", str(exc))
        session_id = payload.get("voiceSessionId")
        if session_id is None:
            self._default_override = lines
        elif isinstance(session_id, str) and session_id:
            script = self._scripts.get(session_id)
            if script is None:
                # Locale only matters for the fallback line; the call's grant is not known yet.
                script = self._scripts[session_id] = Script([], "en")
            script.replace(lines)
        else:
            return _error(400, "invalid_script", "voiceSessionId must be a non-empty string.")
        return JSONResponse({"ok": True, "utterances": len(lines)})

    async def _list_calls(self, request: Request) -> JSONResponse:
        return JSONResponse({"calls": [call.describe() for call in self.calls.values()]})
