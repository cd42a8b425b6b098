"""Recorded event streams (tests/fixtures/streams) played back over real HTTP."""

from __future__ import annotations

from pathlib import Path

import ag_ui.core as agui
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp

from talkie_tui.protocol.talkie.client import TalkieClient
from talkie_tui.protocol.talkie.events import DecodedEvent
from talkie_tui.protocol.talkie.run_request import RunRequest
from tests.stub_server import Streamer, sse_response, talkie_app

__all__ = ["STREAMS", "kinds", "play", "replay_app"]

STREAMS = Path(__file__).resolve().parent.parent / "fixtures" / "streams"


def replay_app() -> ASGIApp:
    """A talkie/1 server whose run endpoint plays back a recorded stream.

    The user message names the file in tests/fixtures/streams, then options:
    `text.sse crlf` (CRLF line ends), `text.sse cr` (CR only), `text.sse chunk=5`
    (written in 5-byte pieces, so frames and UTF-8 characters are split across reads).
    """

    async def run(request: Request) -> Response:
        body = await request.json()
        name, *words = body["messages"][0]["content"].split()
        options = dict(word.partition("=")[::2] for word in words)
        data = (STREAMS / name).read_bytes()
        if "crlf" in options:
            data = data.replace(b"\n", b"\r\n")
        elif "cr" in options:
            data = data.replace(b"\n", b"\r")
        size = int(options.get("chunk") or len(data))
        return sse_response(Streamer([data[i : i + size] for i in range(0, len(data), size)]))

    return talkie_app([Route("/api/talkie/run", run, methods=["POST"])])


async def play(client: TalkieClient, message: str) -> tuple[RunRequest, list[DecodedEvent]]:
    """Run `message` (a stream name plus options) and collect every decoded event."""
    request = RunRequest(message)
    return request, [event async for event in client.run(request)]


def kinds(events: list[DecodedEvent]) -> list[str]:
    """Event kinds in order: the AG-UI type, or the class name of a talkie event."""
    return [e.type.value if isinstance(e, agui.BaseEvent) else type(e).__name__ for e in events]
