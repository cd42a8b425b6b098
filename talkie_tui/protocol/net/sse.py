"""Server-sent events off an httpx response: the framing every SSE stream shares.

Apart from `events.py` (AG-UI's events, read from this framing) so that a Minara gateway's
stream, which carries other events, does not import AG-UI.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator

import httpx
from httpx_sse._decoders import SSEDecoder, SSELineDecoder  # pinned < 0.5: its tolerant framing

from talkie_tui.core.errors import EventTooLarge
from talkie_tui.i18n import _
from talkie_tui.protocol.net.pacing import rest_after

__all__ = ["MAX_EVENT_CHARS", "iter_event_data"]

MAX_EVENT_CHARS = 1024 * 1024


async def iter_event_data(
    response: httpx.Response, max_event_chars: int = MAX_EVENT_CHARS, pause: float = 0.0
) -> AsyncIterator[list[str]]:
    """Yield the `data` of the complete server-sent events, a batch per network read.

    Batches keep the per-event cost low; an event over the cap raises EventTooLarge as soon
    as it grows past it, so a huge event is never held whole. With `pause`, a read that had to
    wait for the network is followed by that many seconds of rest, so that the next socket read
    takes every token that came meanwhile in one go (what is already buffered is read on at
    once): a streamed answer costs about a quarter less CPU, and each token is at most `pause`
    later.
    """
    lines = SSELineDecoder()
    decoder = SSEDecoder()
    pending = 0  # characters of the event being assembled
    async for text, waited in _timed_reads(response.aiter_text()):
        batch = []
        for line in lines.decode(text):
            if line:
                pending += len(line)
                if pending > max_event_chars:
                    raise _too_large(max_event_chars)
            else:
                pending = 0
            event = decoder.decode(line)
            if event is not None and event.data:
                batch.append(event.data)
        if lines.buffer and pending + sum(map(len, lines.buffer)) > max_event_chars:
            raise _too_large(max_event_chars)
        if batch:
            yield batch
        await rest_after(waited, pause)
    # At the end of the body, the last event may lack its blank line. Producers that omit it
    # send a whole event; a connection cut mid-event leaves half of one, which is dropped
    # (the stream is then reported as truncated) instead of showing as an unreadable event.
    batch = []
    for line in [*lines.flush(), ""]:
        event = decoder.decode(line)
        if event is not None and event.data and _is_json(event.data):
            batch.append(event.data)
    if batch:
        yield batch


async def _timed_reads(reads: AsyncIterator[str]) -> AsyncIterator[tuple[str, float]]:
    """Each read, and how long it waited (seconds)."""
    while True:
        started = time.perf_counter()
        try:
            text = await anext(reads)
        except StopAsyncIteration:
            return
        yield text, time.perf_counter() - started


def _is_json(data: str) -> bool:
    try:
        json.loads(data)
    except (ValueError, RecursionError):
        return False
    return True


def _too_large(limit: int) -> EventTooLarge:
    return EventTooLarge(
        _("The server sent one event larger than {size} kB; the answer was abandoned.").format(
            size=limit // 1024
        )
    )
