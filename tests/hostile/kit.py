"""Parts of the hostile servers and of what the hostile tests check.

A hostile server is a small talkie/1 server (tests/stub_server.py) on 127.0.0.1 that breaks a
rule on purpose; `sink_app` stands for "another origin" on 127.0.0.2 and only records what it
receives, so a test can assert that no token (or nothing at all) went there.
"""

from __future__ import annotations

import io
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from textual.app import App

from talkie_tui.commands.ask import ask
from tests.helpers import TEST_TOKEN
from tests.stub_server import ENDPOINTS, SeenRequest, sse_frame, sse_response, talkie_app

# --- what must never reach a screen or stdout ---------------------------------------------

# C0 controls except tab and newline, DEL, and the C1 range.
FORBIDDEN = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")

MARKUP = "[b]bold[/b] [@click=app.quit]quit[/] [link=https://evil.example/m]x[/link]"
"""Rich/Textual markup in server text: it must show as these very characters."""

HOSTILE = (
    "\x1b[2J"  # erase the screen
    "\x1b]52;c;cHduZWQ=\x07"  # OSC 52: write "pwned" to the clipboard
    "\x1b]8;;https://evil.example/osc8\x07osc8\x1b]8;;\x07"  # OSC 8 hyperlink
    "\x9b31m"  # 8-bit CSI
    f"{MARKUP}"
    "\r\x00\x08\x85"  # carriage return, NUL, backspace, C1 NEL
)
"""Terminal control sequences and markup; `shown(tag)` is what a reader may see of it."""

TERMINAL_PAYLOADS = ("\x1b[2J", "\x1b]52", "cHduZWQ", "\x1b]8;;https://evil.example", "\x9b")
"""Pieces of HOSTILE that must not appear in what the app writes to the terminal."""


def hostile(tag: str) -> str:
    """A hostile server string, recognisable by its tag."""
    return f"{tag}:{HOSTILE}"


def shown(tag: str) -> str:
    """What remains visible of `hostile(tag)`: the text and the markup, literally."""
    return f"{tag}:osc8{MARKUP}"


def controls(text: str) -> list[str]:
    """The forbidden control characters in `text` (empty when the text is safe)."""
    return sorted({repr(c) for c in FORBIDDEN.findall(text)})


# --- AG-UI events --------------------------------------------------------------------------


def answer(*events: Mapping[str, Any], thread: str = "t_h", run: str = "r_h") -> list[Any]:
    """RUN_STARTED, the events, RUN_FINISHED."""
    started = {"type": "RUN_STARTED", "threadId": thread, "runId": run}
    finished = {"type": "RUN_FINISHED", "threadId": thread, "runId": run}
    return [started, *events, finished]


def says(text: str, message_id: str = "m_h") -> list[dict[str, Any]]:
    """One assistant text message."""
    return [
        {"type": "TEXT_MESSAGE_START", "messageId": message_id, "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": message_id, "delta": text},
        {"type": "TEXT_MESSAGE_END", "messageId": message_id},
    ]


def custom(name: str, value: Any) -> dict[str, Any]:
    """A CUSTOM event."""
    return {"type": "CUSTOM", "name": name, "value": value}


def frames(events: Iterable[Mapping[str, Any]]) -> str:
    """The SSE body of these events."""
    return "".join(sse_frame(event) for event in events)


def hostile_card() -> dict[str, object]:
    """A card with control sequences and markup in every string it has."""
    return {
        "id": "c1",
        "title": hostile("title"),
        "subtitle": hostile("subtitle"),
        "blocks": [
            {"type": "heading", "text": hostile("heading")},
            {"type": "fields", "fields": [{"label": hostile("label"), "value": hostile("v")}]},
            {"type": "badge", "text": hostile("badge")},
            {"type": "text", "text": hostile("markdown")},
            {"type": "list", "items": [{"title": hostile("item"), "subtitle": hostile("sub")}]},
            {"type": "link", "label": hostile("linklabel"), "url": "https://e.example/l"},
            {"type": "file", "name": hostile("file"), "mime": hostile("mime"), "url": "/f"},
        ],
        "fallbackText": hostile("fallback"),
        "a11yLabel": hostile("a11y"),
    }


def hostile_action() -> dict[str, object]:
    """A pending action whose summary and id carry control sequences."""
    return {
        "id": "a_1\x1b[2J\x9b",
        "summary": hostile("summary"),
        "riskLevel": "medium",
        "status": "pending",
        "paramsHash": "sha256:x",
    }


