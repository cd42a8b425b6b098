"""`talkie ask`: one run without the TUI, for scripts and quick questions.

It speaks to a `Backend` only, so it prints the same for every protocol: the conversation's
parts as lines, `Update.wire` for `--json`, and the exit code from how the `Outgoing` ended.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import sys
import time
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any, TextIO

from talkie_tui.chat.block_text import block_lines, link_line, question_outcome, todo_lines
from talkie_tui.chat.turns import (
    ActionPart,
    AttachmentPart,
    ButtonsPart,
    CardPart,
    InterjectionPart,
    LinkPart,
    NoticePart,
    QuestionPart,
    QuickRepliesPart,
    TextPart,
    TodoPart,
    ToolPart,
    Turn,
    UiBlockPart,
)
from talkie_tui.chat.voice_notes import is_voice_note, voice_length
from talkie_tui.commands.common import connect_or_report, report_error
from talkie_tui.core.errors import TalkieError
from talkie_tui.core.exit_codes import ExitCode
from talkie_tui.core.sanitize import clean_text
from talkie_tui.core.waiting import wait_within
from talkie_tui.i18n import _

if TYPE_CHECKING:
    from talkie_tui.backends.base import Backend, Broken, ProtocolName, Session

__all__ = ["PIPE_WIDTH", "WAIT_REPORT_EVERY", "ask"]

WAIT_REPORT_EVERY = 10.0
"""Seconds between the "still waiting" lines when stderr is not a terminal (a pipe, a log)."""
PIPE_WIDTH = 100
"""The width tables and charts are laid out to when stdout is not a terminal."""


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no such method, or a closed stream
        return False


def _width(out: TextIO) -> int:
    """How many cells a line of stdout may take: the terminal's width, else PIPE_WIDTH."""
    return shutil.get_terminal_size((PIPE_WIDTH, 24)).columns if _isatty(out) else PIPE_WIDTH


