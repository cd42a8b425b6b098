"""What a person may report a hub agent for, and how long the note may be (a Cuckoo hub's rule):
one definition for the wire module, the backend's parts and the UI."""

from __future__ import annotations

from typing import Literal, get_args

__all__ = ["MAX_NOTE_CHARS", "REPORT_REASONS", "ReportReason"]

ReportReason = Literal["spam", "impersonation", "abuse", "other"]
REPORT_REASONS: tuple[ReportReason, ...] = get_args(ReportReason)
MAX_NOTE_CHARS = 1000
"""The longest note a report takes."""
