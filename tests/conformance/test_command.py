"""The command surface shared by every protocol: detection, selection, JSON, JUnit, listing."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from talkie_tui.cli import main
from talkie_tui.conformance.checks import CHECKS
from talkie_tui.conformance.detection import detect
from talkie_tui.conformance.runner import Selection, run_conformance
from talkie_tui.conformance.suite import Target
from tests.helpers import TEST_TOKEN

QUICK_IDS = frozenset({"discovery", "status", "error-not-found", "echo", "slow"})


async def test_detection_is_the_one_talkie_connect_uses(
    server_url: str, gateway_url: str, cuckoo_hub
) -> None:
    assert await detect(Target(server_url, TEST_TOKEN)) == "talkie"
    assert await detect(Target(gateway_url, TEST_TOKEN)) == "minara"
    assert await detect(Target(gateway_url)) == "minara"  # it wants a token: still a gateway
    assert await detect(Target(cuckoo_hub())) == "cuckoo"


async def test_only_skip_and_quick_choose_the_checks(server_url: str) -> None:
    out = io.StringIO()
    selection = Selection(only=QUICK_IDS, skip=frozenset({"status"}), quick=True)
    code = await run_conformance(server_url, token=TEST_TOKEN, out=out, selection=selection)
    lines = out.getvalue().splitlines()
    assert code == 0, out.getvalue()
    assert lines[:-1] == [
        "PASS discovery",
        "SKIP status: skipped on request (--skip)",
        "PASS error-not-found",
        "PASS echo",
        "SKIP slow: slow (up to 20 s), skipped with --quick",
    ]
    assert "3 passed, 0 failed, 2 skipped" in lines[-1]


async def test_json_prints_one_object_per_check_and_junit_a_report(
    server_url: str, tmp_path: Path
) -> None:
    out, err = io.StringIO(), io.StringIO()
    junit = tmp_path / "report.xml"
    code = await run_conformance(
        server_url,
        token=TEST_TOKEN,
        out=out,
        err=err,
        selection=Selection(only=frozenset({"discovery", "decision-expired", "echo"})),
        as_json=True,
        junit=junit,
    )
    assert code == 0
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [r["id"] for r in records] == ["discovery", "echo", "decision-expired"]
    assert set(records[0]) == {"id", "title", "section", "outcome", "detail", "duration"}
    assert records[0]["section"] == "talkie-1.md §1"
    assert records[2]["outcome"] == "SKIP" and "expire" in records[2]["detail"]
    assert "2 passed, 0 failed, 1 skipped" in err.getvalue()
    suite = ET.parse(junit).getroot()
    assert suite.tag == "testsuite"
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("3", "0", "1")
    cases = suite.findall("testcase")
    assert [case.get("name") for case in cases] == ["discovery", "echo", "decision-expired"]
    assert cases[2].find("skipped") is not None


async def test_an_unreachable_server_fails_the_first_chosen_check(tmp_path: Path) -> None:
    out = io.StringIO()
    selection = Selection(only=frozenset({"echo", "status"}))
    code = await run_conformance(
        "http://127.0.0.1:9", protocol="talkie", out=out, selection=selection
    )
    lines = out.getvalue().splitlines()
    assert code == 1
    assert lines[0].startswith("FAIL status: ")
    assert lines[1] == "SKIP echo: no usable server (see status)"


def test_list_names_every_check_with_its_section(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conformance", "--list", "--protocol", "talkie"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == [check.name for check in CHECKS]
    assert any(line.startswith("slow ") and line.endswith("[slow]") for line in lines)


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["conformance", "--protocol", "talkie", "--only", "nonsense", "http://127.0.0.1:9"])
    assert exited.value.code == 2
    assert "no such check: nonsense" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        main(["conformance", "agent"])
    assert exited.value.code == 2
