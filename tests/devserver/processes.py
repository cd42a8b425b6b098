"""A reference server in a child process, as `talkie serve` runs it."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager


@contextmanager
def server_process(
    args: list[str], env: Mapping[str, str] | None = None, *, stderr: bool = False
) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """`python ARGS` printing its URL as its first line: (process, url); killed if left running.

    `stderr`: capture the server's log too (read it once the process has ended).
    """
    process = subprocess.Popen(
        [sys.executable, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE if stderr else None,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        yield process, process.stdout.readline().strip()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