class _TextPrinter:
    """Prints the answer as it streams: text as it comes, cards, actions, blocks and
    interjections as lines, the todo list once the answer ended; the agent's questions on
    stderr (`talkie ask` never answers them: `answer_in` says where they can be answered)."""

    def __init__(
        self,
        out: TextIO,
        err: TextIO,
        *,
        width: int = PIPE_WIDTH,
        answer_in: Callable[[], str] = lambda: "talkie connect",
    ) -> None:
        self.out, self.err = out, err
        self.width = max(20, width)
        self.answer_in = answer_in
        self.at_line_start = True
        self._printed: list[str] = []  # joined only when needed: += would be quadratic
        self._blank = True  # the last line printed is empty (or nothing is printed yet)
        self._after_block = False
        self._text: TextPart | None = None  # the text segment the last delta went to
        self._between = False  # a tool or a question came since that delta
        self._blocks: dict[str, object] = {}  # block id -> the data last printed
        self._todos: TodoPart | None = None
        self._questions: dict[str, str | None] = {}  # question id -> the outcome last said

    @property
    def printed(self) -> str:
        """Everything printed so far."""
        return "".join(self._printed)

    def write(self, text: str) -> None:
        if text:
            self.out.write(text)
            self.out.flush()
            self._printed.append(text)
            self._blank = (text == "\n" and self.at_line_start) or text.endswith("\n\n")
            self.at_line_start = text.endswith("\n")

    def line(self, text: str) -> None:
        if not self.at_line_start:
            self.write("\n")
        self.write(text + "\n")

    def _gap(self) -> None:
        """A blank line between a block and what is around it (none at the very start)."""
        if not self.at_line_start:
            self.write("\n")
        if not self._blank:
            self.write("\n")

    def show(self, change: object, delta: str | None) -> None:
        if isinstance(change, TextPart) and delta:
            if self._after_block:
                self._gap()
                self._after_block = False
            elif self._between and change is not self._text and not self.at_line_start:
                # A new text after a tool, a question or another message of the answer (a
                # hub's answer may be several) starts its own line; two text segments of one
                # message join, as Talkie answers expect.
                self.write("\n")
            self._between, self._text = False, change
            self.write(delta)
        elif isinstance(change, Turn):
            if change.role == "assistant" and self._text is not None:
                self._between = True  # another message of the answer (a hub's)
        elif isinstance(change, CardPart):
            self.line(change.card.fallback_text)
        elif isinstance(change, ActionPart):
            action = change.action
            risk = f"risk {action.risk_level}, {action.status}"
            self.line(f"[action {clean_text(action.id)}] {action.summary} ({risk})")
        elif isinstance(change, LinkPart):
            self.line(link_line(change.link.label, change.link.url))
        elif isinstance(change, ToolPart):
            self._between = True
            if self.err.isatty():
                mark = {"running": "…", "ok": "✓", "failed": "✗"}[change.state]
                self.err.write(f"{mark} {change.error or change.label}\n")
        elif isinstance(change, UiBlockPart):
            self._block(change)
        elif isinstance(change, TodoPart):
            # The list is replaced in place as the agent works: stdout gets it once, as it
            # ended (`close`); a terminal's stderr shows the progress meanwhile.
            self._todos = change
            if _isatty(self.err) and change.items:
                self.err.write(todo_lines(change.items)[0] + "\n")
        elif isinstance(change, QuestionPart):
            self._between = True
            self._question(change)
        elif isinstance(change, InterjectionPart):
            self.line(_("(you, while the agent worked) {text}").format(text=change.text))
        elif isinstance(change, ButtonsPart | QuickRepliesPart | AttachmentPart):
            self._hub_part(change)
        elif isinstance(change, NoticePart) and change.code in ("stopped", "truncated"):
            if not self.at_line_start:
                self.write("\n")
            self.err.write(_("talkie: {reason}").format(reason=change.text) + "\n")

    def _hub_part(self, part: ButtonsPart | QuickRepliesPart | AttachmentPart) -> None:
        """A hub's buttons, quick replies and files, each a line (once per message)."""
        if isinstance(part, ButtonsPart):
            key = f"buttons {part.source_message_id}"
            rows = []
            for row in part.rows:
                labels = []
                for button in row:
                    label = button.label + (f" <{button.url}>" if button.url else "")
                    if button.button_id is not None and button.button_id == part.selected_button_id:
                        label += " ✓"
                    labels.append(label)
                rows.append(" · ".join(labels))
            lines = [f"[buttons] {row}" for row in rows]
        elif isinstance(part, QuickRepliesPart):
            key = "replies " + "\n".join(part.labels)
            lines = ["[replies] " + " · ".join(part.labels)]
        elif is_voice_note(part):
            key = f"file {part.key}"
            lines = [f"[voice note {voice_length(part.duration_ms or 0)}]"]
        else:
            key = f"file {part.key}"
            size = f"{part.size / 1024:.0f} KiB" if part.size >= 1024 else f"{part.size} B"
            lines = [f"[file] {part.filename} ({part.kind}, {size})"]
        if key in self._blocks:
            return
        self._blocks[key] = True
        for text in lines:
            self.line(text)

    def _block(self, part: UiBlockPart) -> None:
        """A UI block's lines; the same block sent again with new data is printed again (the
        same data, e.g. from the thread after a broken stream, is not)."""
        if self._blocks.get(part.block_id) == part.data:
            return
        self._blocks[part.block_id] = part.data
        lines = block_lines(part.kind, part.data, self.width)
        if lines:
            self._gap()
            for text in lines:
                self.line(text)
            self._after_block = True

    def _question(self, part: QuestionPart) -> None:
        """A new question, then its outcome, as lines on stderr (stdout is the answer)."""
        said = part.question_id in self._questions
        if said and self._questions[part.question_id] == part.outcome:
            return
        if not said and part.outcome is not None:
            return  # settled before talkie saw it ask (an answer rebuilt from the thread)
        self._questions[part.question_id] = part.outcome
        err = self.err
        if not self.at_line_start and _isatty(self.out) and _isatty(err):
            err.write("\n")  # one terminal: the question starts its own line
        ident = clean_text(part.question_id)
        if part.outcome is not None:
            line = _("talkie: question {id}: {outcome}")
            err.write(
                line.format(id=ident, outcome=question_outcome(part.outcome, part.answered_with))
                + "\n"
            )
        else:
            err.write(_question_lines(part, self.answer_in()))
        err.flush()

    def finish(self) -> None:
        if not self.at_line_start:
            self.write("\n")

    def close(self) -> None:
        """The answer ended: the todo list as it ended (once), and the last line ended."""
        todos, self._todos = self._todos, None
        if todos is not None and todos.items:
            self._gap()
            for text in todo_lines(todos.items):
                self.line(text)
        self.finish()


