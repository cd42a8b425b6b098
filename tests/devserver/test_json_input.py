"""The shared decoder of client JSON: plain JSON passes, what crashed a server is refused."""

from __future__ import annotations

import pytest

from talkie_tui.devserver.common.json_input import (
    MAX_DEPTH,
    MAX_NUMBER_CHARS,
    JsonInputError,
    decode,
)


@pytest.mark.parametrize(
    "text",
    [
        '{"a": [1, -2.5, 1e5, true, null, "x"]}',
        '"\\ud83d\\ude00"',  # a surrogate pair is one character
        '{"a": "[[[[{{{{\\"]]"}',  # brackets inside strings do not nest
        "[" * MAX_DEPTH + "]" * MAX_DEPTH,
        "[" + ",".join(["[]"] * 200) + "]",  # many brackets, shallow
        "1" * MAX_NUMBER_CHARS,
    ],
)
def test_plain_json_passes(text: str) -> None:
    decode(text)
    decode(text.encode())


@pytest.mark.parametrize(
    "raw",
    [
        "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1),
        "[" * 50_000 + "]" * 50_000,
        "1" * 5_000,
        "0." + "1" * MAX_NUMBER_CHARS,
        "1e999",
        "NaN",
        "-Infinity",
        '"\\ud800"',
        '{"\\udc00": 1}',
        '[1, {"a": ["\\ud800x"]}]',
        b'"\xed\xa0\x80"',  # a surrogate encoded as UTF-8
        b"\xff\xfe",
        "{",
        "[" * 70 + '"' + '\\"' * 10_000,  # unterminated, escaped quotes: refused, not slow
    ],
)
def test_what_crashed_a_server_is_refused(raw: str | bytes) -> None:
    with pytest.raises(JsonInputError):
        decode(raw)


def test_a_document_refused_for_a_surrogate_is_still_readable() -> None:
    with pytest.raises(JsonInputError) as refused:
        decode('{"cid": "c1", "text": "\\ud800"}')
    assert refused.value.document["cid"] == "c1"
