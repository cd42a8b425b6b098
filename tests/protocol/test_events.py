"""§5 event streams: SSE framing, AG-UI decoding, talkie.* events, tolerance and truncation.

Recorded streams from tests/fixtures/streams are played back over real HTTP by the replay
server and read with TalkieClient.run.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import ag_ui.core as agui
import httpx
import pytest

from talkie_tui.core.errors import EventTooLarge
from talkie_tui.protocol.talkie.cards import (
    BadgeBlock,
    FieldsBlock,
    FileBlock,
    HeadingBlock,
    LinkBlock,
    ListBlock,
    TextBlock,
    UnknownBlock,
)
from talkie_tui.protocol.talkie.client import TalkieClient
from talkie_tui.protocol.talkie.events import (
    ActionProposed,
    CardReceived,
    DecodedEvent,
    EventDecoder,
    LinkSuggested,
    MalformedEvent,
    StreamTruncated,
    UsageReported,
    event_to_json,
    iter_event_data,
)
from tests.protocol.replay import kinds, play

T = agui.EventType
TEXT_KINDS = [
    "RUN_STARTED",
    "TEXT_MESSAGE_START",
    "TEXT_MESSAGE_CONTENT",
    "TEXT_MESSAGE_CONTENT",
    "TEXT_MESSAGE_END",
]


def of(events: list[DecodedEvent], cls: type) -> list:
    """The events of one class."""
    return [e for e in events if isinstance(e, cls)]


def deltas(events: list[DecodedEvent]) -> str:
    """All text deltas joined."""
    return "".join(e.delta for e in of(events, agui.TextMessageContentEvent))


# --- framing ---------------------------------------------------------------------------------


@pytest.mark.parametrize("framing", ["", "crlf", "cr", "chunk=3"])
async def test_sse_framing_lf_crlf_cr_and_split_reads_give_the_same_events(
    replay: TalkieClient, framing: str
) -> None:
    """§5: `data:` frames in any line-end style, split anywhere, with comments and other fields."""
    request, events = await play(replay, f"text.sse {framing}")

    assert kinds(events) == [*TEXT_KINDS, "RUN_FINISHED"]
    assert deltas(events) == "Dobrý den, **světe** [b]není markup[/b]"
    assert request.finished and request.truncated is None


async def test_run_started_thread_id_is_authoritative(replay: TalkieClient) -> None:
    """§5: the threadId in RUN_STARTED is adopted by the client."""
    request, _ = await play(replay, "text.sse")
    assert request.thread_id == "t_server"


async def test_multi_line_data_is_joined_and_unicode_separators_are_not_line_ends(
    replay: TalkieClient,
) -> None:
    """AG-UI over SSE: split lines on CR/LF only (never U+2028 or NEL); join `data:` lines."""
    _, events = await play(replay, "multiline_data.sse")

    assert kinds(events) == [
        "RUN_STARTED",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_CONTENT",
        "RUN_FINISHED",
    ]
    assert deltas(events) == (
        "split over two data lines – line\u2028separator andnext line kept as data"
    )


async def test_last_event_without_a_blank_line_still_counts(replay: TalkieClient) -> None:
    """A producer that omits the final blank line still ends its run properly."""
    request, events = await play(replay, "no_final_blank_line.sse")
    assert kinds(events)[-1] == "RUN_FINISHED"
    assert request.truncated is None


# --- decoding and tolerance -----------------------------------------------------------------


async def test_unknown_event_types_and_custom_names_are_ignored(replay: TalkieClient) -> None:
    """§5 MUST: unknown event types and unknown CUSTOM names are skipped, the run goes on."""
    request, events = await play(replay, "unknown.sse")

    assert kinds(events) == [
        "RUN_STARTED",
        "STATE_SNAPSHOT",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]
    assert not of(events, MalformedEvent)
    assert request.finished


async def test_malformed_events_between_good_ones_do_not_end_the_stream(
    replay: TalkieClient,
) -> None:
    """One unreadable frame becomes a MalformedEvent; the events after it still arrive."""
    request, events = await play(replay, "malformed.sse")

    assert deltas(events) == "one two"
    bad = of(events, MalformedEvent)
    assert [(e.type, e.reason) for e in bad[:3]] == [
        ("?", "not JSON"),
        ("?", "not an AG-UI event (no 'type')"),
        ("?", "not an AG-UI event (no 'type')"),
    ]
    assert bad[3].type == "TEXT_MESSAGE_CONTENT" and "messageId" in bad[3].reason
    assert [e.reason for e in bad[4:]] == [
        "the first chunk has no id",
        "the first chunk has no tool name",
    ]
    assert request.finished


async def test_float_timestamps_and_null_fields_are_tolerated(replay: TalkieClient) -> None:
    """AG-UI pitfalls: float timestamps dropped, null = absent, empty deltas, unknown outcome."""
    request, events = await play(replay, "sloppy.sse")

    assert deltas(events) == "float and nulls"
    finished = events[-1]
    assert isinstance(finished, agui.RunFinishedEvent)
    assert finished.outcome is None and finished.timestamp is None
    tool = of(events, agui.ToolCallStartEvent)[0]
    assert tool.metadata == {"label": "Working…"} and tool.parent_message_id is None
    assert request.finished


async def test_null_delta_is_reported_as_malformed_not_fatal(replay: TalkieClient) -> None:
    """A CONTENT event whose delta is null cannot be read; it is reported and skipped."""
    _, events = await play(replay, "sloppy.sse")
    assert [e.type for e in of(events, MalformedEvent)] == ["TEXT_MESSAGE_CONTENT"]


async def test_chunk_events_expand_to_start_content_end(replay: TalkieClient) -> None:
    """AG-UI chunks: TEXT_MESSAGE_CHUNK / TOOL_CALL_CHUNK open, continue and close items."""
    _, events = await play(replay, "chunks.sse")

    summary = [
        (e.type.value, getattr(e, "message_id", None) or getattr(e, "tool_call_id", None))
        for e in events
        if isinstance(e, agui.BaseEvent) and e.type not in (T.RUN_STARTED, T.RUN_FINISHED)
    ]
    assert summary == [
        ("TEXT_MESSAGE_START", "m_1"),
        ("TEXT_MESSAGE_CONTENT", "m_1"),
        ("TEXT_MESSAGE_CONTENT", "m_1"),
        ("TEXT_MESSAGE_CONTENT", "m_1"),
        ("TEXT_MESSAGE_END", "m_1"),
        ("TOOL_CALL_START", "call_1"),
        ("TOOL_CALL_ARGS", "call_1"),
        ("TOOL_CALL_ARGS", "call_1"),
        ("TOOL_CALL_END", "call_1"),
        ("TEXT_MESSAGE_START", "m_2"),
        ("TEXT_MESSAGE_CONTENT", "m_2"),
        ("TEXT_MESSAGE_END", "m_2"),
        ("TEXT_MESSAGE_START", "m_3"),
        ("TEXT_MESSAGE_END", "m_3"),
    ]
    assert deltas(events) == "Hello!Done."
    tool = of(events, agui.ToolCallStartEvent)[0]
    assert (tool.tool_call_name, tool.metadata) == ("lookup", {"label": "Looking up…"})
    assert "".join(e.delta for e in of(events, agui.ToolCallArgsEvent)) == '{"a":1}'


@pytest.mark.parametrize(
    ("closer", "closes"),
    [
        ({"type": "CUSTOM", "name": "x", "value": 1}, True),
        ({"type": "STEP_STARTED", "stepName": "s"}, True),
        ({"type": "RAW", "event": {}}, False),
        ({"type": "REASONING_ENCRYPTED_VALUE", "subtype": "message", "entityId": "e"}, False),
        (
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "x", "subagentRunId": "s"},
            False,
        ),
    ],
)
def test_chunk_stream_is_closed_by_events_of_its_lane_only(closer: dict, closes: bool) -> None:
    """AG-UI chunks: same-lane TEXT/TOOL/STATE/CUSTOM/STEP events close the open chunk stream."""
    decoder = EventDecoder()
    decoder.decode(json.dumps({"type": "TEXT_MESSAGE_CHUNK", "messageId": "m_1", "delta": "a"}))

    out = decoder.decode(json.dumps(closer))

    ended = [e for e in out if isinstance(e, agui.TextMessageEndEvent)]
    assert bool(ended) is bool(closes)
    assert [e.message_id for e in decoder.finish()] == ([] if closes else ["m_1"])


# --- sequencing -----------------------------------------------------------------------------


async def test_events_after_run_finished_are_ignored(replay: TalkieClient) -> None:
    """AG-UI: after RUN_FINISHED only RUN_ERROR or a new RUN_STARTED counts."""
    request, events = await play(replay, "sequencing.sse")

    assert kinds(events)[-1] == "RUN_FINISHED"
    assert "IGNORED" not in deltas(events)
    assert not of(events, CardReceived)
    assert request.finished and request.truncated is None


async def test_run_error_after_run_finished_is_still_reported(replay: TalkieClient) -> None:
    """A late RUN_ERROR after RUN_FINISHED is delivered (and nothing else)."""
    request, events = await play(replay, "late_error.sse")

    assert kinds(events) == ["RUN_STARTED", "TEXT_MESSAGE_CONTENT", "RUN_FINISHED", "RUN_ERROR"]
    assert request.error is not None and request.error.message == "Storing the answer failed."


async def test_a_second_run_in_the_same_stream_is_delivered(replay: TalkieClient) -> None:
    """One response may carry several runs; events between them are ignored."""
    _, events = await play(replay, "two_runs.sse")

    assert kinds(events) == ["RUN_STARTED", "TEXT_MESSAGE_CONTENT", "RUN_FINISHED"] * 2
    assert deltas(events) == "First run.Second run."


async def test_run_error_ends_the_run_without_truncation(replay: TalkieClient) -> None:
    """§5: RUN_ERROR is the last event on failure, with code and metadata.retryable."""
    request, events = await play(replay, "run_error.sse")

    error = events[-1]
    assert isinstance(error, agui.RunErrorEvent)
    assert (error.code, error.metadata) == ("upstream_unavailable", {"retryable": True})
    assert request.error is error and request.truncated is None and not request.finished


async def test_stream_without_run_finished_ends_with_stream_truncated(
    replay: TalkieClient,
) -> None:
    """A dropped stream is reported: open chunk items are closed, then StreamTruncated."""
    request, events = await play(replay, "truncated.sse")

    assert kinds(events)[-2:] == ["TEXT_MESSAGE_END", "StreamTruncated"]
    assert request.truncated and not request.finished
    assert events[-1] == StreamTruncated(request.truncated)


async def test_stream_cut_in_the_middle_of_an_event_is_truncated(replay: TalkieClient) -> None:
    """A cut mid-event keeps the complete events and reports the truncation."""
    request, events = await play(replay, "cut_mid_event.sse")

    assert deltas(events) == "Complete event."
    assert isinstance(events[-1], StreamTruncated)
    assert request.truncated and not request.finished


# --- talkie.* custom events -----------------------------------------------------------------


async def test_talkie_card_is_parsed_and_unknown_blocks_fall_back(replay: TalkieClient) -> None:
    """§6: every block type parses; unknown or broken blocks become UnknownBlock."""
    _, events = await play(replay, "card.sse")

    card = of(events, CardReceived)[0].card
    assert (card.id, card.title, card.subtitle, card.url) == (
        "c1",
        "Alfa s.r.o.",
        "Klient · Brno",
        "/?record=abc",
    )
    assert [type(b) for b in card.blocks] == [
        HeadingBlock,
        TextBlock,
        BadgeBlock,
        BadgeBlock,
        FieldsBlock,
        ListBlock,
        LinkBlock,
        FileBlock,
        UnknownBlock,
        UnknownBlock,
    ]
    assert card.blocks[3].tone == "neutral"
    assert card.blocks[4].fields[1].value == "42"
    assert [b.type for b in card.blocks if isinstance(b, UnknownBlock)] == ["chart", "fields"]
    assert card.has_unknown_blocks and card.label == "Karta klienta Alfa s.r.o."


async def test_card_without_fallback_text_is_malformed(replay: TalkieClient) -> None:
    """§6: fallbackText is REQUIRED."""
    _, events = await play(replay, "card.sse")

    bad = of(events, MalformedEvent)
    assert len(bad) == 1 and bad[0].type == "talkie.card" and "fallbackText" in bad[0].reason


async def test_talkie_action_events(replay: TalkieClient) -> None:
    """§8: actions parse with their confirm policy; unknown risk means high; missing fields bad."""
    _, events = await play(replay, "action.sse")

    actions = [e.action for e in of(events, ActionProposed)]
    assert [(a.id, a.status) for a in actions] == [
        ("a_1", "pending"),
        ("a_2", "pending"),
        ("a_1", "running"),
    ]
    first = actions[0]
    assert first.confirm.methods == ["button", "voice"]
    assert first.confirm.voice is not None and first.confirm.voice.keyword == "odeslat"
    assert first.is_open and first.expires_at is not None
    assert actions[1].risk_level == "high"
    assert actions[2].undo_until is not None
    assert [e.type for e in of(events, MalformedEvent)] == ["talkie.action"]


async def test_talkie_open_and_usage_events(replay: TalkieClient) -> None:
    """§5: talkie.open {url,label} and talkie.usage {usage:[...]}."""
    _, events = await play(replay, "link_usage.sse")

    link = of(events, LinkSuggested)[0].link
    assert (link.url, link.label) == ("https://crm.example.com/deal/7", "Open the deal")
    usage = of(events, UsageReported)[0].usage
    assert [(m.label, m.used, m.limit, m.unit) for m in usage] == [
        ("Tokens today", 12000, 400000, "tokens"),
        ("Voice today", 6, 60, "minutes"),
    ]
    assert [(e.type, e.reason) for e in of(events, MalformedEvent)] == [
        ("talkie.usage", "usage is not a list"),
        ("talkie.open", "url: Field required"),
    ]


async def test_event_to_json_writes_wire_form_for_every_kind(replay: TalkieClient) -> None:
    """`talkie ask --json`: one JSON object per event, talkie events in their CUSTOM form."""
    collected: list[DecodedEvent] = []
    for name in ("card.sse", "action.sse", "link_usage.sse", "truncated.sse"):
        collected += (await play(replay, name))[1]

    lines = [json.loads(event_to_json(e)) for e in collected]

    customs = {line["name"] for line in lines if line["type"] == "CUSTOM"}
    assert customs == {"talkie.card", "talkie.action", "talkie.open", "talkie.usage"}
    card = next(line["value"] for line in lines if line.get("name") == "talkie.card")
    assert card["fallbackText"] == "Alfa s.r.o. – klient v Brně, aktivní"
    assert {"talkie.malformed", "talkie.truncated"} <= {line["type"] for line in lines}
    started = next(line for line in lines if line["type"] == "RUN_STARTED")
    assert started == {"type": "RUN_STARTED", "threadId": "t_1", "runId": "r_1"}


# --- size cap -------------------------------------------------------------------------------


def _response(*pieces: str) -> httpx.Response:
    async def body() -> AsyncIterator[bytes]:
        for piece in pieces:
            yield piece.encode()

    return httpx.Response(200, content=body(), headers={"content-type": "text/event-stream"})


async def _collect(response: httpx.Response, cap: int) -> list[str]:
    return [data async for batch in iter_event_data(response, cap) for data in batch]


@pytest.mark.parametrize(
    "pieces",
    [
        pytest.param(["data: " + "x" * 200], id="one unterminated line"),
        pytest.param(["data: " + "x" * 60 + "\n"] * 4 + ["\n"], id="many lines of one event"),
        pytest.param(["data: " + "x" * 50 for _ in range(5)], id="one line over many reads"),
    ],
)
async def test_an_event_over_the_cap_is_refused(pieces: list[str]) -> None:
    """One event larger than the cap raises EventTooLarge before it is kept whole."""
    with pytest.raises(EventTooLarge):
        await _collect(_response(*pieces), cap=100)


async def test_many_small_events_are_not_added_up_against_the_cap() -> None:
    """The cap is per event: a long stream of small events is fine."""
    frames = [f'data: {{"n":{i:03}}}\n\n' for i in range(50)]
    assert len(await _collect(_response(*frames), cap=100)) == 50


async def _arrivals(pause: float) -> tuple[list[str], int]:
    """The events read from a real socket where one comes every 4 ms (40 in all), and in how
    many batches (network reads) they reached the reader."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n"
        writer.write(head.encode())
        for n in range(40):
            writer.write(f'data: {{"n":{n}}}\n\n'.encode())
            await writer.drain()
            await asyncio.sleep(0.004)
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    events: list[str] = []
    batches = 0
    try:
        async with (
            httpx.AsyncClient(trust_env=False) as http,
            http.stream("GET", f"http://127.0.0.1:{port}/") as response,
        ):
            async for batch in iter_event_data(response, pause=pause):
                events.extend(batch)
                batches += 1
    finally:
        server.close()
        await server.wait_closed()
    return events, batches


async def test_a_rest_after_a_read_that_waited_reads_the_tokens_in_bursts() -> None:
    """With a pause, the reader rests after waiting and then drains what came meanwhile:
    every event, in order, in a few bursts instead of one wait per event."""
    plain_events, plain_batches = await _arrivals(0.0)
    paced_events, paced_batches = await _arrivals(0.1)
    expected = [f'{{"n":{n}}}' for n in range(40)]
    assert plain_events == expected and paced_events == expected
    # Counted in reads, not timed: read as they come, the 40 events take about one read each;
    # with a rest of 0.1 s after a read that waited, the 160 ms of events take about three. A
    # busy machine only makes the paced reads fewer. The CPU it saves: benchmarks/stream_core.py.
    assert paced_batches * 2 < plain_batches, (paced_batches, plain_batches)
