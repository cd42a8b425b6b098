"""The `talkie conformance` command: its arguments turned into a run (or a listing)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn, TextIO

from talkie_tui.conformance.detection import detect, suite_of
from talkie_tui.conformance.runner import Selection, run_conformance
from talkie_tui.conformance.suite import Check, Target
from talkie_tui.core.exit_codes import ExitCode

__all__ = ["conformance", "list_checks"]

AGENT = "agent"


def _ids(values: Sequence[str]) -> frozenset[str]:
    return frozenset(part.strip() for value in values for part in value.split(",") if part.strip())


def list_checks(checks: Sequence[Check[Any]], out: TextIO) -> None:
    """One line per check: its id, `[slow]` when `--quick` skips it, its section and title."""
    width = max((len(check.name) for check in checks), default=0)
    for check in checks:
        slow = " [slow]" if check.slow else ""
        print(f"{check.name:<{width}}  {check.section}: {check.title}{slow}", file=out)


async def conformance(
    args: argparse.Namespace, agent_command: list[str], usage: Callable[[str], NoReturn]
) -> int:
    """Run `talkie conformance` as `args` say; the exit status (usage errors exit 2)."""
    selection = Selection(_ids(args.only), _ids(args.skip), args.quick)
    junit = Path(args.junit) if args.junit else None
    if args.server == AGENT:
        if not agent_command and not args.list:
            usage("conformance agent needs the agent's command after --")
        from talkie_tui.conformance.cuckoo.agent_run import agent_checks, run_agent_conformance

        if args.list:
            list_checks(agent_checks(args.webhook), sys.stdout)
            return ExitCode.OK
        _refuse_unknown(selection, agent_checks(args.webhook), usage)
        return await run_agent_conformance(
            agent_command,
            webhook=args.webhook,
            selection=selection,
            as_json=args.json,
            junit=junit,
        )
    if agent_command:
        usage("a command after -- is only for `talkie conformance agent`")
    if args.server is None and not (args.list and args.protocol):
        usage("conformance needs SERVER (or `agent`), or --list with --protocol")
    protocol = args.protocol
    if protocol is None:
        protocol = await detect(Target(args.server, args.token, args.allow_private_http))
    suite = suite_of(protocol)
    if args.list:
        list_checks(suite.checks, sys.stdout)
        return ExitCode.OK
    _refuse_unknown(selection, suite.checks, usage)
    return await run_conformance(
        args.server,
        protocol=protocol,
        token=args.token,
        allow_private_http=args.allow_private_http,
        selection=selection,
        as_json=args.json,
        junit=junit,
    )


def _refuse_unknown(
    selection: Selection, checks: Sequence[Check[Any]], usage: Callable[[str], NoReturn]
) -> None:
    unknown = selection.unknown(checks)
    if unknown:
        usage(f"no such check: {', '.join(unknown)} (see --list)")
