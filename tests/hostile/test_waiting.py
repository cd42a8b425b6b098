"""After a broken stream, `talkie ask` waits for the answer in the thread, visibly and only
while waiting can help (§5 "disconnect is not cancel").

The servers here break the stream mid-answer and then answer GET thread in their own way:
gone (404) or not ours (403), the answer stored a moment later, or never. Streams the client
abandons itself (an event over the cap, a body it cannot decode) are not waited for at all.
"""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import time
import zlib
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from talkie_tui.backends.talkie import session as chat_session
from talkie_tui.commands.ask import ask
from tests.hostile.kit import answer, ask_cli, frames, hostile_app, says
from tests.protocol.conftest import Serve
from tests.stub_server import ENDPOINTS, Streamer, StubServer, error_response, sse_response

pytestmark = pytest.mark.hostile

TALKIE = [sys.executable, "-m", "talkie_tui.cli"]
THREAD = "t_w"
BROKEN = frames(answer(*says("partial"), thread=THREAD)[:3])  # started, text, then nothing
WHOLE = "partial answer, stored whole."


class BreakingServer:
    """The stream breaks after "partial"; GET thread answers `status`, or the stored thread
    (with the answer once `answer_after` seconds have passed since the run began)."""

    def __init__(
        self, *, status: int | None = None, answer_after: float | None = None, run: Any = None
    ) -> None:
        self.status = status
        self.answer_after = answer_after
        self.message_id = "?"
        self.began = 0.0
        self.thread_gets = 0
        self._run_body = run

    async def run(self, request: Request) -> Response:
        body = await request.json()
        self.message_id = body["messages"][0]["id"]
        self.began = time.monotonic()
        if self._run_body is not None:
            return self._run_body()  # type: ignore[no-any-return]
        return sse_response(BROKEN)

    async def thread(self, request: Request) -> Response:
        self.thread_gets += 1
        if self.status is not None:
            code = {403: "forbidden", 404: "not_found"}[self.status]
            return error_response(self.status, code, f"Thread gone ({code})")
        messages = [{"id": self.message_id, "role": "user", "content": "question"}]
        waited = time.monotonic() - self.began
        if self.answer_after is not None and waited >= self.answer_after:
            messages.append({"id": "m_a", "role": "assistant", "content": WHOLE})
        return JSONResponse({"thread": {"id": THREAD}, "messages": messages})

    def app(self) -> Any:
        thread = Route(ENDPOINTS["thread"], self.thread)
        return hostile_app(self.run, routes=[thread])

    def start(self, serve: Serve) -> StubServer:
        return serve(self.app())


