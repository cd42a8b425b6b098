"""The benchmark answer's old home: it moved to `talkie_tui.devserver.common.long_answer`
(the Minara gateway's test mode streams it too). Kept for importers not yet moved."""

from __future__ import annotations

from ..common.long_answer import CHARS_PER_TOKEN, digest, end_line, long_answer, tokens_of

__all__ = ["CHARS_PER_TOKEN", "digest", "end_line", "long_answer", "tokens_of"]
