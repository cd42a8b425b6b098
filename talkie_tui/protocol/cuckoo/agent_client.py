"""The agent's client of a Cuckoo hub (spec "Agent API", "The socket"): HTTP and the socket.

`AgentApi` is the few HTTP routes an agent (the bridge) needs (`/me`, `/events?since=`), with
the binding secret as the bearer for the hub's origin only and errors in the hub's words.
`AgentLink` keeps the agent socket open: it connects with the secret in the Authorization
header, hands each pushed event to a callback, matches replies to requests by `cid`, and
reconnects with backoff (`net.websocket.SocketLine`) when the line drops. websockets answers the
hub's pings itself (and pings the hub, to notice a dead line). What retrying cannot mend ends
the link with `LinkEnded`: the socket closed with 4001 (another backend took over) or 4002 (the
binding was revoked or replaced), and a refusal before the upgrade (`403 no_binding`,
`binding_not_socket`, `401`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed, InvalidStatus, InvalidURI, WebSocketException

from talkie_tui.core.errors import ServerError, TalkieError, TransportError
from talkie_tui.core.sanitize import clean_text
from talkie_tui.core.tokens import StaticToken
from talkie_tui.core.waiting import wait_within
from talkie_tui.i18n import N_, _
from talkie_tui.protocol.cuckoo.errors import error_for
from talkie_tui.protocol.net.rest import RestClient, path_segment
from talkie_tui.protocol.net.websocket import SocketLine, close_quietly

__all__ = ["AgentApi", "AgentLink", "HubRefused", "LinkEnded", "OpFailed"]

logger = logging.getLogger(__name__)

BACKOFF = (0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0)
JITTER = 0.2  # each delay spread by up to a fifth either way
REPLY_TIMEOUT = 15.0
FRAME_BYTES = 64 * 1024


class LinkEnded(TalkieError):
    """The socket cannot be used again: retrying would not help (4001, 4002, a refusal)."""

    retryable = False

    def __init__(self, message: str, *, code: str = "") -> None:
        super().__init__(message)
        self.code = code


class OpFailed(TalkieError):
    """The hub answered an op with `ok: false`: its code and words."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class HubRefused(TalkieError):
    """The hub refused the socket before the upgrade with a status that may pass (5xx, 429)."""

    retryable = True


class AgentApi(RestClient):
    """`/v1/agent` over HTTP, as the binding `secret`."""

    def __init__(self, base_url: str, secret: str, *, http: httpx.AsyncClient | None = None):
        super().__init__(base_url, tokens=StaticToken(secret), http=http)

    def _error_for(self, response: httpx.Response) -> ServerError:
        return error_for(response)

    def _unreadable(self, route: str, problem: str) -> TalkieError:
        return ServerError(
            _("The hub's answer to {route} is not what the protocol says: {problem}").format(
                route=route, problem=problem
            ),
            status=200,
            code="unreadable",
            retryable=False,
        )

    def _too_large(self, limit: int) -> TalkieError:
        return ServerError(
            _("The hub's answer is over {limit} bytes.").format(limit=limit),
            status=200,
            code="too_large",
            retryable=False,
        )

    async def me(self) -> dict[str, Any]:
        """`GET /v1/agent/me`: who this binding is (its id, handle, owner)."""
        body = await self._json("GET", "v1/agent/me")
        agent = body.get("agent") if isinstance(body, dict) else None
        if not isinstance(agent, dict) or not isinstance(agent.get("id"), str):
            raise self._unreadable("/v1/agent/me", "no agent")
        return agent

    async def events(self, since: str | None, limit: int = 100) -> list[dict[str, Any]]:
        """`GET /v1/agent/events?since=`: events after `since`, oldest first."""
        params = {"limit": str(limit)}
        if since:
            params["since"] = since
        body = await self._json("GET", "v1/agent/events", params=params)
        events = body.get("events") if isinstance(body, dict) else None
        if not isinstance(events, list):
            raise self._unreadable("/v1/agent/events", "no events")
        return [event for event in events if isinstance(event, dict)]

    async def message_text(self, conversation_id: str, message_id: str) -> str | None:
        """The text the hub holds for one of the newest messages of a conversation."""
        route = f"v1/agent/conversations/{path_segment(conversation_id)}/messages"
        body = await self._json("GET", route, params={"limit": "50"})
        messages = body.get("messages") if isinstance(body, dict) else None
        for message in messages if isinstance(messages, list) else []:
            if isinstance(message, dict) and message.get("id") == message_id:
                found = (message.get("body") or {}).get("text")
                return found if isinstance(found, str) else ""
        return None

    async def send_message(self, conversation_id: str, fields: dict[str, Any]) -> dict[str, Any]:
        """`POST /v1/agent/conversations/{id}/messages`: a message, or a stream's start."""
        route = f"v1/agent/conversations/{path_segment(conversation_id)}/messages"
        return self._message(await self._json("POST", route, body=fields), route)

    async def append(self, message_id: str, text: str) -> None:
        """`POST /v1/agent/messages/{id}/append`: more text for a streaming message."""
        route = f"v1/agent/messages/{path_segment(message_id)}/append"
        await self._send("POST", self.url(route), body={"text": text})

    async def finish(
        self, message_id: str, buttons: list[list[dict[str, str]]] | None = None
    ) -> dict[str, Any]:
        """`POST /v1/agent/messages/{id}/finish`: a stream ended (with `buttons` at its end)."""
        route = f"v1/agent/messages/{path_segment(message_id)}/finish"
        body = await self._json("POST", route, body={"buttons": buttons} if buttons else {})
        return self._message(body, route)

    async def activity(self, conversation_id: str, state: str, label: str | None = None) -> None:
        """`POST /v1/agent/conversations/{id}/activity`: thinking, working (label), idle."""
        route = f"v1/agent/conversations/{path_segment(conversation_id)}/activity"
        body = {"state": state, "label": label} if label else {"state": state}
        await self._send("POST", self.url(route), body=body)

    async def upload(self, data: bytes, params: dict[str, str]) -> dict[str, Any]:
        """`POST /v1/agent/media` with `data` as the raw body (`name`, a voice note's `kind`,
        `duration_ms` and `waveform` in `params`): the media record."""
        body = await self._json("POST", "v1/agent/media", content=data, params=params)
        media = body.get("media") if isinstance(body, dict) else None
        if not isinstance(media, dict) or not isinstance(media.get("id"), str):
            raise self._unreadable("/v1/agent/media", "no media")
        return media

    def _message(self, body: Any, route: str) -> dict[str, Any]:
        message = body.get("message") if isinstance(body, dict) else None
        if not isinstance(message, dict):
            raise self._unreadable("/" + route, "no message")
        return message

    async def conversation(self, conversation_id: str) -> dict[str, Any]:
        """`GET /v1/agent/conversations/{id}`: the conversation and its participants."""
        body = await self._json("GET", f"v1/agent/conversations/{path_segment(conversation_id)}")
        found = body.get("conversation") if isinstance(body, dict) else None
        return found if isinstance(found, dict) else {}


