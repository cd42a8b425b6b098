"""Deliberately broken servers: conformance fails, and names exactly the broken rule.

Every scenario is a proxy in front of one reference server (see proxy.py), both served from
child processes (child_servers.py). They run concurrently, once per module, because each full
run takes ~10 s of slow runs.
"""

from __future__ import annotations

import asyncio
import functools
import io
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from talkie_tui.conformance.checks import CHECKS
from talkie_tui.conformance.runner import run_conformance
from talkie_tui.devserver.talkie.config import ServerConfig
from talkie_tui.devserver.talkie.runner import serve_in_thread
from tests.conformance.breakages import CONTROL, Outcome
from tests.conformance.child_servers import proxies, served_in_child
from tests.conformance.proxy import BREAKAGES, Proxy
from tests.helpers import TEST_TOKEN


async def _conform(url: str, breakage: type[Proxy]) -> Outcome:
    out = io.StringIO()
    code = await run_conformance(url, token=TEST_TOKEN, out=out, timeout_cap=breakage.timeout_cap)
    return Outcome(code, out.getvalue())


async def _conform_all(urls: dict[type[Proxy], str]) -> dict[str, Outcome]:
    results = await asyncio.gather(*(_conform(url, breakage) for breakage, url in urls.items()))
    return {breakage.name: result for breakage, result in zip(urls, results, strict=True)}


@contextmanager
def _reference_server(db_path: Path) -> Iterator[dict[str, str]]:
    # 4 s instead of 5: the slow checks dominate, and 4 s still spans the 3 s they require.
    config = ServerConfig(test_mode=True, dev_token=TEST_TOKEN, db_path=db_path, slow_seconds=4.0)
    with serve_in_thread(config) as upstream:
        yield {"server": upstream}


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Outcome]]:
    """Each scenario's conformance outcome, all run at once against one reference server (it
    and the proxies are served from child processes)."""
    db_path = tmp_path_factory.mktemp("conformance") / "upstream.sqlite3"
    with (
        served_in_child(functools.partial(_reference_server, db_path)) as upstream,
        served_in_child(proxies(upstream["server"], BREAKAGES)) as urls,
    ):
        yield asyncio.run(_conform_all({breakage: urls[breakage.name] for breakage in BREAKAGES}))


@pytest.mark.parametrize("breakage", BREAKAGES, ids=lambda b: b.name)
def test_the_broken_rule_and_only_it_fails(
    outcomes: dict[str, Outcome], breakage: type[Proxy]
) -> None:
    outcome = outcomes[breakage.name]
    assert outcome.verdicts("FAIL") == breakage.fails, outcome.output
    assert outcome.code == (1 if breakage.fails else 0), outcome.output
    for name in breakage.fails:
        assert f"FAIL {name}: " in outcome.output


@pytest.mark.parametrize("breakage", BREAKAGES, ids=lambda b: b.name)
def test_every_check_reports_once_in_plain_text(
    outcomes: dict[str, Outcome], breakage: type[Proxy]
) -> None:
    outcome = outcomes[breakage.name]
    names = [line.split(":", 1)[0].split(" ", 1)[1] for line in outcome.lines[:-1]]
    assert names == [check.name for check in CHECKS]
    assert not CONTROL.search(outcome.output)
    assert all(len(line) <= 360 for line in outcome.lines)
    summary = outcome.lines[-1]
    assert f"{len(breakage.fails)} failed" in summary


def test_a_wrong_spec_skips_everything_after_discovery(outcomes: dict[str, Outcome]) -> None:
    outcome = outcomes["wrong-spec"]
    assert "talkie/2" in outcome.lines[0]
    assert outcome.verdicts("SKIP") == {check.name for check in CHECKS[1:]}


def test_without_test_mode_the_destructive_checks_are_skipped(
    outcomes: dict[str, Outcome],
) -> None:
    outcome = outcomes["not-test-mode"]
    skipped = outcome.verdicts("SKIP")
    assert {"echo", "action", "decision-conflict", "cancel", "disconnect"} <= skipped
    assert {"discovery", "status", "error-not-found"} <= outcome.verdicts("PASS")
    assert "not in test mode" in outcome.output


def test_reasons_say_what_is_wrong(outcomes: dict[str, Outcome]) -> None:
    expected = {
        "echo-altered": "the echo differs from the sent text at character",
        "no-retryable": "error.retryable is missing",
        "html-not-found": "is not the §3 envelope",
        "duplicate-answers": "the thread holds the retried user message 2 times",
        "cancel-ignored": "after cancelRun answered ok",
        "opposite-decision-allowed": "expected HTTP 409 conflict, got HTTP 200",
        "buffered": "(is the stream buffered?)",
        "cancel-on-disconnect": "was the run cancelled on disconnect?",
        "hung-status": "no result within 8 s",
        "run-error-not-retryable": "metadata.retryable is null, not true",
    }
    for name, words in expected.items():
        assert words in outcomes[name].output, outcomes[name].output
    # The doubled space the echo lost is still visible in the reason.
    assert 'sent "Příliš žluťoučký kůň  úpěl' in outcomes["echo-altered"].output
