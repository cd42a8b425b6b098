"""Event streams (§5) that break the framing: bad JSON, huge or endless events, cuts, floods.

The client must keep what was good, give up on what is unbounded with a clear error and
bounded memory, and keep up with (or survive) a flood.
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from talkie_tui.backends.talkie import session as chat_session
from talkie_tui.ui.widgets.notice import NoticeView
from tests.hostile.kit import Handler, answer, ask_cli, frames, hostile_app, says
from tests.protocol.conftest import Serve
from tests.stub_server import Streamer, sse_frame
from tests.ui.flows import chat_screen, make_app, until

pytestmark = pytest.mark.hostile

START = {"type": "RUN_STARTED", "threadId": "t_s", "runId": "r_s"}


@pytest.fixture(autouse=True)
def quick_recovery(monkeypatch: pytest.MonkeyPatch) -> None:
    """A broken stream is followed by loading the thread (§5); here, once and at once."""
    monkeypatch.setattr(chat_session, "RECOVERY_DELAYS", (0.0,))


def streaming(streamer: Streamer) -> Handler:
    """A run handler answering with the streamer's body."""

    async def run(request: Request) -> Response:
        await request.body()
        return StreamingResponse(streamer.body(), media_type="text/event-stream")

    return run


async def test_malformed_json_between_good_events_is_skipped(serve: Serve) -> None:
    """§5: frames that are not JSON (or not events) are skipped; the answer is whole."""
    good = answer(*says("one ", "m1"), *says("two", "m2"))
    junk = [
        "data: {not json\n\n",
        'data: {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": \n\n',
        "data: [1, 2, 3]\n\n",
        "data: null\n\n",
        'data: {"type": 42}\n\n',
        "data: \xff\xfe garbage \x00\n\n",
        'event: weird\nid: 7\nretry: abc\ndata: {"type": "NOT_AN_EVENT"}\n\n',
    ]
    body = "".join(
        sse_frame(event) + (junk[i] if i < len(junk) else "") for i, event in enumerate(good)
    )
    server = serve(hostile_app(body))
    asked = await ask_cli(server.origin, "hello")
    assert asked.code == 0, asked.err
    assert asked.out == "one two\n"
    assert asked.unsafe() == []


