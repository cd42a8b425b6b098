"""Issue 10, item 7: what native libraries write to fd 2 never lands on the TUI's screen.

ALSA, PortAudio and libav write to file descriptor 2 straight from C. Textual draws the screen
on that descriptor too, so while the app runs fd 2 is a pipe into the debug log and the
terminal lives on another descriptor. Here fd 2 is a pseudo-terminal the test reads, and the
"library" writes with libc's own `write(2, …)` from a thread of its own.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from talkie_tui import logs
from talkie_tui.logs import log_folder, setup_logging
from talkie_tui.ui.support import native_stderr
from talkie_tui.ui.support.native_stderr import MAX_LINES_PER_SECOND, native_stderr_to_log
from tests.ui.flows import FAST, chat_screen, make_app, until
from tests.ui.pty import DrainedPty, PtyTalkie

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="file descriptors are POSIX")

LIBC = ctypes.CDLL(None, use_errno=True)
UNDERRUN = b"ALSA lib pcm.c:8570:(snd_pcm_recover) underrun occurred"


def native_write(data: bytes) -> None:
    """Write to fd 2 as a C library does: libc's write(), past every Python stream."""
    view = memoryview(data)
    while view:
        written = LIBC.write(2, bytes(view[:65536]), min(len(view), 65536))
        assert written > 0, os.strerror(ctypes.get_errno())
        view = view[written:]


class Terminal(DrainedPty):
    """A pseudo-terminal in place of fd 2 for the length of a test; what reached it."""

    def __init__(self) -> None:
        master, slave = os.openpty()
        self._saved = os.dup(2)
        os.dup2(slave, 2)
        os.close(slave)
        super().__init__(master)

    def shown(self) -> bytes:
        """What reached the terminal."""
        return self.raw()

    def wait_for(self, needle: bytes, timeout: float = 5) -> None:
        deadline = time.monotonic() + timeout
        while needle not in self.shown():
            assert time.monotonic() < deadline, f"{needle!r} never reached the terminal"
            time.sleep(0.01)

    def close(self) -> None:
        os.dup2(self._saved, 2)
        os.close(self._saved)
        os.close(self.master)
        self._reader.join(timeout=5)


@contextlib.contextmanager
def terminal_on_fd_2() -> Iterator[Terminal]:
    """Taken in the test's body: pytest points fd 2 at its own capture between phases."""
    sys.stderr.flush()
    screen = Terminal()
    try:
        yield screen
    finally:
        screen.close()


@pytest.fixture
def debug_log() -> Iterator[Callable[[], str]]:
    path = setup_logging(True)
    assert path is not None
    try:
        yield lambda: path.read_text(encoding="utf-8")
    finally:
        logs.close_logging()


def in_thread(target: Callable[[], None]) -> threading.Thread:
    """`target` on a thread of its own, as an audio library's callback thread."""
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


def alsa_and_libav() -> None:
    for n in range(5):
        native_write(UNDERRUN + b" %d\n" % n)
    native_write(b"\x1b[2J\x1b]0;title\x07libav: no\tcolour\x1b[31m\n")


async def test_native_writes_go_to_the_debug_log_while_the_app_runs(
    devserver: Callable[..., str], tmp_path: Path, debug_log: Callable[[], str]
) -> None:
    url = devserver(**FAST)
    app = make_app(url, tmp_path)
    original = sys.__stderr__
    with terminal_on_fd_2() as terminal:
        with native_stderr_to_log():
            async with app.run_test(size=(120, 40)) as pilot:
                await chat_screen(app, pilot)
                library = in_thread(alsa_and_libav)
                await until(pilot, lambda: "libav: no colour" in debug_log())
                # What Python prints (talkie's line after a crash) still reaches the screen.
                assert sys.__stderr__ is not original
                print("python speaks", file=sys.__stderr__, flush=True)
                terminal.wait_for(b"python speaks")
        library.join()
        log = debug_log()
        for n in range(5):
            assert f"talkie_tui.native: native output: {UNDERRUN.decode()} {n}\n" in log
        assert "native output: libav: no colour\n" in log  # no escape sequence in the log
        assert b"ALSA" not in terminal.shown() and b"libav" not in terminal.shown()
        # Afterwards fd 2 is the terminal again, and Python's streams are what they were.
        assert sys.__stderr__ is original
        native_write(b"a traceback after the app\n")
        terminal.wait_for(b"a traceback after the app")


def test_without_a_debug_log_the_lines_are_dropped() -> None:
    with terminal_on_fd_2() as terminal:
        with native_stderr_to_log():
            native_write(UNDERRUN + b"\n")
            time.sleep(0.1)
        native_write(b"after\n")
        terminal.wait_for(b"after")
    assert UNDERRUN not in terminal.shown()
    assert not list(log_folder().glob("talkie-*.log"))


