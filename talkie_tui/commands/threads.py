"""`talkie threads`: the thread list of a server."""

from __future__ import annotations

import contextlib
import sys
from typing import TYPE_CHECKING, TextIO

from talkie_tui.commands.common import connect_or_report, report_error
from talkie_tui.core.errors import TalkieError
from talkie_tui.core.exit_codes import ExitCode
from talkie_tui.core.sanitize import clean_text

if TYPE_CHECKING:
    from talkie_tui.backends.base import ProtocolName

__all__ = ["list_threads"]


async def list_threads(
    server: str,
    *,
    token: str | None = None,
    protocol: ProtocolName | None = None,
    allow_private_http: bool = False,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Print one line per thread: id, last update, channel, title (to `out`, stdout by
    default; errors to `err`, stderr)."""
    out, err = out or sys.stdout, err or sys.stderr
    backend = await connect_or_report(
        server, token, err, protocol=protocol, allow_private_http=allow_private_http
    )
    if isinstance(backend, ExitCode):
        return backend
    async with contextlib.aclosing(backend):
        try:
            threads = await backend.threads()
        except TalkieError as error:
            return report_error(error, server, err, protocol=backend.info.protocol)
    if not threads:
        print("No threads yet.", file=out)
        return ExitCode.OK
    for thread in threads:
        when = thread.updated_at.strftime("%Y-%m-%d %H:%M") if thread.updated_at else "-"
        marker = "voice" if thread.channel == "voice" else "chat"
        print(
            f"{clean_text(thread.id)}\t{when}\t{marker}\t{thread.title or '(untitled)'}", file=out
        )
    return ExitCode.OK
