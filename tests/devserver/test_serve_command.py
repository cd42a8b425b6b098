"""`talkie serve` / `talkie demo --protocol`: talkie is the default, other protocols are refused."""

from __future__ import annotations

import signal
from pathlib import Path

import httpx
import pytest

from talkie_tui.cli import build_parser, main
from tests.devserver.processes import server_process


@pytest.mark.parametrize("command", ["serve", "demo"])
def test_the_protocol_is_talkie_by_default(command: str) -> None:
    assert build_parser().parse_args([command]).protocol == "talkie"
    assert build_parser().parse_args([command, "--protocol", "talkie"]).protocol == "talkie"


@pytest.mark.parametrize("command", ["serve", "demo"])
def test_a_minara_gateway_can_be_served(command: str) -> None:
    assert build_parser().parse_args([command, "--protocol", "minara"]).protocol == "minara"


@pytest.mark.parametrize("command", ["serve", "demo"])
def test_a_cuckoo_hub_can_be_served_and_demoed(command: str) -> None:
    assert build_parser().parse_args([command, "--protocol", "cuckoo"]).protocol == "cuckoo"


@pytest.mark.parametrize(
    "args",
    [
        ["--protocol", "talkie", "--dev"],
        ["--protocol", "minara", "--dev"],
        ["--protocol", "cuckoo", "--test-mode"],
        ["--protocol", "cuckoo", "--dev-token", "t"],
    ],
)
def test_options_of_another_server_are_bad_usage(
    args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", *args]) == 2
    assert "talkie:" in capsys.readouterr().err


def test_serve_protocol_talkie_serves_talkie_1(tmp_path: Path) -> None:
    args = ["-m", "talkie_tui.cli", "serve", "--protocol", "talkie"]
    with server_process([*args, "--db", str(tmp_path / "db.sqlite3")]) as (process, url):
        assert url.startswith("http://127.0.0.1:")
        assert httpx.get(f"{url}/.well-known/talkie.json").json()["spec"] == "talkie/1"
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=10) == 0


def test_serve_protocol_cuckoo_serves_a_hub_and_tells_how_to_start(tmp_path: Path) -> None:
    args = ["-m", "talkie_tui.cli", "serve", "--protocol", "cuckoo", "--dev"]
    process_args = [*args, "--db", str(tmp_path / "hub.sqlite3")]
    with server_process(process_args, stderr=True) as (process, url):
        assert url.startswith("http://127.0.0.1:")
        person = "usr_" + "0" * 26
        made = httpx.post(
            f"{url}/v1/mgmt/agents",
            headers={"X-Dev-User": person},
            json={"handle": "served", "display_name": "Served"},
        )
        assert made.status_code == 201, made.text
        assert httpx.post(f"{url}/v1/auth/email/start", json={"email": "a@b.co"}).status_code == 204
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=10) == 0
        assert process.stderr is not None
        log = process.stderr.read()
    assert "X-Dev-User" in log and "/v1/mgmt/agents" in log and "binding" in log
    assert "sign-in code for a@b.co is" in log
