"""The receiving end of a webhook binding (spec "Webhook transport"): the hub's signed POSTs.

A binding in webhook mode gets no socket: the hub POSTs each event to the binding's URL with
`X-Cuckoo-Event`, `X-Cuckoo-Event-Id`, `X-Cuckoo-Timestamp` and `X-Cuckoo-Signature`
(`sha256=<hex>`, an HMAC-SHA256 over `timestamp + "." + body` keyed with the SHA-256 of the
binding secret). `WebhookReceiver` listens on a host and port of this computer (the binding's
https URL points at a reverse proxy in front of it; the reference hub in development mode posts
to 127.0.0.1 directly) and checks each POST: the signature, compared in constant time, and a
timestamp within `MAX_SKEW` of now (an old request played again is refused). A sound event is
handed to `on_event`, which keeps it in the state file, and answered 204 at once.

Why at once and not once the work is done: the hub wants a 2xx within 10 seconds and counts
anything later as a failure, to be posted again after 1 s, 5 s, 30 s…, while an answer from the
Talkie server may take longer than that. The event is kept before the 2xx, so the work is
tracked: done later in this run, or after a restart (`state.pending`), never lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import logging
import socket
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from talkie_tui.core.sanitize import clean_text
from talkie_tui.i18n import _

__all__ = ["MAX_SKEW", "WebhookReceiver", "listen_address", "listen_url", "signature_problem"]

logger = logging.getLogger(__name__)

MAX_SKEW = 300.0
"""Seconds a POST's timestamp may be from now (either way) before it is refused."""
MAX_BODY = 1024 * 1024
"""The largest event body read (the hub's own bodies are capped at 1 MiB)."""
WARN_EVERY = 60.0
"""Seconds between two warnings about refused POSTs (a flood says it once a minute)."""


def signature_problem(
    secret: str, timestamp: str | None, body: bytes, signature: str | None, now: float
) -> str | None:
    """Why a POST is not the hub's (its signature or timestamp), or None when it is."""
    if not timestamp or not signature:
        return _("no X-Cuckoo-Timestamp or X-Cuckoo-Signature")
    try:
        sent = int(timestamp)
    except ValueError:
        return _("X-Cuckoo-Timestamp is not a number of seconds")
    if abs(now - sent) > MAX_SKEW:
        return _("X-Cuckoo-Timestamp is {seconds} s from now").format(seconds=round(now - sent))
    key = hashlib.sha256(secret.encode()).digest()
    expected = "sha256=" + hmac.new(key, timestamp.encode() + b"." + body, "sha256").hexdigest()
    if not hmac.compare_digest(expected.encode(), signature.strip().encode()):
        return _("the signature does not match the binding secret")
    return None


def listen_address(text: str) -> tuple[str, int]:
    """`HOST:PORT` (an IPv6 host in brackets) as (host, port); ValueError says what is wrong."""
    host, colon, port = text.strip().rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not colon or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(_("{text!r} is not HOST:PORT (such as 127.0.0.1:8787)").format(text=text))
    return host, int(port)


def listen_url(sock: socket.socket) -> str:
    """The http URL of a listening socket (an IPv6 host in brackets)."""
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


class _Server(uvicorn.Server):
    """uvicorn inside the bridge's event loop: Ctrl+C stays the command's to handle."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class WebhookReceiver:
    """Listens for a webhook binding's POSTs; each sound event goes to `on_event`."""

    def __init__(
        self,
        host: str,
        port: int,
        secret: str,
        on_event: Callable[[dict[str, Any]], None],
        *,
        on_ready: Callable[[str], Awaitable[None]],
        warn: Callable[[str], None] = lambda line: None,
    ) -> None:
        self.host = host
        self.port = port
        self._secret = secret
        self._on_event = on_event
        self._on_ready = on_ready
        self._warn = warn
        self._warned_at = -WARN_EVERY
        self.url: str | None = None
        self.app = Starlette(routes=[Route("/{path:path}", self._post, methods=["POST"])])

    def bind(self) -> socket.socket:
        """The listening socket (OSError when the address is taken or not this computer's)."""
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        return socket.create_server((self.host, self.port), family=family)

    async def run(self) -> None:
        """Listen until cancelled (`on_ready` is called with the URL once it listens)."""
        sock = self.bind()
        self.url = listen_url(sock)
        config = uvicorn.Config(
            self.app,
            http="h11",
            loop="none",
            ws="none",
            lifespan="off",
            log_config=None,
            access_log=False,
            server_header=False,
            proxy_headers=False,
        )
        server = _Server(config)
        serving = asyncio.ensure_future(server.serve(sockets=[sock]))
        try:
            while not server.started:
                if serving.done():
                    serving.result()  # its failure, if it failed
                    raise OSError(_("the webhook listener did not start"))
                await asyncio.sleep(0.01)
            await self._on_ready(self.url)
            await asyncio.shield(serving)
        finally:
            server.should_exit = True
            await asyncio.wait({serving})
            sock.close()

    async def _post(self, request: Request) -> Response:
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_BODY:
                return self._refused(413, _("a body over {limit} bytes").format(limit=MAX_BODY))
        headers = request.headers
        problem = signature_problem(
            self._secret,
            headers.get("x-cuckoo-timestamp"),
            bytes(body),
            headers.get("x-cuckoo-signature"),
            time.time(),
        )
        if problem is not None:
            return self._refused(401, problem)
        try:
            event = json.loads(body)
        except (ValueError, RecursionError):
            event = None
        if (
            not isinstance(event, dict)
            or not isinstance(event.get("id"), str)
            or not isinstance(event.get("type"), str)
            or event["id"] != headers.get("x-cuckoo-event-id", event["id"])
        ):
            return self._refused(422, _("the body is not an event"))
        self._on_event(event)
        return Response(status_code=204)

    def _refused(self, status: int, problem: str) -> Response:
        now = time.monotonic()
        if now - self._warned_at >= WARN_EVERY:
            self._warned_at = now
            self._warn(
                _("webhook: refused a POST ({status}): {problem}").format(
                    status=status, problem=clean_text(problem)
                )
            )
        return JSONResponse({"error": {"code": "refused", "message": problem}}, status_code=status)
