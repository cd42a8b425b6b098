"""A turn's events folded as `minara-stream.md` describes, and an assistant row read back, to
compare the two: the content, and the segments (text, tool, ui_block, interjection) in order."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Folded", "fold", "stored_shape"]

Segment = tuple[str, str]  # (type, the text, the tool or block id, or the interjection)


@dataclass
class Folded:
    """What the events of one turn build: the text, and the segments in order."""

    content: str = ""
    segments: list[Segment] = field(default_factory=list)

    def text(self, piece: str) -> None:
        """Append to the open text segment (open one if the last segment is not text)."""
        self.content += piece
        if self.segments and self.segments[-1][0] == "text":
            self.segments[-1] = ("text", self.segments[-1][1] + piece)
        else:
            self.segments.append(("text", piece))

    def once(self, segment: Segment) -> None:
        """Add a tool or block segment; a second one with an id already seen is a replay."""
        if segment not in self.segments:
            self.segments.append(segment)


def fold(events: Sequence[tuple[int, dict[str, Any]]]) -> Folded:
    """The turn the events build (unknown event types are skipped)."""
    folded = Folded()
    for _, event in events:
        kind, data = event.get("type"), event.get("data")
        if not isinstance(data, dict):
            continue
        if kind == "text_delta" and isinstance(data.get("text"), str):
            folded.text(data["text"])
        elif kind == "tool_call_start":
            folded.once(("tool", str(data.get("id"))))
        elif kind == "ui_block":
            folded.once(("ui_block", str(data.get("id"))))
        elif kind == "user_interjection":
            folded.segments.append(("interjection", str(data.get("message"))))
    return folded


_SEGMENT_VALUE = {"text": "text", "tool": "id", "ui_block": "id", "interjection": "message"}


def stored_shape(row: dict[str, Any]) -> list[Segment] | None:
    """The row's `metadata.segments` in the same shape, or None when it stores none."""
    metadata = row.get("metadata")
    segments = metadata.get("segments") if isinstance(metadata, dict) else None
    if not isinstance(segments, list):
        return None
    shape: list[Segment] = []
    for segment in segments:
        kind = segment.get("type") if isinstance(segment, dict) else None
        if kind in _SEGMENT_VALUE:
            shape.append((str(kind), str(segment.get(_SEGMENT_VALUE[str(kind)]))))
    return shape
