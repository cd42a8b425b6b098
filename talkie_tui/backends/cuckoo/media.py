"""A file uploaded to a hub, as the `Attachment` the next message names."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from talkie_tui.backends.parts.files import Attachment
from talkie_tui.protocol.cuckoo.client import CuckooClient
from talkie_tui.protocol.cuckoo.files import probe_upload

__all__ = ["upload"]


async def upload(
    client: CuckooClient, path: Path, *, progress: Callable[[int, int], None] | None = None
) -> Attachment:
    """`POST /v1/client/media`, its kind and size checked first (FileRefused)."""
    probed = await asyncio.to_thread(probe_upload, path)
    media = await client.upload(path, progress=progress, probed=probed)
    # The hub's kinds (image, audio, video, file) are not Minara's: the part keeps the
    # hub's word, which is what the transcript shows.
    kind = media.kind or probed.kind
    return Attachment(
        key=media.id,
        filename=media.file_name or probed.filename,
        media_type=media.mime_type or probed.media_type,
        size=media.byte_size or probed.size,
        kind=kind,
        url=client.media_url(media.id),
    )
