"""The Minara stream path: events per second, and the time from a dropped socket to the first
resumed event.

1. Throughput. The same number of text events goes through the Minara path — socket frames
   parsed (`parse_frame`), ordered and deduplicated by a `Subscription`, folded by the reducer —
   and through the Talkie core's path (`stream_core.full`: SSE framing, AG-UI decoding, the
   reducer), in one run, so the ratio is meaningful on a noisy machine. Goal: Minara at least
   Talkie / 1.5. A third figure reads the frames over a real loopback WebSocket.
2. Resume. A `MinaraStream` follows a key on a loopback socket; the peer aborts the TCP
   connection (no close frame) and emits the next event at once; the time until that event
   is consumed is measured, many times. Goal: under 1 s.

Prints one JSON line per measurement, then a summary line.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

sys.path.insert(0, str(Path(__file__).parent))

from stream_core import full as talkie_full
from stream_core import stream_bytes

from talkie_tui.backends.minara.reducer import MinaraConversation
from talkie_tui.protocol.minara.frames import parse_frame
from talkie_tui.protocol.minara.stream import MinaraStream
from talkie_tui.protocol.minara.subscription import StreamEvent, Subscription

KEY = "bench"


def frames(count: int) -> list[str]:
    """A turn of `count` text deltas as the gateway frames it: start, the deltas, done."""
    events = [{"type": "start", "data": {"session_id": KEY, "turn_id": "t1"}}]
    events += ({"type": "text_delta", "data": {"text": f"token {i} "}} for i in range(count))
    events.append({"type": "done", "data": {}})
    return [
        json.dumps(
            {"type": "event", "channel": "chat", "key": KEY, "seq": n, "event": e},
            separators=(",", ":"),
        )
        for n, e in enumerate(events, 1)
    ]


class _NoStream:
    """What a Subscription asks of its stream, for a run without a socket."""

    def resubscribe(self, subscription: Subscription) -> None:
        raise AssertionError("no gap in the benchmark")

    async def release(self, subscription: Subscription) -> None:
        return None


async def minara_in_process(raw: list[str]) -> tuple[int, float]:
    """Parse each frame, order it through a Subscription, fold it: the client's path."""
    subscription = Subscription(_NoStream(), "chat", KEY, 0)  # type: ignore[arg-type]
    conversation = MinaraConversation(KEY)
    conversation.add_user_message("u1", "benchmark")
    started = time.perf_counter()
    count = 0
    for text in raw:
        frame = parse_frame(text)
        subscription.put(frame)
    subscription.put_end()
    async for item in subscription:
        if isinstance(item, StreamEvent):
            conversation.apply(item.event)
            count += 1
    elapsed = time.perf_counter() - started
    assert conversation.turns[-1].state == "done", "the turn did not finish"
    return count, elapsed


async def minara_over_socket(raw: list[str]) -> tuple[int, float]:
    """The same frames over a real loopback WebSocket, through MinaraStream."""

    async def handler(connection: ServerConnection) -> None:
        async for message in connection:
            if json.loads(message).get("type") == "subscribe":
                await connection.send(
                    json.dumps(
                        {
                            "type": "subscribed",
                            "channel": "chat",
                            "key": KEY,
                            "firstSeq": 1,
                            "lastSeq": 0,
                        }
                    )
                )
                for text in raw:
                    await connection.send(text)

    async with serve(handler, "127.0.0.1", 0, compression=None) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        stream = MinaraStream(f"ws://127.0.0.1:{port}/v1/stream")
        conversation = MinaraConversation(KEY)
        conversation.add_user_message("u1", "benchmark")
        started = time.perf_counter()
        count = 0
        async for item in stream.subscribe("chat", KEY, 0):
            if isinstance(item, StreamEvent):
                conversation.apply(item.event)
                count += 1
                if item.event["type"] == "done":
                    break
        elapsed = time.perf_counter() - started
        await stream.aclose()
    return count, elapsed


