"""What every protocol's checks share: a check, a registry of them, a suite, and running one.

A check is an async function of its protocol's session. It returns to pass, raises
`CheckFailed` with one sentence naming the broken rule (in the spec's words), or
`CheckSkipped` when it cannot be run against this server.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import httpx

from talkie_tui.conformance.report import CheckFailed, CheckSkipped, Result, Verdict
from talkie_tui.core.errors import ServerError, TalkieError
from talkie_tui.protocol.net.failures import describe_transport_error

__all__ = [
    "Check",
    "Registry",
    "Started",
    "Suite",
    "Target",
    "Unreachable",
    "describe_error",
    "run_check",
]

S = TypeVar("S")


@dataclass(frozen=True)
class Check(Generic[S]):
    """One named check: what it runs, its time budget, and what the listing says of it."""

    name: str
    run: Callable[[S], Awaitable[None]]
    timeout: float
    title: str = ""
    section: str = ""
    slow: bool = False  # takes long (a redelivery, a paced stream): `--quick` skips it
    needs_test_mode: bool = False  # talkie/1: sends `talkie-test:` messages or decides actions


class Registry(Generic[S]):
    """The checks of one protocol, in the order they are registered (and run)."""

    def __init__(self) -> None:
        self.checks: list[Check[S]] = []

    def check(
        self,
        name: str,
        *,
        section: str,
        timeout: float = 15.0,
        slow: bool = False,
        needs_test_mode: bool = False,
    ) -> Callable[[Callable[[S], Awaitable[None]]], Callable[[S], Awaitable[None]]]:
        """Register a check under `name`; its title is the first line of its docstring."""

        def register(function: Callable[[S], Awaitable[None]]) -> Callable[[S], Awaitable[None]]:
            title = (function.__doc__ or name).strip().splitlines()[0]
            self.checks.append(
                Check(name, function, timeout, title, section, slow, needs_test_mode)
            )
            return function

        return register

    def in_order(self, runs: Sequence[Callable[[S], Awaitable[None]]]) -> list[Check[S]]:
        """The checks in the order of `runs`, which names each registered check once."""
        by_run = {check.run: check for check in self.checks}
        if len(runs) != len(by_run) or set(runs) != set(by_run):
            raise ValueError("the run order must name each registered check exactly once")
        return [by_run[run] for run in runs]


@dataclass(frozen=True)
class Target:
    """What the command line says about the server to check."""

    server: str
    token: str | None = None
    allow_private_http: bool = False


class Unreachable(Exception):
    """The suite could not start against the server; the message says why."""


@dataclass
class Started(Generic[S]):
    """A suite's session once it could start: the session, the origin, and per-check skips."""

    session: S
    origin: str
    skip: Callable[[Check[S]], str | None] = field(default=lambda check: None)


@dataclass(frozen=True)
class Suite(Generic[S]):
    """One protocol's checks and how to start a session against a server for them."""

    protocol: str  # as the summary line names it: "talkie/1", "minara", "cuckoo hub"
    checks: Sequence[Check[S]]
    start: Callable[[Target], AbstractAsyncContextManager[Started[S]]]


def describe_error(error: TalkieError) -> str:
    """A TalkieError as a reason: the message, and the code and status of a server's error."""
    if isinstance(error, ServerError):
        return f"{error.message} ({error.code}, HTTP {error.status})"
    return error.message


async def run_check(
    check: Check[S], session: S, origin: str, *, timeout_cap: float | None = None
) -> Result:
    """Run one check within its time budget; every way it can end becomes a Result."""
    timeout = check.timeout if timeout_cap is None else min(check.timeout, timeout_cap)
    began = time.monotonic()

    def result(verdict: Verdict, reason: str = "") -> Result:
        return Result(
            check.name, verdict, reason, time.monotonic() - began, check.title, check.section
        )

    try:
        async with asyncio.timeout(timeout):
            await check.run(session)
    except CheckFailed as failure:
        return result("FAIL", str(failure))
    except CheckSkipped as skip:
        return result("SKIP", str(skip))
    except TimeoutError:
        return result("FAIL", f"no result within {timeout:g} s (the server hung or is too slow)")
    except TalkieError as error:
        return result("FAIL", describe_error(error))
    except httpx.HTTPError as error:
        return result("FAIL", describe_transport_error(error, origin).message)
    except Exception as error:
        # Whatever the server sent must not stop the remaining checks.
        return result("FAIL", f"unexpected {type(error).__name__}: {error}")
    return result("PASS")
