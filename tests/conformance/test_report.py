"""Output lines: one plain line per check, server text cleaned, quoted and truncated."""

from __future__ import annotations

import pytest

from talkie_tui.conformance.report import Result, show, summary_line


def test_show_removes_terminal_controls_and_escapes_newlines() -> None:
    shown = show("\x1b]0;title\x07red\x1b[31m text\nnext\x9b2J")
    assert shown == '"red text\\nnext"'


def test_show_truncates_long_server_text() -> None:
    assert show("x" * 500, limit=10) == '"xxxxxxxxxx…"'


def test_show_renders_non_text_as_compact_json() -> None:
    assert show(None) == "null"
    assert show(["button", "voice"]) == '["button", "voice"]'


def test_lines_have_the_documented_shape() -> None:
    assert Result("echo", "PASS").line() == "PASS echo"
    assert Result("echo", "FAIL", "it\nbroke\x1b[2J").line() == "FAIL echo: it broke"
    assert Result("x", "SKIP", "why").line() == "SKIP x: why"
    assert Result("x", "FAIL", 'got "a  b"\u2028').line() == 'FAIL x: got "a  b"'
    assert len(Result("x", "FAIL", "y" * 1000).line()) <= 310


@pytest.mark.parametrize("protocol", ["talkie/1", "minara", "cuckoo hub", "cuckoo agent"])
def test_the_summary_counts_each_verdict_in_the_same_words(protocol: str) -> None:
    results = [Result("a", "PASS"), Result("b", "FAIL", "no"), Result("c", "SKIP", "n/a")]
    line = summary_line("http://h", results, 1.25, protocol)
    assert line == (
        f"{protocol} conformance of http://h: NOT conformant — 1 passed, 1 failed, 1 skipped "
        "(1.2 s)"
    )