def socket_url(base_url: str) -> str:
    """The agent socket's ws(s) URL for the hub at `base_url` (which ends in "/")."""
    url = httpx.URL(base_url)
    scheme = "wss" if url.scheme == "https" else "ws"
    return str(url.copy_with(scheme=scheme, path=url.path + "v1/agent/socket"))


def _refusal(error: InvalidStatus) -> TalkieError:
    """What a refusal before the upgrade means: the hub's code and words, final or not."""
    response = error.response
    status = response.status_code
    code, message = "", ""
    with contextlib.suppress(ValueError, AttributeError):
        envelope = json.loads(response.body or b"{}").get("error") or {}
        code = clean_text(str(envelope.get("code") or ""))
        message = clean_text(str(envelope.get("message") or ""))
    message = message or _("HTTP {status}").format(status=status)
    words = f"{message} ({code}, HTTP {status})" if code else f"{message} (HTTP {status})"
    if status in (401, 403, 404):
        return LinkEnded(
            _("The hub refused the agent socket: {words}").format(words=words), code=code
        )
    return HubRefused(_("The hub refused the agent socket: {words}").format(words=words))


_CLOSE_WORDS = {
    4001: N_(
        "Another backend connected to this agent, so the hub closed this one (4001). "
        "Only one socket per agent wins; stop the other bridge, or this one."
    ),
    4002: N_(
        "The hub closed the socket because this binding was revoked or replaced (4002). "
        "Make a new binding and start the bridge with its secret."
    ),
}


