"""What native libraries print, kept off the screen while the TUI owns the terminal.

ALSA (under PortAudio), libav (under aiortc) and other C libraries write their warnings
straight to file descriptor 2, past Python: `ALSA lib pcm.c:8570:(snd_pcm_recover) underrun
occurred` in the middle of the message box. Textual draws the screen on that same
descriptor (its Linux driver writes to `sys.__stderr__`), so fd 2 cannot simply be closed.

`native_stderr_to_log()`, around the app's run, separates the two:

- the terminal gets a new descriptor (a `dup` of fd 2), and `sys.__stderr__` (and
  `sys.stderr`, when it was the same stream) becomes a stream on it: Textual draws there, and
  what Python prints still reaches the terminal — Textual's exit message, talkie's one line
  after a crash, a traceback;
- fd 2 becomes the write end of a pipe. A daemon thread reads it line by line and logs each
  line (cleaned of control characters, at most `MAX_LINE` characters, at most
  `MAX_LINES_PER_SECOND`) to the `talkie_tui.native` logger, which only `--debug` writes
  anywhere; otherwise the lines are read and dropped. The thread reads all the time, so a
  library that writes a lot never blocks on a full pipe. Child processes started meanwhile
  (a browser) inherit the pipe as their stderr, and so stay off the screen too.
- on exit, fd 2 and the streams are put back first, then the thread takes what is left in
  the pipe and stops. It does not wait for the pipe's end: a child may still hold it open.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import selectors
import sys
import threading
import time
from collections.abc import Iterator
from typing import TextIO

from talkie_tui.core.sanitize import clean_text

__all__ = [
    "LOGGER",
    "MAX_LINE",
    "MAX_LINES_PER_SECOND",
    "NativeStderrDrain",
    "native_stderr_to_log",
]

LOGGER = logging.getLogger("talkie_tui.native")
MAX_LINE = 1000
"""Characters kept of one line; the rest is replaced by "…"."""
MAX_LINES_PER_SECOND = 50
"""Lines logged in one second; the others are counted, and the count is logged."""
_STDERR = 2
_CHUNK = 65536
_PIPE_SIZE = 1 << 20  # room for a burst while the reader waits for its turn
_PENDING = 4 * MAX_LINE  # bytes without a newline after which they are logged as a line
_LAST_READ = 1 << 20  # bytes read after the exit at most (a child may never stop writing)
_JOIN = 2.0  # seconds the exit waits for the reader to finish


class NativeStderrDrain(threading.Thread):
    """Reads the pipe that fd 2 points at and logs what native code wrote to it."""

    def __init__(self, read_fd: int) -> None:
        super().__init__(name="talkie-native-stderr", daemon=True)
        self._read_fd = read_fd
        self._wake_read, self._wake_write = os.pipe()
        self._pending = bytearray()
        self._window = 0.0
        self._logged = 0
        self._left_out = 0

    def stop(self) -> None:
        """Take what is left in the pipe, then end; never waits longer than `_JOIN` seconds."""
        with contextlib.suppress(OSError):
            os.write(self._wake_write, b".")
        self.join(_JOIN)
        if not self.is_alive():
            for fd in (self._wake_read, self._wake_write):
                with contextlib.suppress(OSError):
                    os.close(fd)

    def run(self) -> None:
        try:
            with selectors.DefaultSelector() as selector:
                selector.register(self._read_fd, selectors.EVENT_READ)
                selector.register(self._wake_read, selectors.EVENT_READ)
                while True:
                    ready = {key.fd for key, _ in selector.select()}
                    if self._read_fd in ready and not self._read_once():
                        break  # every writer is gone
                    if self._wake_read in ready:
                        self._read_rest()
                        break
        except Exception:  # never let a bad line kill the reader: writers would block
            LOGGER.debug("the reader of native output stopped", exc_info=True)
        finally:
            self._flush()
            with contextlib.suppress(OSError):
                os.close(self._read_fd)

    def _read_once(self) -> bool:
        chunk = os.read(self._read_fd, _CHUNK)
        if chunk:
            self._feed(chunk)
        return bool(chunk)

    def _read_rest(self) -> None:
        os.set_blocking(self._read_fd, False)
        taken = 0
        while taken < _LAST_READ:
            try:
                chunk = os.read(self._read_fd, _CHUNK)
            except BlockingIOError:
                return
            if not chunk:
                return
            taken += len(chunk)
            self._feed(chunk)

    def _feed(self, chunk: bytes) -> None:
        if not LOGGER.isEnabledFor(logging.INFO):
            self._pending.clear()  # no debug log: dropped, as fast as it comes
            return
        self._pending += chunk.replace(b"\r", b"\n")
        *lines, rest = self._pending.split(b"\n")
        self._pending = bytearray(rest)
        for line in lines:
            self._log(line)
        if len(self._pending) > _PENDING:
            self._log(bytes(self._pending))
            self._pending.clear()

    def _flush(self) -> None:
        if self._pending and LOGGER.isEnabledFor(logging.INFO):
            self._log(bytes(self._pending))
        self._pending.clear()
        self._report_left_out()

    def _log(self, raw: bytes | bytearray) -> None:
        text = clean_text(raw.decode("utf-8", "replace")).replace("\t", " ").strip()
        if not text:
            return
        now = time.monotonic()
        if now - self._window >= 1.0:
            self._report_left_out()
            self._window, self._logged = now, 0
        if self._logged >= MAX_LINES_PER_SECOND:
            self._left_out += 1
            return
        self._logged += 1
        if len(text) > MAX_LINE:
            text = text[: MAX_LINE - 1] + "…"
        LOGGER.info("native output: %s", text)

    def _report_left_out(self) -> None:
        if self._left_out:
            LOGGER.info("native output: %d more lines left out", self._left_out)
            self._left_out = 0


def _stream_like(fd: int, original: TextIO) -> TextIO:
    """A text stream on `fd` that encodes and buffers as `original` (Python's stderr) does."""
    stream = open(  # noqa: SIM115 - closed by the caller
        fd,
        "w",
        encoding=getattr(original, "encoding", None) or "utf-8",
        errors=getattr(original, "errors", None) or "backslashreplace",
        closefd=True,
    )
    if isinstance(stream, io.TextIOWrapper):
        stream.reconfigure(
            line_buffering=bool(getattr(original, "line_buffering", True)),
            write_through=bool(getattr(original, "write_through", True)),
        )
    return stream


def _applies() -> bool:
    """Only on POSIX, and only when fd 2 is a terminal (the screen Textual draws on)."""
    if os.name != "posix" or sys.__stderr__ is None:
        return False
    try:
        return sys.__stderr__.fileno() == _STDERR and os.isatty(_STDERR)
    except (OSError, ValueError):
        return False


@contextlib.contextmanager
def native_stderr_to_log() -> Iterator[None]:
    """While inside, what is written to fd 2 goes to the debug log; Python's stderr does not.

    Does nothing unless fd 2 is a terminal: elsewhere nothing draws over a screen.
    """
    original = sys.__stderr__
    if original is None or not _applies():
        yield
        return
    for stream in (original, sys.stderr):
        with contextlib.suppress(AttributeError, OSError, ValueError):
            stream.flush()  # what Python wrote so far reaches the terminal, as it should
    import fcntl  # POSIX only, as is everything from here on

    terminal_fd = os.dup(_STDERR)
    read_fd, write_fd = os.pipe()
    with contextlib.suppress(AttributeError, OSError):  # Linux only: a larger pipe
        fcntl.fcntl(write_fd, fcntl.F_SETPIPE_SZ, _PIPE_SIZE)
    terminal = _stream_like(terminal_fd, original)
    drain = NativeStderrDrain(read_fd)
    drain.start()
    previous = sys.stderr
    os.dup2(write_fd, _STDERR)  # inheritable: child processes write to the pipe too
    os.close(write_fd)
    # Textual's driver takes `sys.__stderr__` when the app starts: the terminal, not fd 2.
    setattr(sys, "__stderr__", terminal)  # noqa: B010 - typeshed declares it final
    if previous is original:
        sys.stderr = terminal
    try:
        yield
    finally:
        for stream in (terminal, original):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        setattr(sys, "__stderr__", original)  # noqa: B010
        if sys.stderr is terminal:
            sys.stderr = previous
        os.dup2(terminal_fd, _STDERR)  # the terminal again; the pipe's last writer is gone
        drain.stop()
        with contextlib.suppress(OSError, ValueError):
            terminal.close()
