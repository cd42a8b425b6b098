"""The exit codes of `talkie`: part of the command line's contract (docs/ARCHITECTURE.md).

Scripts and checks test them, so each keeps its number for good. One enum for every layer that
ends a command (the CLI, the commands, the conformance runner, the TUI's crash exit): an IntEnum
is an int, so `sys.exit`, `App.exit(return_code=…)` and comparisons with numbers work as before.
A reader that goes away (`talkie ask … | head`) is not here: talkie then dies of SIGPIPE, which a
shell shows as 141.
"""

from __future__ import annotations

from enum import IntEnum

__all__ = ["ExitCode"]


class ExitCode(IntEnum):
    """What a `talkie` command ended with."""

    OK = 0
    """Done: `ask` got RUN_FINISHED, every conformance check passed (skips allowed), the sign-in
    is kept, the list was printed, the TUI was left normally; `doctor` always ends so."""

    FAILED = 1
    """It did not work: RUN_ERROR or an HTTP or network error (code and message on stderr), a
    conformance check failed, no audio for `devices`, Ctrl+C while `ask` waited for a broken
    stream's answer, the TUI left after an unexpected error; on a system without SIGPIPE, also a
    reader of stdout that went away."""

    USAGE = 2
    """Bad usage: arguments argparse refuses, no command, an empty MESSAGE, or a server that
    offers no sign-in to `talkie login`."""

    SIGN_IN_NEEDED = 3
    """Sign-in is needed: the server refused the credentials (401), or a sign-in could not be
    made or kept (`talkie login SERVER`, or `--token`, is the way on)."""

    INTERRUPTED = 130
    """Stopped by Ctrl+C (128 + SIGINT, as a shell reports it); `ask` cancels its run first."""
