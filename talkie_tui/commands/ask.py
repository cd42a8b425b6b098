"""`talkie ask`: one run without the TUI, for scripts and quick questions."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from typing import TextIO

import ag_ui.core as agui

from talkie_tui.chat.session import ChatSession, Recovered
from talkie_tui.chat.turns import ActionPart, CardPart, LinkPart, TextPart, ToolPart
from talkie_tui.protocol.errors import TalkieError
from talkie_tui.protocol.events import StreamTruncated, event_to_json
from talkie_tui.protocol.sanitize import clean_text

from .common import EXIT_ERROR, EXIT_OK, connect, report_error

__all__ = ["ask"]


class _TextPrinter:
    """Prints the answer as it streams: text as it comes, cards and actions as lines."""

    def __init__(self, out: TextIO, err: TextIO) -> None:
        self.out, self.err = out, err
        self.at_line_start = True
        self._printed: list[str] = []  # joined only when needed: += would be quadratic

    @property
    def printed(self) -> str:
        """Everything printed so far."""
        return "".join(self._printed)

    def write(self, text: str) -> None:
        if text:
            self.out.write(text)
            self.out.flush()
            self._printed.append(text)
            self.at_line_start = text.endswith("\n")

    def line(self, text: str) -> None:
        if not self.at_line_start:
            self.write("\n")
        self.write(text + "\n")

    def show(self, change: object, delta: str | None) -> None:
        if isinstance(change, TextPart) and delta:
            self.write(delta)
        elif isinstance(change, CardPart):
            self.line(change.card.fallback_text)
        elif isinstance(change, ActionPart):
            action = change.action
            risk = f"risk {action.risk_level}, {action.status}"
            self.line(f"[action {clean_text(action.id)}] {action.summary} ({risk})")
        elif isinstance(change, LinkPart):
            self.line(f"{change.link.label or 'Link'}: {change.link.url}")
        elif isinstance(change, ToolPart) and self.err.isatty():
            mark = {"running": "…", "ok": "✓", "failed": "✗"}[change.state]
            self.err.write(f"{mark} {change.error or change.label}\n")

    def finish(self) -> None:
        if not self.at_line_start:
            self.write("\n")


async def ask(
    server: str,
    message: str,
    *,
    token: str | None = None,
    thread: str | None = None,
    as_json: bool = False,
    allow_private_http: bool = False,
    out: TextIO = sys.stdout,
    err: TextIO = sys.stderr,
) -> int:
    """Send `message`, print the answer, and return the exit code (0, 1, 3)."""
    try:
        client = await connect(server, token, allow_private_http=allow_private_http)
    except TalkieError as error:
        return report_error(error, server, err)
    async with client:
        session = ChatSession(client, thread)
        request = session.prepare(message)
        printer = _TextPrinter(out, err)
        try:
            async for update in session.send(request):
                event = update.event
                if as_json:
                    if not isinstance(event, Recovered):
                        out.write(event_to_json(event) + "\n")
                        out.flush()
                    continue
                if isinstance(event, StreamTruncated):
                    err.write(f"talkie: {event.reason} Loading the answer from the thread…\n")
                elif isinstance(event, Recovered):
                    _print_recovered(session, printer)
                else:
                    delta = event.delta if isinstance(event, agui.TextMessageContentEvent) else None
                    printer.show(update.change, delta)
        except TalkieError as error:
            printer.finish()
            return report_error(error, server, err)
        except (KeyboardInterrupt, asyncio.CancelledError):
            printer.finish()
            await _cancel_quietly(session, request.run_id)
            err.write("talkie: cancelled.\n")
            return 130
        printer.finish()
    if request.error is not None:
        code = request.error.code or "internal"
        retryable = (request.error.metadata or {}).get("retryable") is True
        hint = "Trying again may help." if retryable else "Trying again will not help."
        err.write(f"talkie: {request.error.message} ({code})\n  {hint}\n")
        return EXIT_ERROR
    if request.truncated and not request.finished and not _has_answer(session):
        return EXIT_ERROR
    return EXIT_OK


def _print_recovered(session: ChatSession, printer: _TextPrinter) -> None:
    """Print the part of the recovered answer that the broken stream had not shown."""
    turns = session.conversation.turns
    answer = turns[-1] if turns and turns[-1].role == "assistant" else None
    if answer is None:
        return
    text = answer.text
    printed = printer.printed.rstrip("\n")
    if text.startswith(printed):
        printer.write(text[len(printed) :])
    else:
        printer.line(text)
    for part in answer.parts:
        if not isinstance(part, TextPart):
            printer.show(part, None)


def _has_answer(session: ChatSession) -> bool:
    turns = session.conversation.turns
    return bool(turns) and turns[-1].role == "assistant" and turns[-1].state == "done"


async def _cancel_quietly(session: ChatSession, run_id: str) -> None:
    with contextlib.suppress(TalkieError, TimeoutError):
        await asyncio.wait_for(session.client.cancel_run(run_id), timeout=5)
