"""Where the bridge ends one message of a long reply (`bridge.split`): the boundary rule on its
own, with small limits (soft 40, limit 80) so that the cases read at a glance."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from talkie_tui.bridge.split import (
    MESSAGE_CHARS,
    SOFT_CHARS,
    Cut,
    Fence,
    Splitter,
    fence_at,
    find_cut,
    split_text,
)
from talkie_tui.devserver.common.long_answer import long_answer, tokens_of
from talkie_tui.devserver.talkie.testmode import code_answer

SOFT, LIMIT = 40, 80
SMALL = {"soft": SOFT, "limit": LIMIT}


def _messages(pieces: list[str], **limits: int) -> list[str]:
    """The messages a Splitter makes of the text given in `pieces`."""
    splitter = Splitter(**limits)
    messages: list[str] = []
    current: list[str] = []
    for chunk in [c for piece in pieces for c in splitter.feed(piece)] + splitter.finish():
        current.append(chunk.text)
        if chunk.ends:
            messages.append("".join(current))
            current = []
    assert current == []
    return messages


def _open_at(text: str, at: int) -> Fence | None:
    """The fence open where the line holding `at` begins."""
    return fence_at(text[: text.rfind("\n", 0, at) + 1])


def _unfenced(messages: list[str], text: str) -> tuple[str, list[int]]:
    """The messages' texts joined without the fence lines the bridge added, and where in
    `text` each began. Which lines were added is read from the reply's own text: a message
    that begins where a fence is open must begin with its opening line, and one that ends
    there must end with its closing run."""
    joined, starts, at = [], [], 0
    for index, message in enumerate(messages):
        starts.append(at)
        body = message
        opened = _open_at(text, at) if index else None
        if opened is not None:
            assert body.startswith(opened.reopen), (index, body[:40])
            body = body[len(opened.reopen) :]
        if index < len(messages) - 1:
            for size in range(1, 12):
                cut = at + len(body) - size
                fence = _open_at(text, cut)
                if fence is None:
                    continue
                close = fence.close(at_line_start=text[cut - 1 : cut] in ("", "\n"))
                if len(close) == size and body.endswith(close) and text[at:cut] == body[:-size]:
                    body = body[:-size]
                    break
            else:
                assert _open_at(text, at + len(body)) is None, (index, body[-40:])
        assert text[at : at + len(body)] == body, (index, body[:40])
        joined.append(body)
        at += len(body)
    return "".join(joined), starts


def _breaks(text: str) -> list[int]:
    """Positions just after a blank line outside any fence (where a paragraph break cuts)."""
    found, start, fence = [], 0, None
    while (end := text.find("\n", start)) != -1:
        line = text[start:end]
        if fence is None and not line.strip(" \t\r"):
            found.append(end + 1)
        fence = fence_at(line + "\n", fence)
        start = end + 1
    return found


# --- the rule ---------------------------------------------------------------------------------


def test_a_short_text_is_one_message_and_waits_for_its_end() -> None:
    assert find_cut("Hello.\n\nMore.", **SMALL) is None
    assert find_cut("Hello.\n\nMore.", final=True, **SMALL) == Cut(13)
    assert split_text("Hello.\n\nMore.", **SMALL) == ["Hello.\n\nMore."]
    assert split_text("", **SMALL) == []


def test_past_the_soft_limit_a_message_ends_at_the_next_paragraph_break() -> None:
    first = "a" * 30 + "\n\n" + "b" * 20 + " end.\n\n"  # the first break is before 40
    text = first + "Next paragraph.\n"
    assert find_cut(text, **SMALL) == Cut(len(first))
    assert split_text(text, **SMALL) == [first, "Next paragraph.\n"]
    # Further blank lines begin the next message (Markdown skips them there).
    assert split_text(first + "\n \nNext.", **SMALL) == [first, "\n \nNext."]


def test_a_paragraph_break_is_found_as_soon_as_it_arrives() -> None:
    text = "w" * 45 + "\n\n"
    assert find_cut(text, **SMALL) == Cut(47)  # no need to see what follows


def test_without_a_blank_line_the_last_line_break_that_fits() -> None:
    lines = [f"line {n:02} of a list" for n in range(8)]  # 17 characters and a "\n"
    text = "\n".join(lines) + "\n"
    messages = split_text(text, **SMALL)
    assert messages[0] == "".join(line + "\n" for line in lines[:4])  # 72: a fifth is 90
    assert "".join(messages) == text
    assert all(m.endswith("\n") for m in messages)


def test_without_a_line_break_the_last_space_then_a_hard_cut() -> None:
    words = "word " * 30
    assert split_text(words, **SMALL) == ["word " * 16, "word " * 14]
    assert split_text("x" * 200, **SMALL) == ["x" * 80, "x" * 80, "x" * 40]
    # A tab is a space too; a space before the soft limit is not taken.
    assert split_text("y" * 30 + " " + "z" * 60, **SMALL) == ["y" * 30 + " " + "z" * 49, "z" * 11]
    assert split_text("y" * 50 + "\t" + "z" * 60, **SMALL)[0] == "y" * 50 + "\t"


def test_a_hard_cut_splits_no_crlf_and_no_combining_mark() -> None:
    text = "x" * 79 + "\r\n" + "y" * 10  # no line break fits, no space: cut before the "\r"
    assert split_text(text, soft=40, limit=80)[0] == "x" * 79
    accented = "e" * 79 + "e\u0301" + "z" * 10  # é as e + combining acute at 79, 80
    assert split_text(accented, **SMALL)[0] == "e" * 79
    family = "f" * 78 + "\U0001f468\u200d\U0001f467" + "z"
    assert split_text(family, **SMALL)[0] == "f" * 78


def test_crlf_text_is_cut_at_its_paragraph_breaks_and_lines() -> None:
    text = "a" * 45 + "\r\n\r\nNext.\r\n"
    assert split_text(text, **SMALL) == ["a" * 45 + "\r\n\r\n", "Next.\r\n"]
    lines = "".join(f"line {n:02} of crlf\r\n" for n in range(8))
    messages = split_text(lines, **SMALL)
    assert "".join(messages) == lines and all(m.endswith("\r\n") for m in messages)


# --- fences -----------------------------------------------------------------------------------


def test_a_blank_line_inside_a_fence_is_not_a_paragraph_break() -> None:
    code = "```py\n" + "".join(f"v{n} = {n}\n\n" for n in range(12)) + "```\n"
    messages = split_text(code, **SMALL)
    assert len(messages) > 1
    for message in messages[:-1]:
        assert message.endswith("\n```")  # closed at a line break inside the block
    for message in messages[1:]:
        assert message.startswith("```py\n")  # opened again, with its info string
    assert _unfenced(messages, code)[0] == code
    assert all(len(m) <= LIMIT for m in messages)


def test_a_tilde_fence_is_closed_and_opened_again_the_same() -> None:
    code = "~~~~ sh  \n" + "".join(f"echo {n}\n" for n in range(20)) + "~~~~\n"
    messages = split_text(code, **SMALL)
    assert messages[0].startswith("~~~~ sh  \n") and messages[0].endswith("\n~~~~")
    assert messages[1].startswith("~~~~ sh  \n")
    assert _unfenced(messages, code)[0] == code


def test_a_longer_backtick_run_is_closed_only_by_as_long_a_run() -> None:
    # A Markdown example: the inner ``` lines are code, not fences.
    inner = "```\ninner\n```\n\n"
    text = "````md\n" + inner * 6 + "````\n\nAfter.\n"
    assert fence_at("````md\n```\n") == Fence("````", "````md\n")
    assert fence_at("````md\n```\n````  \n") is None
    messages = split_text(text, **SMALL)
    assert all(m.endswith("\n````") or m.endswith("````") for m in messages[:-1])
    assert all(m.startswith("````md\n") for m in messages[1:-1])
    assert _unfenced(messages, text)[0] == text


def test_a_fence_in_a_crlf_text_is_closed_and_opened_with_crlf() -> None:
    code = "```js\r\n" + "".join(f"let v{n} = {n};\r\n" for n in range(10)) + "```\r\n"
    messages = split_text(code, **SMALL)
    assert messages[0].endswith("\r\n```") or messages[0].endswith(";\r\n```")
    assert messages[1].startswith("```js\r\n")
    assert _unfenced(messages, code)[0] == code


def test_a_fence_indented_as_code_or_with_a_backtick_in_its_info_is_not_a_fence() -> None:
    assert fence_at("    ```\n") is None  # indented four: an indented code block's line
    assert fence_at("\t```\n") is None
    assert fence_at("``` a`b\n") is None  # inline code
    assert fence_at("   ```\n") == Fence("```", "   ```\n")  # three spaces: a fence
    assert fence_at("~~~ a`b\n") == Fence("~~~", "~~~ a`b\n")
    assert fence_at("```\n~~~\n") is not None  # ~~~ does not close ```
    assert fence_at("```\n    ```\n") is not None  # a closing fence is indented three at most
    indented = "Example:\n\n    ```\n    code\n" + "p" * 40 + "\n\nNext.\n"
    # The blank line after the indented block's lines is a paragraph break.
    assert find_cut(indented, **SMALL) == Cut(indented.index("Next."))


def test_a_message_that_ends_mid_line_in_a_fence_closes_on_a_line_of_its_own() -> None:
    text = "```\n" + "token " * 30 + "\n```\n"
    messages = split_text(text, **SMALL)
    assert messages[0].endswith("token \n```")
    assert messages[1].startswith("```\ntoken")
    assert _unfenced(messages, text)[0] == text
    assert all(len(m) <= LIMIT for m in messages)


def test_a_long_opening_line_is_opened_again_without_its_info_string() -> None:
    line = "```" + "i" * 120 + "\n"
    fence = fence_at(line)
    assert fence is not None and fence.reopen == "```\n" and fence.close(at_line_start=False)


# --- the answers the end-to-end tests stream --------------------------------------------------


def test_the_benchmark_answer_is_cut_at_paragraph_breaks_outside_code() -> None:
    text = long_answer(10_000, 7)
    messages = split_text(text)
    assert "".join(messages) == text and len(messages) > 5
    breaks = set(_breaks(text))
    at = 0
    for message in messages[:-1]:
        at += len(message)
        assert SOFT_CHARS <= len(message) <= MESSAGE_CHARS
        assert at in breaks and fence_at(text[:at]) is None
    assert len(messages[-1]) <= MESSAGE_CHARS


def test_one_huge_code_block_is_cut_at_its_lines_and_fenced_again() -> None:
    text = code_answer(500)
    messages = split_text(text)
    assert len(messages) == 3 and all(len(m) <= MESSAGE_CHARS for m in messages)
    assert messages[0].startswith("The code") and messages[0].endswith("\n```")
    assert messages[1].startswith("```python\n") and messages[1].endswith("\n```")
    assert messages[2].startswith("```python\n")
    assert _unfenced(messages, text)[0] == text


def test_how_the_text_arrives_does_not_move_a_cut() -> None:
    """A replay may bring the same text in other deltas: the messages are the same."""
    for text in (long_answer(6_000, 3), code_answer(700), "word " * 5000):
        whole = split_text(text)
        assert _messages(tokens_of(text)) == whole
        rng = random.Random(len(text))
        pieces, at = [], 0
        while at < len(text):
            size = rng.choice((1, 2, 7, 50, 900))
            pieces.append(text[at : at + size])
            at += size
        assert _messages(pieces) == whole


# --- any text ---------------------------------------------------------------------------------

_LINES = st.sampled_from(
    [
        "",
        "  ",
        "words of a paragraph",
        "x",
        "```",
        "```py",
        "````",
        "~~~",
        "~~~~ sh",
        "    ```",
        "   ```",
        "\t~~~",
        "``` a`b",
        "- item",
        "> quote",
    ]
)


@pytest.mark.fuzz
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lines=st.lists(_LINES, max_size=80),
    crlf=st.booleans(),
    sizes=st.lists(st.integers(1, 30), min_size=1, max_size=10),
)
def test_any_text_of_short_lines(lines: list[str], crlf: bool, sizes: list[int]) -> None:
    """Every message fits; without the fence lines the bridge added, the messages are the
    text; each ends after a line (none splits one) and, but the last, at the first paragraph
    break past the soft limit when one fits; and the deltas the text came in change nothing."""
    newline = "\r\n" if crlf else "\n"
    text = "".join(line + newline for line in lines)
    messages = split_text(text, **SMALL)
    pieces, at, turn = [], 0, 0
    while at < len(text):
        size = sizes[turn % len(sizes)]
        pieces.append(text[at : at + size])
        at, turn = at + size, turn + 1
    assert _messages(pieces, **SMALL) == messages
    assert all(len(m) <= LIMIT for m in messages)
    joined, starts = _unfenced(messages, text)
    assert joined == text
    breaks = _breaks(text)
    for index, start in enumerate(starts[1:]):
        assert text[start - 1] == "\n"  # a cut after a whole line
        begin = starts[index]
        line_start = text.rfind("\n", 0, begin) + 1
        opened = fence_at(text[:line_start])
        prefix = len(opened.reopen) if opened is not None and index else 0
        fitting = [b for b in breaks if begin + SOFT - prefix <= b <= begin + LIMIT - prefix]
        if fitting:
            assert start == fitting[0], (index, begin, fitting, messages[index])
