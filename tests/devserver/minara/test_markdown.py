"""`minara-test:markdown TOKENS RATE SEED`: the seeded long Markdown answer of the streaming
benchmarks, a token per `text_delta` at a fixed rate, as the Talkie server's
`talkie-test:markdown` streams it."""

from __future__ import annotations

import httpx
import pytest

from talkie_tui.devserver.common.clock import parse_iso
from talkie_tui.devserver.common.long_answer import MAX_TOKENS, end_line, long_answer
from tests.devserver.minara.wire import run_turn, session_detail, text_of, types_of


def _deltas(events: list[tuple[int, dict]]) -> list[str]:
    return [event["data"]["text"] for _, event in events if event["type"] == "text_delta"]


def test_markdown_streams_the_seeded_answer_a_token_per_delta(
    http: httpx.Client, fast_url: str
) -> None:
    session_id, events = run_turn(http, fast_url, "minara-test:markdown 60 0 3")
    deltas = _deltas(events)
    assert types_of(events) == ["start", *["text_delta"] * 60, "done"]
    assert all(len(delta) == 4 for delta in deltas)
    assert "".join(deltas) == long_answer(60, 3) and text_of(events).endswith(end_line(3) + "\n")
    stored = session_detail(http, fast_url, session_id)["messages"][-1]
    assert stored["role"] == "assistant" and stored["content"] == long_answer(60, 3)
    # Seeded: another seed, another text; the same seed, the same text.
    assert text_of(run_turn(http, fast_url, "minara-test:markdown 60 0 4")[1]) == long_answer(60, 4)
    assert long_answer(60, 4) != long_answer(60, 3)


def test_markdown_is_paced_at_its_rate(
    http: httpx.Client, fast_url: str, pauses: list[float]
) -> None:
    session_id, events = run_turn(http, fast_url, "minara-test:markdown 60 200 3")
    assert text_of(events) == long_answer(60, 3)
    # Paced: the turn waited for tokens not due yet, never longer than one token's 1/200 s
    # (the schedule itself: tests/devserver/talkie/test_testmode.py, on a fake clock).
    assert any(pause > 0 for pause in pauses)
    assert all(pause <= 1 / 200 + 1e-9 for pause in pauses)
    # The stored rows span the stream (benchmarks/minara_stream.py reads its token times from
    # them): on a clock that moves only by the turn's pauses, the answer is stamped after all.
    user, answer = session_detail(http, fast_url, session_id)["messages"][-2:]
    span = (parse_iso(answer["created_at"]) - parse_iso(user["created_at"])).total_seconds()
    assert span == pytest.approx(sum(pauses), abs=0.002)


def test_unpaced_markdown_streams_a_long_answer_whole(http: httpx.Client, fast_url: str) -> None:
    _, events = run_turn(http, fast_url, "minara-test:markdown 5000 0 7")
    assert len(_deltas(events)) == 5000 and text_of(events) == long_answer(5000, 7)


BAD = ["", " lots", " 10", " 10 0", " 10 0 1 2", " 0 0 1", " -5 0 1", " 10 -1 1", " 10 x 1"]


@pytest.mark.parametrize("arguments", [*BAD, f" {MAX_TOKENS + 1} 0 1"])
def test_bad_arguments_give_the_usage(http: httpx.Client, fast_url: str, arguments: str) -> None:
    _, events = run_turn(http, fast_url, f"minara-test:markdown{arguments}")
    assert types_of(events)[-1] == "done"
    assert text_of(events) == (
        "Usage: `minara-test:markdown <tokens> <tokens per second, 0: unpaced> <seed>`."
    )


def test_the_unknown_message_lists_markdown(http: httpx.Client, fast_url: str) -> None:
    _, events = run_turn(http, fast_url, "minara-test:markdowns")
    assert "markdown TOKENS RATE SEED" in text_of(events)
