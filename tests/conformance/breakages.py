"""What the broken-server tests of the Minara, hub and agent suites share: running conformance
against many peers at once, and what every outcome must look like."""

from __future__ import annotations

import asyncio
import io
import re
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from talkie_tui.conformance.runner import run_conformance
from talkie_tui.conformance.suite import Check

CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")


@dataclass(frozen=True)
class Outcome:
    """What one conformance run printed and returned."""

    code: int
    output: str

    @property
    def lines(self) -> list[str]:
        """The printed lines."""
        return self.output.splitlines()

    def verdicts(self, verdict: str) -> set[str]:
        """The names of the checks with this verdict."""
        prefix = f"{verdict} "
        return {
            line[len(prefix) :].split(":", 1)[0] for line in self.lines if line.startswith(prefix)
        }


async def conform(url: str, **options: Any) -> Outcome:
    """One conformance run against `url`, its printed lines and exit status."""
    out = io.StringIO()
    code = await run_conformance(url, out=out, **options)
    return Outcome(code, out.getvalue())


def run_all(runs: dict[str, Callable[[], Awaitable[Outcome]]]) -> dict[str, Outcome]:
    """Every run at once (each waits mostly on its peer); their outcomes by name."""

    async def gather() -> dict[str, Outcome]:
        results = await asyncio.gather(*(run() for run in runs.values()))
        return dict(zip(runs, results, strict=True))

    return asyncio.run(gather())


def assert_fails_exactly(
    outcome: Outcome, fails: Iterable[str], checks: Sequence[Check[Any]]
) -> None:
    """The checks `fails` failed and no other; every check reported once, in plain text."""
    expected = frozenset(fails)
    assert outcome.verdicts("FAIL") == expected, outcome.output
    assert outcome.code == (1 if expected else 0), outcome.output
    names = [line.split(":", 1)[0].split(" ", 1)[1] for line in outcome.lines[:-1]]
    assert names == [check.name for check in checks], outcome.output
    assert not CONTROL.search(outcome.output)
    assert f"{len(expected)} failed" in outcome.lines[-1]
