"""The exit codes are the command line's contract (docs/ARCHITECTURE.md): each keeps its number."""

from __future__ import annotations

from talkie_tui.core.exit_codes import ExitCode


def test_the_numbers_are_the_contract() -> None:
    assert {code.name: int(code) for code in ExitCode} == {
        "OK": 0,
        "FAILED": 1,
        "USAGE": 2,
        "SIGN_IN_NEEDED": 3,
        "INTERRUPTED": 130,
    }


def test_an_exit_code_is_a_plain_number_wherever_it_goes() -> None:
    assert ExitCode.SIGN_IN_NEEDED == 3
    assert f"{ExitCode.INTERRUPTED}" == "130"
    assert str(ExitCode.FAILED) == "1"
