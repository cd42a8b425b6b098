"""`talkie … | head`: when the reader of stdout goes away, talkie ends as `cat` does.

Each test runs the real `talkie` in a child process with stdout on a real pipe whose reading
end is closed early, and checks that it ends quietly (no traceback), killed by SIGPIPE as a
shell expects (status 141 there), and that a run it was printing goes on on the server:
closing the pipe is a disconnect, and disconnect is not cancel (§5).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable

import httpx
import pytest

from talkie_tui.devserver.talkie.testmode import SLOW_TEXT
from tests.helpers import AUTH, TEST_TOKEN

TALKIE = [sys.executable, "-m", "talkie_tui.cli"]
KILLED_BY_SIGPIPE = -signal.SIGPIPE

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGPIPE"), reason="needs POSIX SIGPIPE")


def talkie_into_closed_pipe(*args: str, read: int = 0, timeout: float = 60) -> tuple[int, str]:
    """Run `talkie ARGS` with stdout on a pipe closed after `read` bytes; (status, stderr)."""
    reader, writer = os.pipe()
    child = subprocess.Popen(
        [*TALKIE, *args],
        stdout=writer,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
        cwd=os.environ["TALKIE_HOME"],  # the installed talkie, not whatever the folder holds
    )
    os.close(writer)
    try:
        got = b""
        while len(got) < read:
            chunk = os.read(reader, read - len(got))
            if not chunk:
                break
            got += chunk
        assert len(got) == read, f"only {got!r} arrived before talkie ended"
    finally:
        os.close(reader)  # the reader goes away, as `head` does
    _, err = child.communicate(timeout=timeout)
    return child.returncode, err


def assert_quiet(status: int, err: str) -> None:
    assert "Traceback" not in err and "BrokenPipe" not in err and "Exception" not in err, err
    assert status == KILLED_BY_SIGPIPE, (status, err)


@pytest.fixture
def slow_server(devserver: Callable[..., str]) -> str:
    """The reference server in test mode; `talkie-test:slow` takes about 2 s."""
    return devserver(test_mode=True, dev_token=TEST_TOKEN, demo_delay=0.0, slow_seconds=2.0)


def stored_answer(url: str, thread_id: str, timeout: float = 20) -> str:
    """The assistant's text in the thread once the server stored it."""
    deadline = time.monotonic() + timeout
    with httpx.Client(base_url=url, headers=AUTH) as http:
        while time.monotonic() < deadline:
            response = http.get(f"/api/talkie/threads/{thread_id}")
            if response.status_code == 200:
                answers = [m for m in response.json()["messages"] if m["role"] == "assistant"]
                if answers:
                    return str(answers[-1]["content"])
            time.sleep(0.2)
    raise AssertionError(f"no answer stored in {thread_id} within {timeout} s")


def test_ask_ends_quietly_and_the_run_goes_on(slow_server: str) -> None:
    """`talkie ask … | head -c 20`: no traceback, SIGPIPE, and the server finishes the run."""
    thread_id = f"t_pipe_{uuid.uuid4().hex[:12]}"
    args = ("ask", slow_server, "talkie-test:slow", "--token", TEST_TOKEN, "--thread", thread_id)
    status, err = talkie_into_closed_pipe(*args, read=20)

    assert_quiet(status, err)  # ended by SIGPIPE: by the closed pipe, not the answer's end
    assert err == ""
    # Not cancelled: the whole answer is stored (a cancelled run keeps only the start).
    assert stored_answer(slow_server, thread_id) == SLOW_TEXT


def test_ask_json_ends_quietly_and_the_run_goes_on(slow_server: str) -> None:
    """`talkie ask --json … | head -1`: the same for the event lines."""
    thread_id = f"t_pipe_{uuid.uuid4().hex[:12]}"
    args = ("ask", slow_server, "talkie-test:slow", "--json", "--token", TEST_TOKEN)
    status, err = talkie_into_closed_pipe(*args, "--thread", thread_id, read=10)
    assert_quiet(status, err)
    assert stored_answer(slow_server, thread_id) == SLOW_TEXT


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(["threads", "{url}", "--token", TEST_TOKEN], id="threads"),
        pytest.param(["conformance", "{url}", "--token", TEST_TOKEN], id="conformance"),
        pytest.param(["servers"], id="servers"),
        pytest.param(["doctor"], id="doctor"),
    ],
)
def test_every_printing_command_ends_quietly(slow_server: str, command: list[str]) -> None:
    """The reader left before the first line: each command ends at its first write."""
    args = [part.format(url=slow_server) for part in command]
    status, err = talkie_into_closed_pipe(*args)
    assert_quiet(status, err)


def test_devices_ends_quietly() -> None:
    """`talkie devices | head`: quiet too (exit 1 with no audio at all: nothing printed)."""
    status, err = talkie_into_closed_pipe("devices")
    assert "Traceback" not in err and "BrokenPipe" not in err, err
    if status == 1:
        assert "no audio devices" in err or "PortAudio" in err, err
    else:
        assert status == KILLED_BY_SIGPIPE, (status, err)
