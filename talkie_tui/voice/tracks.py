"""Reading a WebRTC audio track: its audio frames, until the track ends."""

from __future__ import annotations

from collections.abc import AsyncIterator

import av
from aiortc.mediastreams import MediaStreamError, MediaStreamTrack

__all__ = ["audio_frames"]


async def audio_frames(track: MediaStreamTrack) -> AsyncIterator[av.AudioFrame]:
    """The audio frames `track` brings until it ends (any other frame is skipped)."""
    while True:
        try:
            frame = await track.recv()
        except MediaStreamError:
            return
        if isinstance(frame, av.AudioFrame):
            yield frame