@pytest.mark.parametrize("shape", ["one line", "many data lines"])
async def test_a_10_mb_event_is_abandoned_with_a_clear_error(serve: Serve, shape: str) -> None:
    """§5: one 10 MB event is refused as soon as it passes the cap; the good part stays."""
    if shape == "one line":
        huge = b"data: " + b"x" * (10 << 20) + b"\n\n"
    else:
        huge = b"data: xxxxxxxxxxxxxxxxxxxxxxxx\n" * ((10 << 20) // 32) + b"\n"
    pieces = [huge[i : i + 65536] for i in range(0, len(huge), 65536)]
    head = frames(answer(*says("before"))[:-1]).encode()
    streamer = Streamer(pieces=[head, *pieces], delay=0.0005)  # notices the client leaving
    server = serve(hostile_app(streaming(streamer)), small_buffers=True)
    asked = await ask_cli(server.origin, "hello")
    assert asked.code == 1
    assert "larger than 1024 kB" in asked.err and "abandoned" in asked.err
    assert asked.out.startswith("before")
    assert streamer.wait_abandoned()
    assert streamer.sent < 6 << 20


async def test_an_endless_event_ends_with_an_error_and_bounded_memory(serve: Serve) -> None:
    """§5: `data: xxxx…` with no newline ever (200 MB offered): the client gives up early."""
    streamer = Streamer(
        pieces=[sse_frame(START).encode(), b"data: "], repeat=b"x" * 65536, limit=200 << 20
    )
    server = serve(hostile_app(streaming(streamer)), small_buffers=True)
    tracemalloc.start()
    try:
        asked = await ask_cli(server.origin, "hello")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert asked.code == 1
    assert "larger than 1024 kB" in asked.err
    assert streamer.wait_abandoned()
    assert streamer.sent < 16 << 20  # early: under 16 MB of the 200 MB offered
    assert peak < 24 << 20, f"peak {peak >> 20} MB"


async def test_a_stream_cut_mid_event_keeps_what_arrived(serve: Serve) -> None:
    """§5: a cut inside an event keeps the whole text, drops the half event, says so."""
    body = frames([START, *says("complete part")[:2]])
    body += '\ndata: {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m_h", "delta": " HALF'
    server = serve(hostile_app(body))
    asked = await ask_cli(server.origin, "hello")
    assert asked.code == 1
    assert asked.out.startswith("complete part") and "HALF" not in asked.out
    assert "closed before the answer was complete" in asked.err


async def test_a_deeply_nested_event_is_skipped_not_fatal(serve: Serve) -> None:
    """§5: one unreadable event (nested 10,000 deep, 20 kB) is skipped; the run goes on."""
    deep = "[" * 10_000 + "]" * 10_000
    body = frames([START, *says("before ", "m1")])
    body += f'data: {{"type": "TEXT_MESSAGE_CONTENT", "x": {deep}}}\n\n'
    body += frames([*says("after", "m2"), {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}])
    server = serve(hostile_app(body))
    asked = await ask_cli(server.origin, "hello")
    assert asked.code == 0, asked.err
    assert asked.out == "before after\n"


async def test_a_long_answer_in_tiny_deltas_costs_linear_time(serve: Serve) -> None:
    """§5: a delta costs the same after 8 MB of answer (no quadratic slow-down), checked by
    the answer being whole rather than by a clock: 50,000 tiny deltas after 8 MB take the
    linear client about a second, where a copy of the answer per delta (400 GB of copying,
    about two minutes here) runs past the run's timeout (`timeout` in pyproject.toml). Events
    per second are a figure of benchmarks/stream_core.py."""
    big = [
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m_h", "delta": "y" * 800_000}
        for _ in range(10)
    ]
    count = 50_000
    tiny = [
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m_h", "delta": "z"} for _ in range(count)
    ]
    body = frames(answer(*says("a")[:1], *big, *tiny, *says("")[2:]))
    server = serve(hostile_app(body))
    asked = await ask_cli(server.origin, "hello")
    assert asked.code == 0, asked.err
    assert asked.out == "y" * 8_000_000 + "z" * count + "\n"


def flood(count: int) -> bytes:
    """A run of `count` one-word text deltas, pre-encoded."""
    head = frames([START, {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}])
    delta = "".join(
        f'data: {{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"w{i % 10} "}}\n\n'
        for i in range(count)
    )
    tail = frames([{"type": "TEXT_MESSAGE_END", "messageId": "m"}, answer()[-1]])
    return (head + delta + tail).encode()


FLOOD = 100_000


async def test_a_flood_of_events_is_kept_up_with(serve: Serve) -> None:
    """§5 throughput: 100,000 events as fast as loopback carries them; all arrive, in order."""
    body = flood(FLOOD)
    chunks = [body[i : i + 65536] for i in range(0, len(body), 65536)]
    streamer = Streamer(pieces=chunks)
    server = serve(hostile_app(streaming(streamer)))
    asked = await ask_cli(server.origin, "hello")
    assert asked.code == 0, asked.err
    expected = "".join(f"w{i % 10} " for i in range(FLOOD))
    assert asked.out == expected + "\n"
    # How many events a second: benchmarks/stream_core.py (the same parse, decode and reduce).


async def test_the_tui_survives_a_flood(serve: Serve, tmp_path: Path) -> None:
    """§5 in the TUI: 10,000 events at once: the answer ends whole and the app responds."""
    count = 10_000
    body = flood(count)
    chunks = [body[i : i + 65536] for i in range(0, len(body), 65536)]
    server = serve(hostile_app(streaming(Streamer(pieces=chunks))))
    app = make_app(server.origin, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        screen.composer.insert("flood me")
        await pilot.press("enter")
        await until(
            pilot,
            lambda: len(screen.session.conversation.turns) == 2 and not screen.answering,
            timeout=60,
        )
        reply = screen.session.conversation.turns[1]
        assert reply.state == "done" and len(reply.text) == 3 * count
        assert not screen.transcript.query(NoticeView)
        screen.composer.insert("still typing")
        await pilot.pause()
        assert screen.composer.text == "still typing"
    # Events per second through the TUI: benchmarks/terminal_stream.py.
    assert json.dumps(reply.text[:6]) == '"w0 w1 "'
