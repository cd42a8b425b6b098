"""Check outcomes and how they are printed: one plain line per check, server text made safe."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Literal

from talkie_tui.core.sanitize import clean_text

__all__ = ["CheckFailed", "CheckSkipped", "Result", "Verdict", "fail_all", "show", "summary_line"]

Verdict = Literal["PASS", "FAIL", "SKIP"]
VERDICTS: tuple[Verdict, ...] = ("PASS", "FAIL", "SKIP")
MAX_REASON_CHARS = 300


class CheckFailed(Exception):
    """The server broke a rule; the message says which, in one sentence."""


class CheckSkipped(Exception):
    """The check cannot be run against this server; the message says why."""


def fail_all(problems: list[str]) -> None:
    """Fail with every problem found, in one reason; pass when there is none."""
    if problems:
        raise CheckFailed("; ".join(problems))


def show(value: object, limit: int = 60) -> str:
    """Server data quoted for a reason: control sequences removed, escaped, truncated."""
    if isinstance(value, str):
        text = clean_text(value)
        cut = text[:limit] + "…" if len(text) > limit else text
        # JSON quoting keeps newlines and tabs visible as \n and \t on the single output line.
        return json.dumps(cut, ensure_ascii=False)
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except ValueError:
        text = repr(value)
    text = clean_text(text)
    return text[:limit] + "…" if len(text) > limit else text


_LINE_BREAKS = re.compile(r"[\n\t\u2028\u2029]+")


def _one_line(text: str) -> str:
    # Only line breaks go: runs of spaces may be what a reason is about.
    text = _LINE_BREAKS.sub(" ", clean_text(text)).strip()
    if len(text) > MAX_REASON_CHARS:
        return text[: MAX_REASON_CHARS - 1] + "…"
    return text


@dataclass(frozen=True)
class Result:
    """The outcome of one check."""

    name: str
    verdict: Verdict
    reason: str = ""
    seconds: float = 0.0
    title: str = ""
    section: str = ""

    def line(self) -> str:
        """`PASS name`, `FAIL name: reason` or `SKIP name: reason` (one plain line)."""
        if self.verdict == "PASS" or not self.reason:
            return f"{self.verdict} {self.name}"
        return f"{self.verdict} {self.name}: {_one_line(self.reason)}"

    def record(self) -> dict[str, object]:
        """The check as one JSON object: id, title, spec section, outcome, detail, duration."""
        return {
            "id": self.name,
            "title": self.title,
            "section": self.section,
            "outcome": self.verdict,
            "detail": clean_text(self.reason),
            "duration": round(self.seconds, 3),
        }


def summary_line(origin: str, results: list[Result], seconds: float, protocol: str) -> str:
    """The closing line: the protocol, the server, `N passed, M failed, K skipped`, the time."""
    counts = {verdict: sum(r.verdict == verdict for r in results) for verdict in VERDICTS}
    verdict = "conformant" if counts["FAIL"] == 0 else "NOT conformant"
    return (
        f"{protocol} conformance of {_one_line(origin)}: {verdict} — {counts['PASS']} passed, "
        f"{counts['FAIL']} failed, {counts['SKIP']} skipped ({seconds:.1f} s)"
    )
