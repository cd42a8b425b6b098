"""`talkie serve` / `talkie demo --protocol`: talkie is the default, other protocols are refused."""

from __future__ import annotations

import signal
from pathlib import Path

import httpx
import pytest

from talkie_tui.cli import build_parser
from tests.devserver.processes import server_process


@pytest.mark.parametrize("command", ["serve", "demo"])
def test_the_protocol_is_talkie_by_default(command: str) -> None:
    assert build_parser().parse_args([command]).protocol == "talkie"
    assert build_parser().parse_args([command, "--protocol", "talkie"]).protocol == "talkie"


@pytest.mark.parametrize("command", ["serve", "demo"])
def test_a_minara_gateway_can_be_served(command: str) -> None:
    assert build_parser().parse_args([command, "--protocol", "minara"]).protocol == "minara"


@pytest.mark.parametrize("command", ["serve", "demo"])
@pytest.mark.parametrize("protocol", ["cuckoo"])
def test_a_server_not_built_yet_is_bad_usage(
    command: str, protocol: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args([command, "--protocol", protocol])
    assert exit_info.value.code == 2
    assert f"invalid choice: '{protocol}'" in capsys.readouterr().err


def test_serve_protocol_talkie_serves_talkie_1(tmp_path: Path) -> None:
    args = ["-m", "talkie_tui.cli", "serve", "--protocol", "talkie"]
    with server_process([*args, "--db", str(tmp_path / "db.sqlite3")]) as (process, url):
        assert url.startswith("http://127.0.0.1:")
        assert httpx.get(f"{url}/.well-known/talkie.json").json()["spec"] == "talkie/1"
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=10) == 0
