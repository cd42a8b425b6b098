"""The loopback receiver of RFC 8252 §7.3: a tiny HTTP server on 127.0.0.1 for one redirect.

It listens only while a sign-in runs, on a port the system picks, and serves exactly one thing:
`GET /callback`. Every answer is a static page (the reason for a failure HTML-escaped) that is
never cached and never leaks the code through a Referer.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from talkie_tui.core.waiting import wait_within
from talkie_tui.i18n import _, current_language

__all__ = ["CALLBACK_PATH", "CallbackOutcome", "LoopbackReceiver"]

CALLBACK_PATH = "/callback"
_HOST = "127.0.0.1"  # the literal, never "localhost": it may resolve to ::1 first
_MAX_REQUEST_BYTES = 16 * 1024
_READ_TIMEOUT = 10.0


@dataclass(frozen=True, slots=True)
class CallbackOutcome:
    """What the sign-in made of one callback: the page to show, and whether it is finished."""

    ok: bool
    message: str
    finished: bool


CallbackHandler = Callable[[str], CallbackOutcome]

_PAGE = """<!doctype html>
<html lang="{lang}"><head><meta charset="utf-8"><title>{title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{{font:16px/1.5 system-ui,sans-serif;max-width:36em;margin:4em auto;padding:0 1em}}
h1{{font-size:1.4em}}</style></head>
<body><h1>{title}</h1><p>{message}</p></body></html>
"""


def render_page(outcome: CallbackOutcome) -> bytes:
    """The static page for an outcome; the message is escaped, so server text stays text."""
    title = _("Signed in to Talkie") if outcome.ok else _("Talkie sign-in failed")
    page = _PAGE.format(
        lang=current_language(), title=html.escape(title), message=html.escape(outcome.message)
    )
    return page.encode("utf-8")


class LoopbackReceiver:
    """Listens on 127.0.0.1:<free port> until a callback finishes the sign-in, then closes."""

    def __init__(self, handler: CallbackHandler) -> None:
        self._handler = handler
        self._server: asyncio.Server | None = None
        self._finished = asyncio.Event()
        self.port = 0

    @property
    def redirect_uri(self) -> str:
        """The redirect URI to send to the authorization server (the literal address and port)."""
        return f"http://{_HOST}:{self.port}{CALLBACK_PATH}"

    @property
    def listening(self) -> bool:
        """True while the port is open."""
        return self._server is not None and self._server.is_serving()

    async def start(self) -> None:
        """Open the port (port 0: the system picks a free one)."""
        self._server = await asyncio.start_server(self._serve, _HOST, 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def wait_finished(self) -> None:
        """Return when a callback finished the sign-in (the port is closed by then)."""
        await self._finished.wait()

    async def close(self) -> None:
        """Close the port; safe to call more than once."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
            with contextlib.suppress(Exception):
                await wait_within(server.wait_closed(), 2)

    async def __aenter__(self) -> LoopbackReceiver:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await wait_within(reader.readuntil(b"\r\n\r\n"), _READ_TIMEOUT)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, OSError):
            writer.close()
            return
        finished = False
        try:
            if len(head) > _MAX_REQUEST_BYTES:
                await _respond(writer, 431, b"Request too large")
                return
            method, target = _request_line(head)
            path = urlsplit(target).path
            if path != CALLBACK_PATH:
                # favicon.ico and anything else: the sign-in must not end on a stray request.
                await _respond(writer, 404, b"Not found")
                return
            if method != "GET":
                await _respond(writer, 405, b"Method not allowed", allow="GET")
                return
            outcome = self._handler(f"http://{_HOST}:{self.port}{target}")
            await _respond(writer, 200 if outcome.ok else 400, render_page(outcome), html_page=True)
            finished = outcome.finished
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                writer.close()
            if finished:
                self._finished.set()
                await self.close()


def _request_line(head: bytes) -> tuple[str, str]:
    line = head.split(b"\r\n", 1)[0].decode("latin-1")
    parts = line.split(" ")
    if len(parts) != 3:
        return "", ""
    return parts[0], parts[1]


async def _respond(
    writer: asyncio.StreamWriter,
    status: int,
    body: bytes,
    *,
    html_page: bool = False,
    allow: str | None = None,
) -> None:
    reasons = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed"}
    headers = [
        f"HTTP/1.1 {status} {reasons.get(status, 'Error')}",
        f"Content-Type: {'text/html; charset=utf-8' if html_page else 'text/plain'}",
        f"Content-Length: {len(body)}",
        "Cache-Control: no-store",
        "Pragma: no-cache",
        "Referrer-Policy: no-referrer",
        "X-Content-Type-Options: nosniff",
        "Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'",
        "Connection: close",
    ]
    if allow:
        headers.append(f"Allow: {allow}")
    writer.write(("\r\n".join(headers) + "\r\n\r\n").encode("latin-1") + body)
    await writer.drain()
