"""`talkie servers`: the known servers and their sign-in state, importing no more than that."""

from __future__ import annotations

import sys
from typing import TextIO

from talkie_tui.auth.grants import GrantKind
from talkie_tui.auth.store import find_grant
from talkie_tui.config import KnownServers
from talkie_tui.core.exit_codes import ExitCode
from talkie_tui.core.sanitize import clean_text

__all__ = ["list_servers"]


def list_servers(out: TextIO | None = None) -> int:
    """Print the known servers and whether a sign-in is kept for each (to stdout as it is now)."""
    out = out or sys.stdout
    known = KnownServers.load()
    entries = known.all()
    if not entries:
        out.write("No known servers yet: connect with `talkie connect SERVER`.\n")
        return ExitCode.OK
    rows = []
    for entry in entries:
        kind: GrantKind = "bearer" if entry.protocol in ("minara", "cuckoo") else "refresh"
        found = find_grant(entry.server_id, kind=kind)
        state = f"signed in ({found[1].kind})" if found else "not signed in"
        rows.append(
            (clean_text(entry.label), clean_text(entry.address), state, entry.last_used[:16])
        )
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for name, address, state, used in rows:
        out.write(
            f"{name:<{widths[0]}}  {address:<{widths[1]}}  {state:<{widths[2]}}  {used}\n".rstrip()
            + "\n"
        )
    for warning in known.warnings:
        out.write(f"talkie: {warning}\n")
    return ExitCode.OK
