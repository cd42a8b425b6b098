"""`talkie conformance SERVER`: run every check in order and print one line per check.

Exit status: 0 when no check failed (skips are allowed), 1 when any check failed. Conformance
is meant for servers in test mode: a server whose manifest lacks `testMode: true` fails the
`test-mode` check and the checks that need it are skipped, so it cannot pass.
"""

from __future__ import annotations

import asyncio
import sys
import time
from typing import TextIO

import httpx

from talkie_tui.config import development_token
from talkie_tui.core.errors import ServerError, TalkieError
from talkie_tui.core.exit_codes import ExitCode
from talkie_tui.core.tokens import StaticToken
from talkie_tui.protocol.client import TalkieClient, make_http_client
from talkie_tui.protocol.manifest import describe_transport_error

from .checks import CHECKS, Check, Session
from .report import CheckFailed, CheckSkipped, Result, Verdict, summary_line
from .wire import Wire

__all__ = ["run_check", "run_conformance"]

DISCOVERY_TIMEOUT = 15.0


def _describe(error: TalkieError) -> str:
    if isinstance(error, ServerError):
        return f"{error.message} ({error.code}, HTTP {error.status})"
    return error.message


async def run_check(check: Check, session: Session, *, timeout_cap: float | None = None) -> Result:
    """Run one check within its time budget; every way it can end becomes a Result."""
    timeout = check.timeout if timeout_cap is None else min(check.timeout, timeout_cap)
    began = time.monotonic()

    def result(verdict: Verdict, reason: str = "") -> Result:
        return Result(check.name, verdict, reason, time.monotonic() - began)

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
        return result("FAIL", _describe(error))
    except httpx.HTTPError as error:
        return result("FAIL", describe_transport_error(error, session.wire.origin).message)
    except Exception as error:
        # Whatever the server sent must not stop the remaining checks.
        return result("FAIL", f"unexpected {type(error).__name__}: {error}")
    return result("PASS")


async def _discover(server: str, token: str | None, allow_private_http: bool) -> TalkieClient | str:
    """A connected client, or the reason discovery failed."""
    try:
        async with asyncio.timeout(DISCOVERY_TIMEOUT):
            return await TalkieClient.connect(
                server,
                tokens=StaticToken(token) if token else None,
                allow_private_http=allow_private_http,
            )
    except TimeoutError:
        return f"no manifest within {DISCOVERY_TIMEOUT:g} s"
    except TalkieError as error:
        return _describe(error)


async def run_conformance(
    server: str,
    *,
    token: str | None = None,
    allow_private_http: bool = False,
    out: TextIO | None = None,
    timeout_cap: float | None = None,
) -> int:
    """Run the talkie/1 checks against `server`, print a line per check; the exit status.

    `timeout_cap` shortens every check's time budget (tests use it for hanging servers).
    """
    out = out or sys.stdout
    token = development_token(token)
    began = time.monotonic()
    results: list[Result] = []

    def emit(result: Result) -> None:
        results.append(result)
        print(result.line(), file=out, flush=True)

    connected = await _discover(server, token, allow_private_http)
    if isinstance(connected, str):
        emit(Result(CHECKS[0].name, "FAIL", connected))
        for check in CHECKS[1:]:
            emit(Result(check.name, "SKIP", "no usable manifest (see discovery)"))
        origin = server
    else:
        async with connected, make_http_client() as http:
            session = Session(connected, Wire(connected, token, http))
            for check in CHECKS:
                if check.needs_test_mode and not session.manifest.test_mode:
                    emit(Result(check.name, "SKIP", "the server is not in test mode"))
                    continue
                emit(await run_check(check, session, timeout_cap=timeout_cap))
            origin = connected.server.origin
    print(summary_line(origin, results, time.monotonic() - began), file=out, flush=True)
    failed = any(result.verdict == "FAIL" for result in results)
    return ExitCode.FAILED if failed else ExitCode.OK
