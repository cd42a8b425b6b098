"""The real `talkie` in a pseudo-terminal: what a person sees, keys typed one at a time."""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import signal
import struct
import subprocess
import sys
import termios
import threading
import time

from tests.helpers import TEST_TOKEN

_ANSI = re.compile(rb"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")


class DrainedPty:
    """The master side of a pseudo-terminal, read all the time into memory."""

    def __init__(self, master: int) -> None:
        self.master = master
        self._output = bytearray()
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        # Drained all the time: a full pty would block the program's writes.
        while True:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:
                return
            if not chunk:
                return
            with self._lock:
                self._output += chunk

    def raw(self) -> bytes:
        """Everything written to the terminal, escape sequences included."""
        with self._lock:
            return bytes(self._output)


class PtyTalkie(DrainedPty):
    """`python -m talkie_tui.cli connect URL` in a pseudo-terminal of 120×40.

    `program` replaces `-m talkie_tui.cli` (e.g. `-c CODE` that patches talkie first); the
    command line after it is always `connect URL --token …`.
    """

    def __init__(self, url: str, program: tuple[str, ...] = ("-m", "talkie_tui.cli")) -> None:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"}
        env.pop("TEXTUAL", None)
        self.process = subprocess.Popen(
            [sys.executable, *program, "connect", url, "--token", TEST_TOKEN],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            start_new_session=True,
            close_fds=True,
        )
        os.close(slave)
        super().__init__(master)

    def text(self) -> str:
        """Everything drawn so far, without escape sequences."""
        with self._lock:
            raw = bytes(self._output)
        return _ANSI.sub(b"", raw).decode("utf-8", "replace")

    def wait_for(self, needle: str, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while needle not in self.text():
            if self.process.poll() is not None or time.monotonic() > deadline:
                tail = self.text()[-2000:]
                raise AssertionError(f"{needle!r} never appeared; the terminal shows:\n{tail}")
            time.sleep(0.05)

    def type(self, text: str) -> None:
        for char in text:  # one key at a time, like a person
            os.write(self.master, char.encode())
            time.sleep(0.01)

    def wait_exit(self, timeout: float = 20) -> int:
        """Wait for the program to end by itself; its exit code."""
        code = self.process.wait(timeout=timeout)
        self._reader.join(timeout=5)
        return code

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)
        self._reader.join(timeout=5)
        with contextlib.suppress(OSError):
            os.close(self.master)