@pytest.fixture
def delays_taken(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The delays of RECOVERY_DELAYS the wait went through (each before one look at the
    thread), in order: "at once" is what was waited, not what a clock saw."""
    taken: list[float] = []
    delays = chat_session.RECOVERY_DELAYS

    class Recording:
        def __iter__(self) -> Iterator[float]:
            for delay in delays:
                taken.append(delay)
                yield delay

    monkeypatch.setattr(chat_session, "RECOVERY_DELAYS", Recording())
    return taken


# --- waiting cannot help: stop at once and say why -----------------------------------------


@pytest.mark.parametrize("status", [404, 403])
async def test_a_thread_that_is_gone_or_not_ours_ends_the_wait_at_once(
    serve: Serve, status: int, delays_taken: list[float]
) -> None:
    """The stream breaks, GET thread answers 404/403: exit 1 at once (one look at the thread,
    taken without a delay, and no other), with why."""
    stub = BreakingServer(status=status)
    server = stub.start(serve)

    asked = await ask_cli(server.origin, "question")

    assert asked.code == 1
    assert delays_taken == [0.0]
    assert stub.thread_gets == 1
    assert asked.out == "partial\n"
    assert "closed before the answer was complete" in asked.err
    assert f"The thread cannot be loaded (HTTP {status})" in asked.err
    assert "Thread gone" in asked.err
    assert "talkie connect" not in asked.err  # no "it will be in the thread": it will not


def _huge_event() -> Response:
    head = frames(answer(*says("partial"), thread=THREAD)[:3]).encode()
    huge = b"data: " + b"x" * (1100 << 10) + b"\n\n"
    return StreamingResponse(iter([head, huge]), media_type="text/event-stream")


def _undecodable() -> Response:
    gzip = zlib.compressobj(wbits=31)
    good = gzip.compress(BROKEN.encode()) + gzip.flush(zlib.Z_SYNC_FLUSH)
    streamer = Streamer(pieces=[good, b"\xff" * 64], delay=0.05)
    return StreamingResponse(
        streamer.body(), media_type="text/event-stream", headers={"Content-Encoding": "gzip"}
    )


@pytest.mark.parametrize(
    ("run", "reason"),
    [
        pytest.param(_huge_event, "larger than 1024 kB", id="event over the cap"),
        pytest.param(_undecodable, "could not be decoded", id="undecodable body"),
    ],
)
async def test_a_stream_the_client_abandoned_is_not_waited_for(
    serve: Serve, run: Any, reason: str, delays_taken: list[float]
) -> None:
    """talkie closed the stream itself over what the server sent: no wait, exit 1 at once."""
    stub = BreakingServer(answer_after=0.0, run=run)
    server = stub.start(serve)

    asked = await ask_cli(server.origin, "question")

    assert asked.code == 1
    assert delays_taken == []  # the wait never began
    assert stub.thread_gets == 0
    assert reason in asked.err and "abandoned" in asked.err
    assert "Loading the answer" not in asked.err and "waiting" not in asked.err


async def test_json_output_marks_an_abandoned_stream(serve: Serve) -> None:
    """`--json`: the truncation line says the client abandoned the stream."""
    server = BreakingServer(run=_huge_event).start(serve)
    asked = await ask_cli(server.origin, "question", as_json=True)
    assert asked.code == 1
    last = json.loads(asked.out.rstrip("\n").split("\n")[-1])
    assert last["type"] == "talkie.truncated" and last["abandoned"] is True
    assert "larger than 1024 kB" in last["reason"]


# --- waiting can help: show that it goes on ------------------------------------------------


async def test_waiting_in_a_pipe_prints_a_line_now_and_then(serve: Serve) -> None:
    """stderr not a terminal: a "still waiting" line every interval, then the whole answer."""
    server = BreakingServer(answer_after=0.8).start(serve)
    out, err = io.StringIO(), io.StringIO()

    code = await ask(server.origin, "question", token="t", out=out, err=err, wait_report_every=0.2)

    lines = err.getvalue().splitlines()
    assert code == 0, err.getvalue()
    assert out.getvalue() == WHOLE + "\n"
    assert lines[0].endswith("Loading the answer from the thread…")
    waiting = [line for line in lines if line.startswith("talkie: still waiting for the answer (")]
    assert len(waiting) >= 3, lines
    assert "\r" not in err.getvalue() and "\x1b" not in err.getvalue()


class Terminal(io.StringIO):
    """A stderr that says it is a terminal."""

    def isatty(self) -> bool:
        return True


async def test_waiting_on_a_terminal_counts_seconds_on_one_line(serve: Serve) -> None:
    """stderr a terminal: one line, redrawn with \\r each second, wiped when the answer came."""
    server = BreakingServer(answer_after=1.2).start(serve)
    out, err = io.StringIO(), Terminal()

    code = await ask(server.origin, "question", token="t", out=out, err=err)

    shown = err.getvalue()
    assert code == 0, shown
    line = "\rtalkie: waiting for the answer… {} s (Ctrl+C stops waiting)\x1b[K"
    assert line.format(0) in shown and line.format(1) in shown
    assert shown.endswith("\r\x1b[K")  # the waiting line is gone; the answer follows
    assert "\n" not in shown.split("Loading the answer from the thread…\n", 1)[1]
    assert out.getvalue() == WHOLE + "\n"


async def test_a_wait_that_runs_out_says_where_the_answer_will_be(
    serve: Serve, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The answer never came within the polls: exit 1, why, and which thread to open later."""
    monkeypatch.setattr(chat_session, "RECOVERY_DELAYS", (0.0, 0.01))
    server = BreakingServer().start(serve)
    asked = await ask_cli(server.origin, "question")
    assert asked.code == 1
    assert "The answer is not in the thread yet; the server may still finish it." in asked.err
    assert f"talkie connect {server.origin} --thread {THREAD}" in asked.err


def test_ctrl_c_stops_waiting_not_the_run(serve: Serve) -> None:
    """SIGINT to a real `talkie ask` while it waits: a clear message, exit 1, no cancelRun."""
    server = BreakingServer().start(serve)  # the answer never comes
    child = subprocess.Popen(
        [*TALKIE, "ask", server.origin, "question", "--token", "t"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
        cwd=os.environ["TALKIE_HOME"],
    )
    try:
        assert child.stderr is not None
        first = child.stderr.readline()
        assert first.endswith("Loading the answer from the thread…\n"), first
        time.sleep(0.7)  # a few polls
        child.send_signal(signal.SIGINT)
        out, rest = child.communicate(timeout=10)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 1, rest
    assert out == "partial\n"
    assert "Traceback" not in rest and "cancelled" not in rest, rest
    assert re.match(r"talkie: stopped waiting after \d+ s; the server may still finish", rest), rest
    assert f"talkie connect {server.origin} --thread {THREAD}" in rest
    assert not [path for path in server.paths("POST") if "cancel" in path]
