"""The reference server passes every conformance check, in-process and through the CLI."""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
from pathlib import Path

from talkie_tui.conformance.checks import CHECKS
from talkie_tui.conformance.runner import run_conformance
from tests.helpers import TEST_TOKEN

# The one check no server can pass on demand (an action cannot be made to expire).
ALWAYS_SKIPPED = {"decision-expired"}


def _assert_all_pass(output: str, *, quick: bool = False) -> None:
    """Every check passed but those no server can pass (and, `quick`, the slow ones)."""
    skipped = ALWAYS_SKIPPED | ({c.name for c in CHECKS if c.slow} if quick else set())
    lines = output.splitlines()
    expected = [f"SKIP {c.name}" if c.name in skipped else f"PASS {c.name}" for c in CHECKS]
    assert [line.split(":", 1)[0] for line in lines[:-1]] == expected, output
    assert "conformant — " in lines[-1]
    summary = f"{len(CHECKS) - len(skipped)} passed, 0 failed, {len(skipped)} skipped"
    assert summary in lines[-1]


async def test_the_reference_server_passes(server_url: str) -> None:
    out = io.StringIO()
    code = await run_conformance(server_url, token=TEST_TOKEN, out=out)
    assert code == 0, out.getvalue()
    _assert_all_pass(out.getvalue())


def _talkie_command() -> list[str]:
    script = shutil.which("talkie", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "talkie_tui.cli"]


def test_the_cli_exits_zero_on_the_reference_server(server_url: str) -> None:
    # --quick: the slow checks ran in-process above; this is about the command.
    completed = subprocess.run(
        [*_talkie_command(), "conformance", server_url, "--token", TEST_TOKEN, "--quick"],
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    _assert_all_pass(completed.stdout, quick=True)
    assert "SKIP slow: slow (up to 20 s), skipped with --quick" in completed.stdout


def test_the_cli_fails_without_a_server() -> None:
    completed = subprocess.run(
        [*_talkie_command(), "conformance", "http://127.0.0.1:9", "--token", TEST_TOKEN],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 1, completed.stdout + completed.stderr
    lines = completed.stdout.splitlines()
    assert lines[0].startswith("FAIL discovery: Could not connect to http://127.0.0.1:9")
    assert all(line.startswith("SKIP ") for line in lines[1:-1])
    assert "NOT conformant — 0 passed, 1 failed" in lines[-1]