class AgentLink:
    """The agent socket, kept open: events in, ops out, replies matched by `cid`."""

    def __init__(
        self,
        base_url: str,
        secret: str,
        on_event: Callable[[dict[str, Any]], None],
        *,
        on_connected: Callable[[bool], Awaitable[None]] | None = None,
        on_delta_failed: Callable[[str, str], None] | None = None,
        say: Callable[[str], None] = lambda line: None,
        backoff: tuple[float, ...] = BACKOFF,
        ping_interval: float = 20.0,
    ) -> None:
        self.url = socket_url(base_url)
        self._secret = secret
        self._on_event = on_event
        self._on_connected = on_connected
        self._on_delta_failed = on_delta_failed
        self._say = say
        self._line = SocketLine(
            self.url,
            max_size=4 * FRAME_BYTES,
            user_agent="talkie-bridge",
            open_timeout=10,
            ping_interval=ping_interval,
            ping_timeout=ping_interval,
            delays=backoff,
            jitter=JITTER,
        )
        self._ws: ClientConnection | None = None
        self._up = asyncio.Event()
        self._cids = itertools.count(1)
        self._waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.ended: LinkEnded | None = None

    @property
    def connected(self) -> bool:
        """True while a socket is open."""
        return self._up.is_set()

    async def run(self) -> None:
        """Connect, read, and reconnect until cancelled; raises LinkEnded when it must stop."""
        first = True
        line = self._line
        line.backoff.reset()
        while True:
            try:
                ws = await line.open(self._secret)
            except InvalidStatus as error:
                refusal = _refusal(error)
                if isinstance(refusal, LinkEnded):
                    self.ended = refusal
                    raise refusal from None
                reason = refusal.message
            except InvalidURI as error:
                self.ended = LinkEnded(str(error))
                raise self.ended from None
            except (OSError, TimeoutError, WebSocketException) as error:
                reason = clean_text(str(error)) or type(error).__name__
            else:
                try:
                    await self._serve(ws, reconnected=not first)
                finally:
                    first = False
                reason = _("the connection to the hub was lost")
            delay = line.backoff.next_delay()
            self._say(
                _("hub: {reason}; trying again in {seconds:.1f} s").format(
                    reason=reason, seconds=delay
                )
            )
            await line.pause(delay)

    async def _serve(self, ws: ClientConnection, *, reconnected: bool) -> None:
        self._ws = ws
        self._up.set()
        try:
            if self._on_connected is not None:
                catch_up = asyncio.ensure_future(self._on_connected(reconnected))
            else:
                catch_up = None
            try:
                async for raw in ws:
                    if isinstance(raw, str):
                        self._dispatch(raw)
            except ConnectionClosed:
                pass
            finally:
                if catch_up is not None and not catch_up.done():
                    catch_up.cancel()
            code = ws.close_code
            if code in _CLOSE_WORDS:
                self.ended = LinkEnded(_(_CLOSE_WORDS[code]), code=str(code))
                raise self.ended
        finally:
            self._up.clear()
            self._ws = None
            lost = TransportError(_("The connection to the hub was lost."))
            for future in self._waiting.values():
                if not future.done():
                    future.set_exception(lost)
            self._waiting.clear()

    def _dispatch(self, raw: str) -> None:
        try:
            frame = json.loads(raw)
        except json.JSONDecodeError:
            return
        if not isinstance(frame, dict):
            return
        cid = frame.get("reply_to_cid")
        if isinstance(cid, str) and cid in self._waiting:
            future = self._waiting.pop(cid)
            if not future.done():
                future.set_result(frame)
            return
        if isinstance(frame.get("id"), str) and isinstance(frame.get("type"), str):
            self._on_event(frame)
            return
        if frame.get("ok") is False and self._on_delta_failed is not None:
            error = frame.get("error") if isinstance(frame.get("error"), dict) else {}
            assert isinstance(error, dict)
            self._on_delta_failed(str(frame.get("message_id") or ""), str(error.get("code") or ""))

    async def wait_up(self) -> None:
        """Wait until a socket is open."""
        await self._up.wait()

    async def send_frame(self, frame: dict[str, Any]) -> bool:
        """Send one frame without waiting for a reply; False when no socket is open."""
        ws = self._ws
        if ws is None:
            return False
        try:
            await ws.send(json.dumps(frame, ensure_ascii=False, separators=(",", ":")))
        except ConnectionClosed:
            return False
        return True

    async def ack(self, event_id: str) -> bool:
        """Acknowledge a handled event (False: no socket; it comes again and is acked then)."""
        return await self.send_frame({"ack": event_id})

    async def request(
        self, frame: dict[str, Any], *, attempts: int = 6, reply_within: float = REPLY_TIMEOUT
    ) -> dict[str, Any]:
        """Send an op and return the `message` of its reply; tried again (with the same
        idempotency key) when the line drops or the hub says slow down. OpFailed otherwise."""
        delay = 0.5
        for attempt in range(attempts):
            if self.ended is not None:
                raise self.ended
            await self.wait_up()
            cid = f"c{next(self._cids)}"
            future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
            self._waiting[cid] = future
            sent = await self.send_frame({**frame, "cid": cid})
            if not sent:
                self._waiting.pop(cid, None)
                await asyncio.sleep(delay)
                continue
            try:
                reply = await wait_within(future, reply_within)
            except (TransportError, TimeoutError):
                self._waiting.pop(cid, None)
                if attempt + 1 == attempts:
                    raise
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
                continue
            if reply.get("ok") is True:
                message = reply.get("message")
                return message if isinstance(message, dict) else {}
            error = reply.get("error") if isinstance(reply.get("error"), dict) else {}
            assert isinstance(error, dict)
            code = clean_text(str(error.get("code") or "error"))
            words = clean_text(str(error.get("message") or code))
            if code == "rate_limited" and attempt + 1 < attempts:
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
                continue
            raise OpFailed(code, words)
        raise TransportError(_("The hub did not answer."))

    async def close(self) -> None:
        """Close the socket (unacknowledged events are delivered again to the next one)."""
        ws = self._ws
        if ws is not None:
            await close_quietly(ws)