async def resume_times(rounds: int) -> list[float]:
    """Seconds from an aborted socket to the first event consumed after the resume."""
    connections: set[ServerConnection] = set()
    buffer: list[dict[str, Any]] = []

    async def handler(connection: ServerConnection) -> None:
        with contextlib.suppress(ConnectionClosed):
            await serve_one(connection)

    async def serve_one(connection: ServerConnection) -> None:
        async for message in connection:
            frame = json.loads(message)
            if frame.get("type") == "subscribe":
                await connection.send(
                    json.dumps(
                        {
                            "type": "subscribed",
                            "channel": "chat",
                            "key": KEY,
                            "firstSeq": 1,
                            "lastSeq": len(buffer),
                        }
                    )
                )
                for seq in range(frame["fromSeq"] + 1, len(buffer) + 1):
                    await connection.send(_event(seq, buffer[seq - 1]))
                connections.add(connection)
                joined.set()

    async def emit(event: dict[str, Any]) -> None:
        buffer.append(event)
        for connection in list(connections):
            await connection.send(_event(len(buffer), event))

    times: list[float] = []
    joined = asyncio.Event()
    async with serve(handler, "127.0.0.1", 0) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        stream = MinaraStream(f"ws://127.0.0.1:{port}/v1/stream")
        subscription = stream.subscribe("chat", KEY, 0)
        items = aiter(subscription)
        await asyncio.wait_for(joined.wait(), 10)
        for _ in range(rounds):
            await emit({"type": "text_delta", "data": {"text": "x"}})
            item = await anext(items)
            assert isinstance(item, StreamEvent)
            dropped = time.perf_counter()
            for connection in list(connections):
                connection.transport.abort()
            connections.clear()
            await emit({"type": "text_delta", "data": {"text": "y"}})  # while the client is away
            while not isinstance(item := await anext(items), StreamEvent):
                pass
            times.append(time.perf_counter() - dropped)
        await subscription.aclose()
        await stream.aclose()
    return times


def _event(seq: int, event: dict[str, Any]) -> str:
    return json.dumps({"type": "event", "channel": "chat", "key": KEY, "seq": seq, "event": event})


async def main(events: int, rounds: int, resumes: int) -> None:
    raw = frames(events)
    talkie_body = stream_bytes(events)
    best: dict[str, float] = {}
    counts: dict[str, int] = {}
    paths = (
        ("talkie_core", lambda: talkie_full(talkie_body)),
        ("minara_in_process", lambda: minara_in_process(raw)),
        ("minara_over_socket", lambda: minara_over_socket(raw)),
    )
    for round_ in range(1, rounds + 1):
        for name, measure in paths:
            gc.collect()
            count, seconds = await measure()
            best[name] = min(best.get(name, seconds), seconds)
            counts[name] = count
            print(
                json.dumps(
                    {
                        "benchmark": "minara_stream",
                        "path": name,
                        "round": round_,
                        "events": count,
                        "seconds": round(seconds, 4),
                        "events_per_second": round(count / seconds),
                    }
                )
            )
    rates = {name: counts[name] / best[name] for name in best}
    times = await resume_times(resumes)
    print(
        json.dumps(
            {
                "benchmark": "minara_stream",
                "path": "resume",
                "rounds": len(times),
                "median_seconds": round(statistics.median(times), 4),
                "max_seconds": round(max(times), 4),
            }
        )
    )
    ratio = rates["minara_in_process"] / rates["talkie_core"]
    print(
        json.dumps(
            {
                "benchmark": "minara_stream",
                "summary": True,
                "events": events,
                "minara_events_per_second": round(rates["minara_in_process"]),
                "minara_over_socket_events_per_second": round(rates["minara_over_socket"]),
                "talkie_events_per_second": round(rates["talkie_core"]),
                "ratio_to_talkie": round(ratio, 2),
                "target_ratio": round(1 / 1.5, 2),
                "resume_max_seconds": round(max(times), 4),
                "target_resume_seconds": 1.0,
                "meets_targets": ratio >= 1 / 1.5 and max(times) < 1.0,
            }
        )
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--resumes", type=int, default=20)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.events, arguments.rounds, arguments.resumes))
