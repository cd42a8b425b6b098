"""`talkie conformance SERVER`: find the protocol, run its checks, one line per check.

Exit status: 0 when no check failed (skips are allowed), 1 when any check failed. A suite that
cannot start against the server (no manifest, no gateway, no hub) fails its first check with
the reason and skips the rest.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from talkie_tui.conformance.detection import detect, suite_of
from talkie_tui.conformance.output import Reporter
from talkie_tui.conformance.report import Result
from talkie_tui.conformance.suite import Check, Suite, Target, Unreachable, run_check
from talkie_tui.core.exit_codes import ExitCode

__all__ = ["Selection", "run_conformance", "run_suite"]


@dataclass(frozen=True)
class Selection:
    """Which checks run: `--only` ids (all when empty), `--skip` ids, `--quick`."""

    only: frozenset[str] = frozenset()
    skip: frozenset[str] = frozenset()
    quick: bool = False

    def unknown(self, checks: Sequence[Check[Any]]) -> list[str]:
        """The ids given that name no check of the suite."""
        names = {check.name for check in checks}
        return sorted((self.only | self.skip) - names)

    def chosen(self, checks: Sequence[Check[Any]]) -> list[Check[Any]]:
        """The checks `--only` leaves (the others are not reported at all)."""
        return [check for check in checks if not self.only or check.name in self.only]

    def reason_to_skip(self, check: Check[Any]) -> str | None:
        """Why the person asked for this check not to run, if they did."""
        if check.name in self.skip:
            return "skipped on request (--skip)"
        if self.quick and check.slow:
            return f"slow (up to {check.timeout:g} s), skipped with --quick"
        return None


def _skipped(check: Check[Any], reason: str) -> Result:
    return Result(check.name, "SKIP", reason, 0.0, check.title, check.section)


async def run_suite(
    suite: Suite[Any],
    target: Target,
    reporter: Reporter,
    *,
    selection: Selection | None = None,
    timeout_cap: float | None = None,
) -> int:
    """Run `suite`'s selected checks against `target`, reporting each; the exit status."""
    selection = selection or Selection()
    checks = selection.chosen(suite.checks)
    began = time.monotonic()
    origin = target.server
    try:
        async with suite.start(target) as started:
            origin = started.origin
            for check in checks:
                reason = selection.reason_to_skip(check) or started.skip(check)
                if reason is not None:
                    reporter.emit(_skipped(check, reason))
                    continue
                reporter.emit(
                    await run_check(check, started.session, origin, timeout_cap=timeout_cap)
                )
    except Unreachable as unreachable:
        # The first check reported carries the reason, whichever `--only` left first.
        for index, check in enumerate(checks):
            if index == 0:
                reporter.emit(
                    Result(check.name, "FAIL", str(unreachable), 0.0, check.title, check.section)
                )
            else:
                reporter.emit(_skipped(check, f"no usable server (see {checks[0].name})"))
    reporter.finish(origin, time.monotonic() - began)
    return ExitCode.FAILED if reporter.failed else ExitCode.OK


async def run_conformance(
    server: str,
    *,
    protocol: str | None = None,
    token: str | None = None,
    allow_private_http: bool = False,
    out: TextIO | None = None,
    err: TextIO | None = None,
    timeout_cap: float | None = None,
    selection: Selection | None = None,
    as_json: bool = False,
    junit: Path | None = None,
) -> int:
    """Run the checks of `server`'s protocol (found out as `talkie connect` does, unless
    `protocol` forces it) and print a line per check; the exit status.

    `timeout_cap` shortens every check's time budget (tests use it for hanging servers).
    """
    target = Target(server, token, allow_private_http)
    if protocol is None:
        protocol = await detect(target)
    suite = suite_of(protocol)
    reporter = Reporter(suite.protocol, as_json=as_json, junit=junit)
    if out is not None:
        reporter.out = out
    if err is not None:
        reporter.err = err
    return await run_suite(suite, target, reporter, selection=selection, timeout_cap=timeout_cap)
