"""What the broken-server tests of the Minara, hub and agent suites share: running conformance
against many peers at once, and what every outcome must look like."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any

from talkie_tui.conformance.runner import run_conformance
from talkie_tui.conformance.suite import Check
from tests.conformance.test_broken_servers import CONTROL, Outcome


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
