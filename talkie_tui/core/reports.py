"""What a person may report a hub agent for, how long the note may be (a Cuckoo hub's rule), and
a report as written: one definition for the wire module, the backend's parts and the UI."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

__all__ = ["MAX_NOTE_CHARS", "REPORT_REASONS", "Complaint", "ReportReason"]

ReportReason = Literal["spam", "impersonation", "abuse", "other"]
REPORT_REASONS: tuple[ReportReason, ...] = get_args(ReportReason)
MAX_NOTE_CHARS = 1000
"""The longest note a report takes."""


@dataclass(frozen=True, slots=True)
class Complaint:
    """A report about an agent as the person wrote it: why, an optional note, and the agent's
    message it is about; it goes whole from the report screen to the hub."""

    reason: ReportReason
    note: str | None = None
    message_id: str | None = None