def _question_lines(part: QuestionPart, answer_in: str) -> str:
    """What stderr says of a new question: who asks what, the options, where to answer."""
    head = _("talkie: the agent asks ({kind}, id {id}):").format(
        kind=part.kind, id=clean_text(part.question_id)
    )
    if part.expires_at:
        head += " " + _("open until {when}").format(when=_local_time(part.expires_at))
    lines = [head]
    for question in part.questions:
        options = " | ".join(option.label for option in question.options)
        several = _("(several)") + " " if question.multi else ""
        lines.append(f"  {question.text}" + (f" [{several}{options}]" if options else ""))
    if part.kind == "confirm":
        lines.append(_("  Unanswered, it expires and the action is cancelled."))
    lines.append(
        _("  talkie ask does not answer questions: answer it in the TUI, {command}").format(
            command=answer_in
        )
    )
    return "\n".join(lines) + "\n"


def _local_time(stamp: str) -> str:
    """An ISO 8601 time as the local wall-clock time, or as sent when it does not parse."""
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).astimezone().strftime("%X")
    except ValueError:
        return stamp


class _WaitProgress:
    """Shows on stderr that `talkie ask` still waits for a broken stream's answer.

    On a terminal: one line with the seconds waited, redrawn in place every second.
    Elsewhere (a pipe, a log): a line every `every` seconds, so a log shows the wait too.
    """

    def __init__(self, err: TextIO, every: float) -> None:
        self.err = err
        self.tty = _isatty(err)
        self.every = 1.0 if self.tty else every
        self.began: float | None = None
        self._task: asyncio.Task[None] | None = None
        self._drawn = False

    @property
    def seconds(self) -> int:
        """Whole seconds waited so far."""
        return round(time.monotonic() - self.began) if self.began is not None else 0

    def start(self) -> None:
        self.began = time.monotonic()
        if self.tty:
            self._draw()
        self._task = asyncio.get_running_loop().create_task(self._tick())

    async def _tick(self) -> None:
        with contextlib.suppress(OSError):  # stderr is gone too: nowhere to show the wait
            while True:
                await asyncio.sleep(self.every)
                self._draw()

    def _draw(self) -> None:
        if self.tty:
            line = _("talkie: waiting for the answer… {seconds} s (Ctrl+C stops waiting)")
            self.err.write("\r" + line.format(seconds=self.seconds) + "\x1b[K")
            self._drawn = True
        else:
            line = _("talkie: still waiting for the answer ({seconds} s)…")
            self.err.write(line.format(seconds=self.seconds) + "\n")
        self.err.flush()

    def stop(self) -> None:
        """Stop showing the wait; on a terminal its line is wiped."""
        if self._task is not None:
            self._task.cancel()
            self._task = None
        if self._drawn:
            self._drawn = False
            with contextlib.suppress(OSError):
                self.err.write("\r\x1b[K")
                self.err.flush()


