"""Voice notes in a conversation: an audio attachment that carries its length (a hub's).

A hub's voice note is an audio file with the `duration_ms` and `waveform` its recorder gave
(notes/cuckoo.md §1.3); the transcript draws it as a waveform line with its length, `talkie ask`
as `[voice note 0:07]`. An audio file without a length is a plain file.
"""

from __future__ import annotations

from collections.abc import Iterable

from talkie_tui.chat.turns import AttachmentPart, Part
from talkie_tui.i18n import _

__all__ = ["is_voice_note", "quoted_files", "voice_length"]


def is_voice_note(part: AttachmentPart) -> bool:
    """True for a recording with its length: drawn and played as a voice note."""
    return part.kind == "audio" and part.duration_ms is not None and part.duration_ms >= 0


def voice_length(duration_ms: int) -> str:
    """A note's length as a clock shows it, to the nearest second: `0:07`, `8:44`."""
    seconds = max(0, round(duration_ms / 1000))
    if duration_ms > 0:
        seconds = max(1, seconds)  # a note of a few milliseconds is not "0:00"
    minutes, seconds = divmod(seconds, 60)
    return f"{minutes}:{seconds:02d}"


def quoted_files(parts: Iterable[Part]) -> str:
    """What a reply quotes of a message without words: its voice note ("voice note 0:07") or
    its files' names; "" when it has neither."""
    files = [part for part in parts if isinstance(part, AttachmentPart)]
    notes = [part for part in files if is_voice_note(part)]
    if notes:
        return _("voice note {length}").format(length=voice_length(notes[0].duration_ms or 0))
    return ", ".join(part.filename for part in files)
