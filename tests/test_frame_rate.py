"""The TUI's frame rate: `talkie` asks Textual for up to 120 frames a second (a key typed while
an answer streams shows sooner), unless the person set TEXTUAL_FPS themselves."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROBE = """
import contextlib
from talkie_tui.cli import main
with contextlib.suppress(SystemExit):
    main(["--version"])
from textual import constants
print(constants.MAX_FPS)
"""


def max_fps(**env: str) -> int:
    """Textual's frame cap in a fresh `talkie` process with `env` added."""
    clean = {k: v for k, v in os.environ.items() if k != "TEXTUAL_FPS"}
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return int(done.stdout.split()[-1])


def test_talkie_draws_up_to_120_frames_a_second() -> None:
    assert max_fps() == 120


@pytest.mark.parametrize("chosen", ["30", "240"])
def test_a_persons_own_frame_rate_wins(chosen: str) -> None:
    assert max_fps(TEXTUAL_FPS=chosen) == int(chosen)
