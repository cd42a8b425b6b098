"""The SSE parser (`protocol/events.py iter_event_data`) on arbitrary bytes split anywhere.

Rules (§5): framing is LF, CRLF or CR; how the network splits the bytes never changes the
events; one event over the size cap ends the stream with EventTooLarge, never a bigger event.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from talkie_tui.core.errors import EventTooLarge
from talkie_tui.protocol.talkie.events import iter_event_data
from tests.fuzz.kit import fuzz_settings

pytestmark = pytest.mark.fuzz

TOO_LARGE = "too large"
LOOP: list[asyncio.AbstractEventLoop] = []


@pytest.fixture(scope="module", autouse=True)
def event_loop_for_examples() -> Iterator[None]:
    """One event loop for every example of this module (a new loop per example is slow)."""
    LOOP.append(asyncio.new_event_loop())
    yield
    LOOP.pop().close()


def split(body: bytes, cuts: list[int]) -> list[bytes]:
    """`body` cut at the given offsets (taken modulo its length)."""
    points = sorted({cut % (len(body) + 1) for cut in cuts} | {0, len(body)})
    return [body[a:b] for a, b in itertools.pairwise(points)]


def read(pieces: list[bytes], cap: int = 1024 * 1024) -> list[str] | str:
    """The data of every event in a body arriving as `pieces`, or TOO_LARGE."""

    async def stream() -> AsyncIterator[bytes]:
        for piece in pieces:
            yield piece

    async def collect() -> list[str] | str:
        response = httpx.Response(
            200, headers={"content-type": "text/event-stream"}, content=stream()
        )
        out: list[str] = []
        try:
            async for batch in iter_event_data(response, cap):
                assert batch, "no empty batches"
                out.extend(batch)
        except EventTooLarge:
            return TOO_LARGE
        return out

    return LOOP[0].run_until_complete(collect())


SSE_PIECES = [
    b"data:",
    b"data: ",
    b"data",
    b"\n",
    b"\r",
    b"\r\n",
    b"\n\n",
    b":",
    b": ping\n\n",
    b"event: x",
    b"id: 1",
    b"retry: 5",
    b"\xc3",
    b"\xa9",
    b"\xe2\x80\xa8",  # U+2028, not a line end
    b"\xc2\x85",  # U+0085, not a line end
    b"\x0b\x0c\x1c",
    b'{"type":"RUN_STARTED","threadId":"t","runId":"r"}',
    b"\xff",
    b"\x00",
]
sse_bytes = st.lists(st.one_of(st.binary(max_size=12), st.sampled_from(SSE_PIECES)), max_size=40)


@fuzz_settings(300)
@given(parts=sse_bytes, cuts=st.lists(st.integers(min_value=0), max_size=12))
@example(parts=[b"data: a\r", b"\ndata: b\r\n\r\n"], cuts=[8])
@example(parts=[b"data: \xc3\xa9\n\n"], cuts=[7])
def test_how_the_bytes_are_split_never_changes_the_events(
    parts: list[bytes], cuts: list[int]
) -> None:
    """§5: any bytes, cut at any points: the same events (and never an exception)."""
    body = b"".join(parts)
    assert read(split(body, cuts)) == read([body])


line_text = st.text(
    alphabet=st.characters(blacklist_characters="\r\n", blacklist_categories=["Cs"]), max_size=20
)
# The data of an event is AG-UI JSON (§5); indented JSON spans several `data:` lines.
payloads = st.tuples(st.lists(line_text, max_size=3), st.sampled_from([None, 1])).map(
    lambda value: json.dumps(value[0], indent=value[1], ensure_ascii=False)
)
ENDINGS = ["\n", "\r\n", "\r"]
NOISE = [": comment", ":", "event: message", "id: 42", "retry: 1000", "unknown: field"]


@st.composite
def streams(draw: st.DrawFn) -> tuple[str, list[str]]:
    """An SSE body of events with multi-line data, comments, other fields, any line endings."""
    events = draw(st.lists(payloads, max_size=6))
    body = ""
    for data in events:
        end = draw(st.sampled_from(ENDINGS))
        noise = draw(st.lists(st.sampled_from(NOISE), max_size=2))
        lines = [*noise, *(f"data: {line}" for line in data.split("\n"))]
        # One ending per event: a CR followed by an LF would be one CRLF, not a blank line.
        body += end.join(lines) + end + end
        if draw(st.booleans()):
            body += ": keep-alive" + end + end
    return body, events


@fuzz_settings(200)
@given(stream=streams(), cuts=st.lists(st.integers(min_value=0), max_size=12))
def test_every_event_arrives_whole_whatever_the_framing(
    stream: tuple[str, list[str]], cuts: list[int]
) -> None:
    """§5: LF/CRLF/CR, comments and other fields, any split: exactly the sent data, in order."""
    body, expected = stream
    assert read(split(body.encode(), cuts)) == expected


@fuzz_settings(300)
@given(
    parts=st.lists(
        st.one_of(st.sampled_from(SSE_PIECES), st.binary(max_size=40), st.just(b"x" * 70)),
        max_size=30,
    ),
    cuts=st.lists(st.integers(min_value=0), max_size=8),
)
def test_no_event_over_the_cap_is_ever_delivered(parts: list[bytes], cuts: list[int]) -> None:
    """§5: with a 64-character cap, every delivered event fits it, or the stream is refused."""
    result = read(split(b"".join(parts), cuts), cap=64)
    assert result == TOO_LARGE or all(len(data) <= 64 for data in result)
