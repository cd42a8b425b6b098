"""`talkie conformance agent [--webhook]`: the spec agent (tests/conformance/spec_agent.py,
websockets and httpx from the protocol text) passes every check, on a socket and on a webhook
binding, and each way of breaking it fails exactly the checks of that promise. All runs go at
once, each with an agent (and on the hub an agent, binding and people) of its own, against one
reference hub in a child process."""

from __future__ import annotations

import asyncio
import io
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from talkie_tui.cli import main
from talkie_tui.conformance.cuckoo import agent_session
from talkie_tui.conformance.cuckoo.agent_harness import ReferenceHub
from talkie_tui.conformance.cuckoo.agent_run import agent_checks, run_agent_conformance
from talkie_tui.conformance.output import Reporter
from tests.conformance.breakages import Outcome, assert_fails_exactly

ROOT = Path(__file__).resolve().parents[2]
# The spec agent answers and acknowledges within about a second, so a broken one is given up on
# sooner than a real agent would be (20 s, 5 s). The connect and listen waits stay as they are:
# eighteen agents start at once.
ANSWER_WAIT = 10.0
ACK_WAIT = 3.0
# What breaks, and the checks that must then fail (the rest pass, or skip for a good reason).
VARIANTS: dict[str, frozenset[str]] = {
    "": frozenset(),
    "never-connects": frozenset({"connects"}),
    "silent": frozenset({"answers"}),
    "never-acks": frozenset({"acks", "joined", "left", "stop"}),
    "acks-on-receipt": frozenset({"acks-after-work"}),
    "answers-twice": frozenset({"redelivery"}),
    "ignores-taps": frozenset({"button-tap"}),
    "crashes-on-newcomer": frozenset({"joined", "left", "stop", "reconnect"}),
    "crashes-on-left": frozenset({"left", "stop", "reconnect"}),
    "dies-on-stop": frozenset({"stop", "reconnect"}),
    "no-reconnect": frozenset({"reconnect"}),
    # The agent on a webhook binding (`--webhook`).
    "webhook": frozenset(),
    "webhook never-connects": frozenset({"webhook-listens"}),
    "webhook silent": frozenset({"webhook-answers"}),
    "webhook refuses-joins": frozenset({"webhook-good-signature"}),
    "webhook ignores-signature": frozenset({"webhook-bad-signature", "webhook-stale"}),
    "webhook accepts-stale": frozenset({"webhook-stale"}),
    "webhook answers-twice": frozenset({"webhook-redelivery"}),
}


def _command(variant: str) -> list[str]:
    words = variant.split()
    webhook = ["--webhook"] if words[:1] == ["webhook"] else []
    broken = [word for word in words if word != "webhook"]
    command = [sys.executable, "-m", "tests.conformance.spec_agent", *webhook]
    return command + (["--break", broken[0]] if broken else [])


async def _conform(variant: str, hub: str) -> Outcome:
    out = io.StringIO()
    reporter = Reporter("cuckoo agent", out=out, err=out)
    webhook = variant.startswith("webhook")
    code = await run_agent_conformance(
        _command(variant), webhook=webhook, reporter=reporter, hub=hub
    )
    return Outcome(code, out.getvalue())


async def _conform_all(folder: Path) -> dict[str, Outcome]:
    hub = ReferenceHub(folder)
    url = await hub.start()
    try:
        results = await asyncio.gather(*(_conform(variant, url) for variant in VARIANTS))
    finally:
        await hub.stop()
    return dict(zip(VARIANTS, results, strict=True))


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Outcome]]:
    """Every variant's outcome, all run at once against one reference hub."""
    folder = tmp_path_factory.mktemp("agent-conformance")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(ROOT)  # `python -m tests.…` finds the tests package
        patch.setattr(agent_session, "ANSWER_WAIT", ANSWER_WAIT)
        patch.setattr(agent_session, "ACK_WAIT", ACK_WAIT)
        yield asyncio.run(_conform_all(folder))


@pytest.mark.parametrize("broken", list(VARIANTS), ids=lambda b: b or "spec-agent")
def test_each_broken_promise_fails_its_check(outcomes: dict[str, Outcome], broken: str) -> None:
    checks = agent_checks(webhook=broken.startswith("webhook"))
    assert_fails_exactly(outcomes[broken], VARIANTS[broken], checks)


def test_failures_say_why_they_matter_to_a_person(outcomes: dict[str, Outcome]) -> None:
    expected = {
        "answers-twice": "must tolerate seeing the same event twice",
        "never-acks": "Acknowledge it once you have handled it.",
        "ignores-taps": "A tap arrives as a message.created from the person",
        "crashes-on-newcomer": "the agent exited with code 3",
        "no-reconnect": "instead of reconnecting",
        "never-connects": "did not open $CUCKOO_HUB/v1/agent/socket",
        "acks-on-receipt": "a crash mid-reply replays the message rather than losing it",
        "crashes-on-left": "the agent exited with code 6",
        "webhook never-connects": "nothing listens at",
        "webhook refuses-joins": "Answer 2xx within 10 seconds.",
        "webhook ignores-signature": "The key is the SHA-256 of your binding secret",
        "webhook accepts-stale": "reject a timestamp that is far from now",
    }
    for broken, words in expected.items():
        output = outcomes[broken].output
        assert words in output, output
        failed = [line for line in output.splitlines() if line.startswith("FAIL ")]
        assert all(" — why it matters: " in line for line in failed), output


def test_the_cli_runs_the_command_after_the_double_dash(tmp_path: Path) -> None:
    junit = tmp_path / "agent.xml"
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "talkie_tui.cli",
            "conformance",
            "agent",
            "--only",
            "connects,answers",
            "--junit",
            str(junit),
            "--",
            *_command(""),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=ROOT,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert completed.stdout.splitlines()[:2] == ["PASS connects", "PASS answers"]
    assert "2 passed, 0 failed, 0 skipped" in completed.stdout
    assert 'name="answers"' in junit.read_text()


def test_list_shows_the_checks_of_each_binding(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conformance", "agent", "--list"]) == 0
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()] == [
        check.name for check in agent_checks(webhook=False)
    ]
    assert main(["conformance", "agent", "--webhook", "--list"]) == 0
    assert capsys.readouterr().out.startswith("webhook-listens ")
