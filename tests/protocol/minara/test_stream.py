"""The stream socket over a real WebSocket on 127.0.0.1: subscribe, dedupe, gaps, drops,
resume from the last applied seq, stale buffers, bad frames, pings, 4401."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from talkie_tui.core.errors import TalkieError, UnauthorizedError
from talkie_tui.core.tokens import StaticToken
from talkie_tui.protocol.minara.stream import MinaraStream
from talkie_tui.protocol.minara.subscription import (
    StreamEvent,
    StreamItem,
    StreamLost,
    StreamRefused,
    StreamResumed,
    StreamStale,
    Subscription,
)
from talkie_tui.protocol.net import websocket as socket_loop
from talkie_tui.protocol.net.pacing import WAITED_SECONDS, rest_after
from tests.protocol.minara.socket_peer import SocketPeer, event_frame

KEY = "s1"


@pytest.fixture
async def peer() -> AsyncIterator[SocketPeer]:
    async with SocketPeer(token="tok") as running:
        yield running


def stream_for(peer: SocketPeer, **options: Any) -> MinaraStream:
    return MinaraStream(peer.url, StaticToken("tok"), **options)


async def take(subscription: Subscription, count: int, timeout: float = 5) -> list[StreamItem]:
    """The next `count` items (events, losses, recoveries…)."""
    items: list[StreamItem] = []
    iterator = aiter(subscription)

    async def collect() -> None:
        while len(items) < count:
            items.append(await anext(iterator))

    await asyncio.wait_for(collect(), timeout)
    return items


def seqs(items: list[StreamItem]) -> list[int]:
    return [item.seq for item in items if isinstance(item, StreamEvent)]


async def test_events_arrive_in_order_with_the_token_in_query_and_header(peer: SocketPeer) -> None:
    for n in range(3):
        await peer.emit(KEY, "text_delta", text=str(n))
    stream = stream_for(peer)
    subscription = stream.subscribe("chat", KEY, 0)
    items = await take(subscription, 3)
    assert seqs(items) == [1, 2, 3]
    assert [i.event["data"]["text"] for i in items if isinstance(i, StreamEvent)] == ["0", "1", "2"]
    seen = peer.seen[0]
    assert "token=tok" in seen.path and seen.headers["authorization"] == "Bearer tok"
    assert seen.frames[0] == {"type": "subscribe", "channel": "chat", "key": KEY, "fromSeq": 0}
    await peer.emit(KEY, "done")
    assert seqs(await take(subscription, 1)) == [4]
    await stream.aclose()


async def test_a_duplicate_seq_is_applied_once(peer: SocketPeer) -> None:
    peer.mangle = lambda key, seq, event: [event_frame(key, seq, event)] * 2
    stream = stream_for(peer)
    subscription = stream.subscribe("chat", KEY, 0)
    for n in range(3):
        await peer.emit(KEY, "text_delta", text=str(n))
    await peer.emit(KEY, "done")
    assert seqs(await take(subscription, 4)) == [1, 2, 3, 4]
    await stream.aclose()


async def test_a_gap_resubscribes_from_the_last_applied_seq(peer: SocketPeer) -> None:
    skipped: set[int] = set()

    def lose_seq_2_once(key: str, seq: int, event: dict[str, Any]) -> list[str]:
        if seq == 2 and 2 not in skipped:
            skipped.add(2)
            return []
        return [event_frame(key, seq, event)]

    peer.mangle = lose_seq_2_once
    stream = stream_for(peer)
    subscription = stream.subscribe("chat", KEY, 0)
    for n in range(4):
        await peer.emit(KEY, "text_delta", text=str(n))
    assert seqs(await take(subscription, 4)) == [1, 2, 3, 4]
    froms = [f["fromSeq"] for s in peer.seen for f in s.frames if f["type"] == "subscribe"]
    assert froms == [0, 1]
    await stream.aclose()


async def test_a_real_gap_is_stale_and_the_stream_goes_on(peer: SocketPeer) -> None:
    peer.mangle = lambda key, seq, event: [] if seq == 2 else [event_frame(key, seq, event)]
    stream = stream_for(peer)
    subscription = stream.subscribe("chat", KEY, 0)
    for n in range(3):
        await peer.emit(KEY, "text_delta", text=str(n))
    items = await take(subscription, 3)
    assert isinstance(items[1], StreamStale) and "2–2" in items[1].reason
    assert seqs(items) == [1, 3]
    await stream.aclose()


async def test_a_dropped_socket_is_lost_then_resumed_from_the_last_applied(
    peer: SocketPeer,
) -> None:
    stream = stream_for(peer)
    subscription = stream.subscribe("chat", KEY, 0)
    await peer.emit(KEY, "text_delta", text="a")
    await peer.emit(KEY, "text_delta", text="b")
    assert seqs(await take(subscription, 2)) == [1, 2]
    assert peer.drop() == 1
    lost = await take(subscription, 1)
    assert isinstance(lost[0], StreamLost) and stream.state in ("reconnecting", "open")
    await peer.emit(KEY, "text_delta", text="c")  # while away: replayed on resume
    items = await take(subscription, 2)
    assert isinstance(items[0], StreamResumed)
    assert seqs(items) == [3]
    resubscribe = peer.seen[-1].frames[0]
    assert resubscribe["fromSeq"] == 2 and stream.connects == 2
    await stream.aclose()


async def test_resuming_past_the_buffer_is_stale(peer: SocketPeer) -> None:
    stream = stream_for(peer)
    subscription = stream.subscribe("chat", KEY, 0)
    await peer.emit(KEY, "text_delta", text="a")
    assert seqs(await take(subscription, 1)) == [1]
    peer.drop()
    for n in range(5):
        await peer.emit(KEY, "text_delta", text=str(n))
    peer.first_seq[KEY] = 5  # 2–4 dropped with a finished turn
    items = await take(subscription, 5)
    assert isinstance(items[0], StreamLost)
    assert isinstance(items[1], StreamStale) and items[1].first_seq == 5
    assert isinstance(items[2], StreamResumed)
    assert seqs(items) == [5, 6]
    await stream.aclose()


async def test_subscribing_from_zero_starts_where_the_buffer_starts(peer: SocketPeer) -> None:
    for n in range(6):
        await peer.emit(KEY, "text_delta", text=str(n))
    peer.first_seq[KEY] = 4
    stream = stream_for(peer)
    subscription = stream.subscribe("chat", KEY, 0)
    assert seqs(await take(subscription, 3)) == [4, 5, 6]
    await stream.aclose()


async def test_a_malformed_or_huge_frame_is_refused_and_skipped(peer: SocketPeer) -> None:
    def spoil(key: str, seq: int, event: dict[str, Any]) -> list[str]:
        if seq == 2:
            return ["{not json"]
        if seq == 3:
            return [event_frame(key, seq, {"type": "text_delta", "data": {"text": "x" * 2**20}})]
        return [event_frame(key, seq, event)]

    peer.mangle = spoil
    stream = stream_for(peer)
    subscription = stream.subscribe("chat", KEY, 0)
    for n in range(4):
        await peer.emit(KEY, "text_delta", text=str(n))
    items = await take(subscription, 4)
    assert isinstance(items[1], StreamRefused) and not items[1].too_large
    assert isinstance(items[2], StreamRefused) and items[2].too_large
    assert seqs(items) == [1, 4]  # no resubscribe loop over the refused frames
    froms = [f["fromSeq"] for s in peer.seen for f in s.frames if f["type"] == "subscribe"]
    assert froms == [0]
    await stream.aclose()


async def test_unknown_frames_are_skipped(peer: SocketPeer) -> None:
    peer.mangle = lambda key, seq, event: [
        json.dumps({"type": "presence", "who": "x"}),
        event_frame(key, seq, event),
    ]
    stream = stream_for(peer)
    subscription = stream.subscribe("chat", KEY, 0)
    await peer.emit(KEY, "text_delta", text="a")
    assert seqs(await take(subscription, 1)) == [1]
    await stream.aclose()


async def test_a_4401_close_is_unauthorized() -> None:
    async with SocketPeer(token="right") as peer:
        stream = MinaraStream(peer.url, StaticToken("wrong"))
        subscription = stream.subscribe("chat", KEY, 0)
        with pytest.raises(UnauthorizedError):
            await take(subscription, 1)
        await stream.aclose()


async def test_a_4401_mid_session_is_unauthorized(peer: SocketPeer) -> None:
    stream = stream_for(peer)
    subscription = stream.subscribe("chat", KEY, 0)
    await peer.emit(KEY, "text_delta", text="a")
    assert seqs(await take(subscription, 1)) == [1]
    await peer.close_all(4401, "token revoked")
    with pytest.raises(UnauthorizedError):
        await take(subscription, 1)
    await stream.aclose()


async def test_the_gateways_ping_is_answered_and_own_pings_are_sent(peer: SocketPeer) -> None:
    stream = stream_for(peer, ping_interval=0.05)
    subscription = stream.subscribe("chat", KEY, 0)
    await asyncio.wait_for(peer.subscribed.wait(), 5)
    connection = next(iter(peer.subscribers[KEY]))
    await connection.send('{"type":"ping"}')
    await asyncio.sleep(0.3)
    types = [f["type"] for f in peer.seen[0].frames]
    assert "pong" in types and "ping" in types
    await subscription.aclose()
    await stream.aclose()


async def test_a_silent_socket_is_taken_for_dead_and_reconnected(peer: SocketPeer) -> None:
    stream = stream_for(peer, ping_interval=10, dead_after=0.3)
    subscription = stream.subscribe("chat", KEY, 0)
    await peer.emit(KEY, "text_delta", text="a")
    assert seqs(await take(subscription, 1)) == [1]
    lost = await take(subscription, 1, timeout=3)  # nothing came for 0.3 s
    assert isinstance(lost[0], StreamLost) and "silent" in lost[0].reason
    assert isinstance((await take(subscription, 1))[0], StreamResumed)
    await stream.aclose()


async def test_reconnecting_gives_up_after_its_time_with_a_clear_error() -> None:
    async with SocketPeer() as peer:
        url = peer.url
    stream = MinaraStream(url, None, delays=(0.0, 0.05), give_up_after=0.3)
    subscription = stream.subscribe("chat", KEY, 0)
    first = await take(subscription, 1)
    assert isinstance(first[0], StreamLost)
    with pytest.raises(TalkieError) as caught:
        await take(subscription, 1, timeout=5)
    assert caught.value.retryable and "could not be reached" in caught.value.message
    await stream.aclose()


def test_plain_ws_is_refused_off_this_computer() -> None:
    with pytest.raises(TalkieError, match="wss"):
        MinaraStream("ws://gateway.example.com/v1/stream")
    MinaraStream("wss://gateway.example.com/v1/stream")
    MinaraStream("ws://localhost:8080/v1/stream")


async def test_resume_is_at_once_after_a_drop(peer: SocketPeer) -> None:
    """The first retry after a drop waits for nothing: with any later retry a minute away, the
    resumed delta still comes (within `take`'s deadline, an event's, not a measured time)."""
    stream = stream_for(peer, delays=(0.0, 60.0))
    subscription = stream.subscribe("chat", KEY, 0)
    await peer.emit(KEY, "text_delta", text="a")
    await take(subscription, 1)
    peer.drop()
    await peer.emit(KEY, "text_delta", text="b")
    items = await take(subscription, 3)
    assert seqs(items) == [2]
    await stream.aclose()


async def _consumer_wakes(
    peer: SocketPeer, read_pause: float, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[str], int]:
    """40 deltas, one every 4 ms over a real socket: the texts the subscription yields, and how
    many of the socket's reads had to wait for a frame (a wake per burst: what came while the
    reader rested is read on without waiting). Counted, not timed by the test."""
    waits = 0

    async def counting(waited: float, pause: float) -> None:
        nonlocal waits
        waits += waited > WAITED_SECONDS
        await rest_after(waited, pause)

    monkeypatch.setattr(socket_loop, "rest_after", counting)
    stream = stream_for(peer)
    stream.read_pause = read_pause
    key = f"paced-{read_pause}"
    subscription = stream.subscribe("chat", key, 0)
    await peer.emit(key, "text_delta", text="start")
    texts: list[str] = []

    async def emit_all() -> None:
        for n in range(40):
            await asyncio.sleep(0.004)
            await peer.emit(key, "text_delta", text=str(n))

    async for item in subscription:
        assert isinstance(item, StreamEvent)
        texts.append(item.event["data"]["text"])
        if len(texts) == 1:
            waits = 0  # from here on: the 40 paced deltas
            emitting = asyncio.create_task(emit_all())
        if len(texts) == 41:
            break
    await emitting
    await stream.aclose()
    return texts, waits


async def test_a_rest_after_a_frame_that_waited_reads_the_deltas_in_bursts(
    peer: SocketPeer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a read pause the socket's reader rests after a frame it waited for, and what came
    meanwhile reaches the subscription together: every delta once, in order, in a few bursts."""
    plain, plain_waits = await _consumer_wakes(peer, 0.0, monkeypatch)
    paced, paced_waits = await _consumer_wakes(peer, 0.1, monkeypatch)
    expected = ["start", *map(str, range(40))]
    assert plain == expected and paced == expected
    # Read as they come, about one wait per delta; with a rest of 0.1 s, about three for the
    # 160 ms of deltas (a busy machine only makes them fewer).
    assert paced_waits * 2 < plain_waits, (paced_waits, plain_waits)
