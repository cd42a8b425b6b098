"""The Minara gateway suite: the reference gateway passes it, in-process and through the CLI,
and each deliberately broken gateway (minara_proxy.py) fails exactly the checks of its rule.

Every breakage has a gateway of its own (the sessions-list check pages a list that another
run's sessions would shift), and all runs go at once: a full run takes a few seconds. The
gateways and the breakages are served from child processes (child_servers.py).
"""

from __future__ import annotations

import functools
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest

from talkie_tui.conformance.minara.checks import CHECKS
from talkie_tui.conformance.runner import Selection, run_conformance
from talkie_tui.devserver.minara.config import GatewayConfig
from talkie_tui.devserver.minara.runner import serve_in_thread
from tests.backends.minara.test_peers import old_gateway  # noqa: F401 (a fixture)
from tests.conformance.breakages import Outcome, assert_fails_exactly, conform, run_all
from tests.conformance.child_servers import proxies, served_in_child
from tests.conformance.minara_proxy import BREAKAGES, GatewayProxy
from tests.helpers import TEST_TOKEN
from tests.stub_server import StubServer


@contextmanager
def _reference_gateways(folder: Path) -> Iterator[dict[str, str]]:
    """A reference gateway for each breakage, by its name."""
    with ExitStack() as stack:
        urls: dict[str, str] = {}
        for breakage in BREAKAGES:
            config = GatewayConfig(
                db_path=folder / f"{breakage.name}.sqlite3", auth_token=TEST_TOKEN, test_mode=True
            )
            urls[breakage.name] = stack.enter_context(serve_in_thread(config))
        yield urls


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Outcome]]:
    """Each breakage's conformance outcome, each behind a reference gateway of its own (the
    gateways and the breakages are served from child processes)."""
    folder = tmp_path_factory.mktemp("minara-conformance")
    with (
        served_in_child(functools.partial(_reference_gateways, folder)) as upstreams,
        served_in_child(proxies(upstreams, BREAKAGES)) as urls,
    ):
        runs = {
            name: functools.partial(conform, url, token=TEST_TOKEN) for name, url in urls.items()
        }
        yield run_all(runs)


@pytest.mark.parametrize("breakage", BREAKAGES, ids=lambda b: b.name)
def test_the_broken_rule_and_only_it_fails(
    outcomes: dict[str, Outcome], breakage: type[GatewayProxy]
) -> None:
    outcome = outcomes[breakage.name]
    assert_fails_exactly(outcome, breakage.fails, CHECKS)
    assert f"{len(breakage.fails)} failed, 0 skipped" in outcome.lines[-1]


def test_reasons_quote_the_spec(outcomes: dict[str, Outcome]) -> None:
    expected = {
        "skips-a-seq": "grows by 1, per channel and key",
        "anonymous": "HTTP requests carry Authorization: Bearer <token>",
        "no-replay": "replays the buffer from the start",
        "resume-repeats": "no event is applied twice and none is skipped",
        "history-differs": "concatenation of the turn's text_delta texts",
        "oldest-first": "most recently updated first",
        "plain-snippets": "snippets with the match between « and »",
        "answers-anything": '"not_pending" (HTTP 404 on the wire)',
        "injects-into-nothing": '409 {"status": "no_active_turn"} when nothing runs',
        "interrupt-ignored": "interrupted: true when the user stopped the turn",
        "nine-attachments": "Limits: 8 attachments per turn",
        "models-as-list": '"models": [ { "id", "label"?, "reasoning"?: bool } ]',
        "html-errors": '{ "error": { "code", "message" } }',
        "strict-fields": "new optional fields appear over time",
        "guarded-healthz": "GET /healthz answered HTTP 401",
        "always-new": "expected the same session_id and is_new false",
        "bare-error-end": "lacks a code or a message",
    }
    for name, words in expected.items():
        assert words in outcomes[name].output, outcomes[name].output


async def test_an_anonymous_gateway_skips_the_token_checks(minara_gateway) -> None:
    out = io.StringIO()
    only = Selection(only=frozenset({"healthz", "auth-http", "auth-socket", "models"}))
    code = await run_conformance(minara_gateway(), out=out, selection=only)
    assert code == 0, out.getvalue()
    assert "SKIP auth-http: no token given (--token or MINARA_TOKEN)" in out.getvalue()


async def test_a_gateway_of_the_older_sse_revision_is_told_what_differs(
    old_gateway: StubServer,  # noqa: F811
) -> None:
    out = io.StringIO()
    only = Selection(only=frozenset({"healthz", "turn-accepted"}))
    code = await run_conformance(old_gateway.origin, out=out, selection=only)
    assert code == 1
    lines = out.getvalue().splitlines()
    assert lines[0] == "PASS healthz"
    assert lines[1].startswith("FAIL turn-accepted: POST /v1/chat/stream answered an event stream")
    assert "older SSE revision" in lines[1] and lines[-1].startswith("minara conformance")


def test_the_cli_detects_the_gateway_and_writes_json_and_junit(
    gateway_url: str, tmp_path: Path
) -> None:
    junit = tmp_path / "minara.xml"
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "talkie_tui.cli",
            "conformance",
            gateway_url,
            "--json",
            "--junit",
            str(junit),
            "--skip",
            "attachment-limits",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**_environ(), "MINARA_TOKEN": TEST_TOKEN},
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    records = [json.loads(line) for line in completed.stdout.splitlines()]
    assert [r["id"] for r in records] == [check.name for check in CHECKS]
    assert {r["outcome"] for r in records} == {"PASS", "SKIP"}
    assert records[0]["section"].startswith("notes/minara.md")
    assert f"{len(CHECKS) - 1} passed, 0 failed, 1 skipped" in completed.stderr
    assert 'name="seq"' in junit.read_text()


def _environ() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("MINARA_TOKEN", "TALKIE_TOKEN")}
