"""Events per second through SSE parse + decode + reduce, against bare httpx-sse iteration.

Both paths read the same bytes from the same in-process transport in one run, so the ratio
is meaningful on a noisy machine. Prints one JSON line per measurement, then a summary line.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import time
from collections.abc import AsyncIterator

import httpx
import httpx_sse

from talkie_tui.backends.talkie.reducer import TalkieConversation as Conversation
from talkie_tui.protocol.talkie.client import RunRequest, TalkieClient

ORIGIN = "https://bench.talkie.test"
CHUNK = 64 * 1024
MANIFEST = {
    "spec": "talkie/1",
    "issuer": ORIGIN,
    "serverId": "bench",
    "name": "Benchmark",
    "auth": {"token": {}},
    "endpoints": {"run": "/run"},
}


def stream_bytes(count: int) -> bytes:
    """A run with `count` TEXT_MESSAGE_CONTENT events, framed as a real server frames them."""
    frames = [
        '{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}',
        '{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}',
    ]
    frames += (
        f'{{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"token {i} "}}'
        for i in range(count)
    )
    frames += [
        '{"type":"TEXT_MESSAGE_END","messageId":"m1"}',
        '{"type":"RUN_FINISHED","threadId":"t1","runId":"r1"}',
    ]
    return "".join(f"data: {frame}\n\n" for frame in frames).encode()


def transport(body: bytes) -> httpx.MockTransport:
    """Serves the manifest and the run stream in network-sized chunks."""

    async def chunks() -> AsyncIterator[bytes]:
        for start in range(0, len(body), CHUNK):
            yield body[start : start + CHUNK]

    def handle(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/.well-known/talkie.json":
            return httpx.Response(200, json=MANIFEST)
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=chunks())

    return httpx.MockTransport(handle)


async def bare(body: bytes) -> tuple[int, float]:
    """Iterate the events with httpx-sse and nothing else."""
    async with httpx.AsyncClient(transport=transport(body)) as http:
        started = time.perf_counter()
        count = 0
        async with httpx_sse.aconnect_sse(http, "POST", f"{ORIGIN}/run") as source:
            async for _ in source.aiter_sse():
                count += 1
        return count, time.perf_counter() - started


async def full(body: bytes) -> tuple[int, float]:
    """The client's real path: TalkieClient.run (framing, size cap, decode) + the reducer."""
    async with httpx.AsyncClient(transport=transport(body)) as http:
        client = await TalkieClient.connect(ORIGIN, http=http)
        conversation = Conversation()
        started = time.perf_counter()
        count = 0
        async for event in client.run(RunRequest("benchmark")):
            conversation.apply(event)
            count += 1
        elapsed = time.perf_counter() - started
        assert conversation.turns[-1].state == "done", "the run did not finish"
        return count, elapsed


async def main(events: int, rounds: int) -> None:
    body = stream_bytes(events)
    best: dict[str, float] = {}
    for round_ in range(1, rounds + 1):
        for name, measure in (("bare_httpx_sse", bare), ("parse_decode_reduce", full)):
            gc.collect()
            count, seconds = await measure(body)
            best[name] = min(best.get(name, seconds), seconds)
            print(
                json.dumps(
                    {
                        "benchmark": "stream_core",
                        "path": name,
                        "round": round_,
                        "events": count,
                        "seconds": round(seconds, 4),
                        "events_per_second": round(count / seconds),
                    }
                )
            )
    ratio = best["parse_decode_reduce"] / best["bare_httpx_sse"]
    rate = (events + 4) / best["parse_decode_reduce"]
    print(
        json.dumps(
            {
                "benchmark": "stream_core",
                "summary": True,
                "events": events,
                "bytes": len(body),
                "best_events_per_second": round(rate),
                "bare_events_per_second": round((events + 4) / best["bare_httpx_sse"]),
                "ratio_to_bare": round(ratio, 2),
                "target_events_per_second": 50_000,
                "target_ratio": 3.0,
                "meets_targets": rate >= 50_000 and ratio <= 3.0,
            }
        )
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.events, arguments.rounds))
