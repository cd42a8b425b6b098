"""A file uploaded to a hub, as the `Attachment` the next message names; a recording made
into a voice note first (`protocol.cuckoo.voice_note`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from talkie_tui.backends.parts.files import Attachment
from talkie_tui.protocol.cuckoo.client import CuckooClient
from talkie_tui.protocol.cuckoo.files import probe_upload
from talkie_tui.protocol.cuckoo.models import Media
from talkie_tui.protocol.cuckoo.voice_note import MAX_SECONDS, VoiceNote

__all__ = ["VOICE_NOTE_SECONDS", "upload", "upload_voice_note"]

VOICE_NOTE_SECONDS = MAX_SECONDS


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


def _attachment(client: CuckooClient, media: Media, note: VoiceNote, name: str) -> Attachment:
    return Attachment(
        key=media.id,
        filename=media.file_name or name,
        media_type=media.mime_type or "audio/wav",
        size=media.byte_size or len(note.wav),
        kind=media.kind or "audio",
        url=client.media_url(media.id),
        duration_ms=media.duration_ms if media.duration_ms is not None else note.duration_ms,
        waveform=media.waveform or note.waveform,
    )


async def upload_voice_note(client: CuckooClient, pcm: bytes, rate: int) -> Attachment:
    """Mono 16-bit PCM at `rate` made into a voice note (off the event loop: its waveform reads
    every sample) and uploaded with its length and waveform."""
    note = await asyncio.to_thread(VoiceNote.from_pcm, pcm, rate)
    name = f"voice-note-{datetime.now().strftime('%Y%m%d-%H%M%S')}.wav"
    media = await client.upload_voice_note(note, name)
    return _attachment(client, media, note, name)