async def ask(
    server: str,
    message: str,
    *,
    token: str | None = None,
    thread: str | None = None,
    as_json: bool = False,
    protocol: ProtocolName | None = None,
    allow_private_http: bool = False,
    out: TextIO | None = None,
    err: TextIO | None = None,
    wait_report_every: float = WAIT_REPORT_EVERY,
) -> int:
    """Send `message`, print the answer, and return the exit code (0, 1, 3; 130 on Ctrl+C).

    When the stream breaks, the answer is awaited from the thread (the server finishes the
    run), with the wait shown on stderr; Ctrl+C then stops waiting (exit 1), not the run.
    `out` and `err` are stdout and stderr by default (the ones of the moment it is called).
    """
    out, err = out or sys.stdout, err or sys.stderr
    backend = await connect_or_report(
        server, token, err, protocol=protocol, allow_private_http=allow_private_http
    )
    if isinstance(backend, ExitCode):
        return backend
    async with contextlib.aclosing(backend):
        session = backend.new_session(thread)
        outgoing = session.prepare(message)
        printer = _TextPrinter(
            out,
            err,
            width=_width(out),
            answer_in=lambda: _connect_command(
                server, outgoing.thread_id or session.conversation.thread_id
            ),
        )
        progress = _WaitProgress(err, wait_report_every)
        try:
            async for update in session.send(outgoing):
                broken, recovered = update.broken, update.recovered
                if broken is not None:
                    _say_broken(broken, printer)
                    if not broken.abandoned:
                        progress.start()
                elif recovered is not None:
                    progress.stop()
                    progress.began = None
                    if not as_json:
                        _print_recovered(session, printer)
                    if recovered.reason:
                        printer.finish()
                        err.write(_("talkie: {reason}").format(reason=recovered.reason) + "\n")
                    if recovered.pending:
                        err.write(_later(server, outgoing.thread_id) + "\n")
                    continue
                if as_json:
                    wire = update.wire
                    if wire is not None:
                        out.write(wire + "\n")
                        out.flush()
                elif broken is None:
                    printer.show(update.change, update.delta)
        except TalkieError as error:
            printer.close()
            return report_error(error, server, err, protocol=backend.info.protocol)
        except (KeyboardInterrupt, asyncio.CancelledError):
            progress.stop()
            printer.close()
            if progress.began is not None:
                # Only the wait is stopped: the server finishes the run (disconnect is not cancel).
                _say_stopped_waiting(err, server, outgoing.thread_id, progress.seconds)
                return ExitCode.FAILED
            await _stop_quietly(backend, outgoing.run_id)
            err.write("talkie: cancelled.\n")
            return ExitCode.INTERRUPTED
        finally:
            progress.stop()
        printer.close()
    failure = outgoing.failure
    if failure is not None:
        code = failure.code or "internal"
        hint = "Trying again may help." if failure.retryable else "Trying again will not help."
        err.write(f"talkie: {failure.message} ({code})\n  {hint}\n")
        return ExitCode.FAILED
    # Not finished and not failed: the stream broke, and the thread did not give the answer.
    if not outgoing.finished and not _has_answer(session):
        return ExitCode.FAILED
    return ExitCode.OK


def _say_broken(broken: Broken, printer: _TextPrinter) -> None:
    """Say that the stream broke, and whether the answer is now awaited from the thread."""
    err = printer.err
    if not printer.at_line_start and _isatty(printer.out) and _isatty(err):
        err.write("\n")  # one terminal: the message starts its own line, not the answer's
    if broken.abandoned:
        err.write(_("talkie: {reason}").format(reason=broken.reason) + "\n")
    else:
        line = _("talkie: {reason} Loading the answer from the thread…")
        err.write(line.format(reason=broken.reason) + "\n")
    err.flush()


def _later(server: str, thread_id: str | None) -> str:
    """Where the answer the server may still finish will be."""
    line = _("  It will be in the thread: talkie connect {server} --thread {thread}")
    return line.format(server=clean_text(server), thread=clean_text(thread_id or ""))


def _connect_command(server: str, thread_id: str | None) -> str:
    """The command that opens the thread in the TUI."""
    thread = f" --thread {clean_text(thread_id)}" if thread_id else ""
    return f"talkie connect {clean_text(server)}{thread}"


def _say_stopped_waiting(err: TextIO, server: str, thread_id: str | None, seconds: int) -> None:
    line = _("talkie: stopped waiting after {seconds} s; the server may still finish the answer.")
    err.write(line.format(seconds=seconds) + "\n" + _later(server, thread_id) + "\n")
    err.flush()


def _print_recovered(session: Session[Any], printer: _TextPrinter) -> None:
    """Print the part of the recovered answer that the broken stream had not shown."""
    turns = session.conversation.turns
    answer = turns[-1] if turns and turns[-1].role == "assistant" else None
    if answer is None:
        return
    text = answer.text
    printed = printer.printed.rstrip("\n")
    if text.startswith(printed):
        printer.write(text[len(printed) :])
    elif text not in printed:  # shown whole already (a hub's reply read from the record)
        printer.line(text)
    for part in answer.parts:
        if not isinstance(part, TextPart):
            printer.show(part, None)


def _has_answer(session: Session[Any]) -> bool:
    turns = session.conversation.turns
    return bool(turns) and turns[-1].role == "assistant" and turns[-1].state == "done"


async def _stop_quietly(backend: Backend, run_id: str | None) -> None:
    """Ask the server to stop the answer (Ctrl+C), without waiting long or minding a refusal."""
    if run_id is None:
        return
    with contextlib.suppress(TalkieError, TimeoutError):
        await wait_within(backend.stop(run_id), timeout=5)
