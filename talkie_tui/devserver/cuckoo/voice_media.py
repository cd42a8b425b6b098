"""What an upload says of a recording (`?duration_ms=`, `?waveform=`), checked as the hub does.

The hub does not decode audio (`cuckoo-agent.md` "Media"): the length and the waveform come
from the recording device, and the hub keeps them as told once they have the shape of the
notes (notes/cuckoo.md §3 limits): a recording lasts at most 10 minutes, and a waveform is up
to 64 values from 0 to 100. They belong to a recording: a waveform only to a file whose bytes
are audio, a length to audio or video; on a picture or another file they are refused, so a
client's mistake shows at once instead of a document drawn as a voice note.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from talkie_tui.devserver.cuckoo.errors import invalid

__all__ = ["MAX_DURATION_MS", "WAVEFORM_MAX", "WAVEFORM_VALUES", "VoiceFacts", "voice_facts"]

MAX_DURATION_MS = 600_000  # ten minutes
WAVEFORM_VALUES = 64
WAVEFORM_MAX = 100


@dataclass(frozen=True, slots=True)
class VoiceFacts:
    """A recording's length and waveform as the uploader gave them (None: not given)."""

    duration_ms: int | None
    waveform: list[int] | None


def _waveform(raw: str | None) -> list[int] | None:
    if not raw:
        return None
    try:
        values = [int(part) for part in raw.split(",")]
    except ValueError:
        values = []
    if (
        not values
        or len(values) > WAVEFORM_VALUES
        or not all(0 <= v <= WAVEFORM_MAX for v in values)
    ):
        raise invalid("invalid_waveform", "`waveform` is up to 64 integers from 0 to 100.")
    return values


def _duration(raw: str | None) -> int | None:
    if not raw:
        return None
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 7 or int(raw) > MAX_DURATION_MS:
        raise invalid("invalid_duration", "`duration_ms` is 0 to 600000 (ten minutes).")
    return int(raw)


def voice_facts(params: Mapping[str, str], kind: str) -> VoiceFacts:
    """The length and waveform of an upload whose bytes are of `kind`; 422 when refused."""
    duration_ms = _duration(params.get("duration_ms"))
    waveform = _waveform(params.get("waveform"))
    if waveform is not None and kind != "audio":
        raise invalid("invalid_waveform", f"Only a recording has a waveform; this is {kind}.")
    if duration_ms is not None and kind not in ("audio", "video"):
        raise invalid("invalid_duration", f"Only a recording or a video lasts; this is {kind}.")
    return VoiceFacts(duration_ms, waveform)