# Every kind of string a run shows, each hostile.
HOSTILE_RUN = frames(
    answer(
        {
            "type": "TOOL_CALL_START",
            "toolCallId": "call_1",
            "toolCallName": hostile("tool"),
            "metadata": {"label": hostile("toollabel")},
        },
        {
            "type": "TOOL_CALL_END",
            "toolCallId": "call_1",
            "metadata": {"ok": False, "error": hostile("toolerror")},
        },
        *says(hostile("text") + "\n"),
        custom("talkie.card", hostile_card()),
        custom("talkie.action", hostile_action()),
        custom("talkie.open", {"url": "https://e.example/\x1b[2J", "label": hostile("link")}),
    )
)


# --- servers -------------------------------------------------------------------------------

Handler = Callable[[Request], Awaitable[Response]]


def status_route() -> Route:
    """GET status: a signed-in tester, chat on."""

    async def status(request: Request) -> Response:
        return JSONResponse({"user": {"id": "u1", "name": "Tester"}, "chat": True})

    return Route(ENDPOINTS["status"], status)


def threads_route() -> Route:
    """GET threads: none."""

    async def threads(request: Request) -> Response:
        return JSONResponse({"threads": []})

    return Route(ENDPOINTS["threads"], threads)


def run_route(body: str | bytes | Handler) -> Route:
    """POST run answering `body` as an event stream (or through a handler of its own)."""
    if callable(body):
        return Route(ENDPOINTS["run"], body, methods=["POST"])
    fixed = body

    async def run(request: Request) -> Response:
        await request.body()
        return sse_response(fixed)

    return Route(ENDPOINTS["run"], run, methods=["POST"])


def hostile_app(
    run: str | bytes | Handler | None = None,
    routes: Iterable[BaseRoute] = (),
    manifest: Callable[[str], Mapping[str, Any] | None] | None = None,
) -> Starlette:
    """A talkie/1 server with status and threads, `routes`, and a run endpoint."""
    parts: list[BaseRoute] = [*routes, status_route(), threads_route()]
    if run is not None:
        parts.append(run_route(run))
    return talkie_app(parts, manifest=manifest)


def sink_app(answer_with: Response | None = None) -> Starlette:
    """Another origin: answers every request (200, or `answer_with`) and keeps nothing else."""

    async def anything(request: Request) -> Response:
        await request.body()
        return answer_with or JSONResponse({"ok": True})

    methods = ["GET", "POST", "PUT", "DELETE", "PATCH"]
    return Starlette(routes=[Route("/{path:path}", anything, methods=methods)])


def bearers(requests: Iterable[SeenRequest]) -> list[str]:
    """The Authorization headers among these requests."""
    return [r.headers["authorization"] for r in requests if "authorization" in r.headers]


# --- the command line ----------------------------------------------------------------------


@dataclass
class Asked:
    """What `talkie ask` did: exit code, stdout, stderr."""

    code: int
    out: str
    err: str

    def unsafe(self) -> list[str]:
        """Forbidden control characters on stdout or stderr."""
        return controls(self.out + self.err)


async def ask_cli(
    server: str, message: str, *, token: str | None = TEST_TOKEN, as_json: bool = False
) -> Asked:
    """Run `talkie ask` in this process, capturing its output."""
    out, err = io.StringIO(), io.StringIO()
    code = await ask(server, message, token=token, as_json=as_json, out=out, err=err)
    return Asked(code, out.getvalue(), err.getvalue())


# --- the terminal --------------------------------------------------------------------------


def screen_lines(app: App[Any]) -> list[str]:
    """The text of every cell of the current screen (toasts included), line by line."""
    update = app.screen._compositor.render_update(full=True)
    return ["".join(segment.text for segment in strip) for strip in update.strips]


def terminal_output(app: App[Any]) -> str:
    """What the app would write to a real terminal to draw its current screen."""
    update = app.screen._compositor.render_update(full=True)
    return update.render_segments(app.console)


def assert_terminal_safe(app: App[Any]) -> str:
    """Check that no control character of server text reaches the terminal; returns the text."""
    lines = screen_lines(app)
    text = "\n".join(lines)
    assert controls(text) == [], controls(text)
    output = terminal_output(app)
    for payload in TERMINAL_PAYLOADS:
        assert payload not in output, f"{payload!r} reached the terminal"
    return text