@pytest.fixture
def drains(monkeypatch: pytest.MonkeyPatch) -> list[threading.Thread]:
    """The readers of fd 2's pipe that were started, with the exit's wait for one raised to a
    minute: an exit that returns with its reader ended did not wait on the pipe's writers (a
    reader that needed its end of file would still be running, a minute later)."""
    started: list[threading.Thread] = []

    class Drain(native_stderr.NativeStderrDrain):
        def start(self) -> None:
            started.append(self)
            super().start()

    monkeypatch.setattr(native_stderr, "NativeStderrDrain", Drain)
    monkeypatch.setattr(native_stderr, "_JOIN", 60.0)
    return started


def test_a_library_that_writes_a_lot_never_blocks(
    debug_log: Callable[[], str], drains: list[threading.Thread]
) -> None:
    lines = 20_000  # 1.2 MB: many times a pipe's buffer
    burst = b"".join(UNDERRUN + b"\n" for _ in range(lines))
    with terminal_on_fd_2() as terminal:
        with native_stderr_to_log():
            library = in_thread(lambda: native_write(burst))
            library.join(timeout=10)
            assert not library.is_alive(), "the library's write blocked"
            time.sleep(1.05)  # the next second: logged again
            native_write(b"no newline at the end")  # not lost either
        assert len(drains) == 1 and not drains[0].is_alive()  # the exit waited for nothing
    log = debug_log()
    logged = log.count(UNDERRUN.decode())
    assert MAX_LINES_PER_SECOND <= logged < lines  # so many a second, not 20,000 lines
    assert f"native output: {lines - logged} more lines left out\n" in log
    assert log.rstrip().endswith("native output: no newline at the end")
    assert UNDERRUN not in terminal.shown()


def test_the_exit_does_not_wait_for_a_child_that_holds_the_pipe(
    drains: list[threading.Thread],
) -> None:
    with terminal_on_fd_2() as terminal:
        with native_stderr_to_log():
            # A browser started from the TUI inherits fd 2 and may outlive the app.
            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
        try:
            # Left while the child still holds the pipe, its reader ended: not waited for.
            assert child.poll() is None
            assert len(drains) == 1 and not drains[0].is_alive()
            native_write(b"restored\n")
            terminal.wait_for(b"restored")
        finally:
            child.kill()
            child.wait()


def test_nothing_changes_when_fd_2_is_not_a_terminal(tmp_path: Path) -> None:
    saved = os.dup(2)
    with open(tmp_path / "stderr", "wb") as file:
        os.dup2(file.fileno(), 2)
    try:
        with native_stderr_to_log():
            assert os.fstat(2).st_ino == (tmp_path / "stderr").stat().st_ino
            native_write(b"to the file, as before\n")
    finally:
        os.dup2(saved, 2)
        os.close(saved)
    assert (tmp_path / "stderr").read_bytes() == b"to the file, as before\n"


# The real program, whose F1 starts a "library" writing to fd 2 from a thread; after the app
# it writes once more, which must reach the terminal.
NOISY = (
    "-c",
    "import ctypes, sys, threading, time\n"
    "from talkie_tui.ui.app import TalkieApp\n"
    "libc = ctypes.CDLL(None)\n"
    "def say(data):\n"
    "    libc.write(2, data, len(data))\n"
    "def noisy(self):\n"
    "    def library():\n"
    "        for n in range(20):\n"
    "            say(b'ALSA lib pcm.c:8570:(snd_pcm_recover) underrun occurred %d\\n' % n)\n"
    "            time.sleep(0.01)\n"
    "        self.call_from_thread(self.notify, 'the library is done')\n"
    "    threading.Thread(target=library, daemon=True).start()\n"
    "TalkieApp.action_help = noisy\n"
    "from talkie_tui.cli import main\n"
    "code = main(['--debug', *sys.argv[1:]])\n"
    "say(b'fd 2 after the app\\n')\n"
    "sys.exit(code)\n",
)


def test_the_real_program_keeps_native_output_off_the_screen(devserver: Callable[..., str]) -> None:
    url = devserver(**FAST)
    talkie = PtyTalkie(url, NOISY)
    try:
        talkie.wait_for("Message")
        os.write(talkie.master, b"\x1bOP")  # F1
        talkie.wait_for("the library is done")
        os.write(talkie.master, b"\x11")  # Ctrl+Q
        assert talkie.wait_exit() == 0
    finally:
        talkie.kill()
    assert "ALSA" not in talkie.text()
    assert "fd 2 after the app" in talkie.text()
    (log,) = log_folder().glob("talkie-*.log")
    text = log.read_text(encoding="utf-8")
    for n in range(20):
        assert (
            f"native output: ALSA lib pcm.c:8570:(snd_pcm_recover) underrun occurred {n}\n" in text
        )
