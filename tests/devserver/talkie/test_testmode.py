"""The §11 test-mode scripts."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import datetime, timedelta
from types import SimpleNamespace

import httpx
import pytest

from tests.helpers import (
    AUTH,
    TEST_TOKEN,
    ask,
    customs,
    iter_sse,
    new_id,
    run_body,
    text_of,
    types_of,
)

ISO_Z = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")


def _parse(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


@pytest.mark.parametrize(
    "text",
    [
        "hello",
        "  leading and trailing spaces  ",
        "tabs\tand\nnewlines\n\n",
        "žluťoučký kůň úpěl ďábelské ódy 🐎 日本語",
        "line\u2028separator and \u2029 paragraph",
        "",
        "a " * 200,
    ],
    ids=["plain", "spaces", "newlines", "unicode", "u2028", "empty", "long"],
)
def test_echo_is_exact(http: httpx.Client, fast_url: str, text: str) -> None:
    events = ask(http, fast_url, f"talkie-test:echo {text}")
    starts = [e for e in events if e["type"] == "TEXT_MESSAGE_START"]
    assert len(starts) == 1
    assert text_of(events) == text
    assert types_of(events)[0] == "RUN_STARTED" and types_of(events)[-1] == "RUN_FINISHED"


def test_echo_is_split_into_several_deltas(http: httpx.Client, fast_url: str) -> None:
    events = ask(http, fast_url, "talkie-test:echo one two three four five six")
    assert types_of(events).count("TEXT_MESSAGE_CONTENT") > 1


def test_card(http: httpx.Client, fast_url: str) -> None:
    events = ask(http, fast_url, "talkie-test:card")
    kinds = types_of(events)
    start = next(e for e in events if e["type"] == "TOOL_CALL_START")
    end = next(e for e in events if e["type"] == "TOOL_CALL_END")
    assert start["toolCallName"] == "lookup_record"
    assert start["metadata"]["label"] == "Looking up the record…"
    assert end["toolCallId"] == start["toolCallId"] and end["metadata"]["ok"] is True
    (card,) = customs(events, "talkie.card")
    assert kinds.index("TOOL_CALL_END") < kinds.index("CUSTOM") < kinds.index("TEXT_MESSAGE_START")
    assert card["version"] == 1 and card["id"] and card["title"] and card["fallbackText"]
    fields = [block for block in card["blocks"] if block["type"] == "fields"]
    assert fields and all({"label", "value"} == set(f) for f in fields[0]["fields"])
    assert text_of(events)


def test_action(http: httpx.Client, fast_url: str) -> None:
    thread_id = new_id("t")
    events = ask(http, fast_url, "talkie-test:action", thread_id=thread_id)
    (action,) = customs(events, "talkie.action")
    assert action["status"] == "pending"
    assert action["riskLevel"] == "low"
    assert action["confirm"]["methods"] == ["button", "voice"]
    assert action["version"] == 1 and action["summary"]
    assert action["threadId"] == thread_id
    tool_ids = {e["toolCallId"] for e in events if e["type"] == "TOOL_CALL_START"}
    assert action["toolCallId"] in tool_ids
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", action["paramsHash"])
    assert ISO_Z.match(action["createdAt"]) and ISO_Z.match(action["expiresAt"])
    created, expires = _parse(action["createdAt"]), _parse(action["expiresAt"])
    assert expires - created >= timedelta(seconds=60)
    assert text_of(events)
    decision = http.post(
        f"{fast_url}/api/talkie/actions/{action['id']}/decision",
        json={"decision": "confirm", "paramsHash": action["paramsHash"], "method": "button"},
        headers=AUTH,
    )
    assert decision.status_code == 200
    assert decision.json()["action"]["status"] == "done"


def test_error(http: httpx.Client, fast_url: str) -> None:
    events = ask(http, fast_url, "talkie-test:error")
    assert types_of(events) == ["RUN_STARTED", "RUN_ERROR"]
    error = events[1]
    assert error["code"] == "upstream_unavailable"
    assert error["metadata"] == {"retryable": True}
    assert error["message"]


def test_slow_spreads_deltas_over_slow_seconds(
    http: httpx.Client, devserver: Callable[..., str], pauses: list[float]
) -> None:
    """The deltas are spread evenly over `slow_seconds`: equal pauses between them, adding up
    to it; and streamed, the first reaching the client before the run has paused its way to
    the end. What the server waited for, not what a clock saw on a busy machine."""
    url = devserver(test_mode=True, dev_token=TEST_TOKEN, slow_seconds=1.0)
    deltas = 0
    paused_at_first = -1
    with http.stream(
        "POST", f"{url}/api/talkie/run", json=run_body("talkie-test:slow"), headers=AUTH
    ) as response:
        for kind, data in iter_sse(response.iter_text()):
            if kind == "data" and json.loads(data)["type"] == "TEXT_MESSAGE_CONTENT":
                if not deltas:
                    paused_at_first = len(pauses)
                deltas += 1
    assert deltas >= 10
    assert len(pauses) == deltas - 1 and len(set(pauses)) == 1
    assert sum(pauses) == pytest.approx(1.0 * (deltas - 1) / deltas)
    assert max(pauses) < 0.3
    assert 0 <= paused_at_first < len(pauses)


def test_code_answer_is_one_long_fenced_block(http: httpx.Client, fast_url: str) -> None:
    from talkie_tui.devserver.talkie.testmode import code_answer

    events = ask(http, fast_url, "talkie-test:code 400")
    text = text_of(events)
    assert text == code_answer(400) and len(text) > 8000
    assert text.count("```") == 2 and "\n\n```python\n" in text and "total_399 = " in text
    assert types_of(events).count("TEXT_MESSAGE_CONTENT") == -(-len(text) // 4)
    for wrong in ("talkie-test:code lots", "talkie-test:code 0", "talkie-test:code 20001"):
        assert "Usage:" in text_of(ask(http, fast_url, wrong))


def test_unknown_test_command_answers_with_the_list(http: httpx.Client, fast_url: str) -> None:
    text = text_of(ask(http, fast_url, "talkie-test:nope"))
    assert "talkie-test:nope" in text and "echo" in text


def test_without_test_mode_the_demo_agent_answers(
    http: httpx.Client, devserver: Callable[..., str]
) -> None:
    url = devserver(demo_delay=0.0)
    for message in ("talkie-test:echo hi", "talkie-test:error", "talkie-test:card"):
        events = ask(http, url, message)
        assert types_of(events)[-1] == "RUN_FINISHED"
        assert "help" in text_of(events)
        assert not customs(events, "talkie.card")


@pytest.mark.parametrize(
    ("overslept", "sent_at", "asked"),
    [
        pytest.param(0.0, [0.0, 0.25, 0.5, 0.75, 1.0], [0.25] * 4, id="on time"),
        # A sleep that wakes 0.6 s late: the pieces due meanwhile go at once, then on schedule.
        pytest.param(0.6, [0.0, 0.85, 0.85, 0.85, 1.0], [0.25, 0.15], id="late wake-up"),
    ],
)
async def test_paced_sends_each_piece_when_due(
    monkeypatch: pytest.MonkeyPatch, overslept: float, sent_at: list[float], asked: list[float]
) -> None:
    """The schedule of the paced test modes, on a clock that moves only when slept: piece `i`
    at `i / rate` s after the first, never drifting by a late wake-up."""
    from talkie_tui.devserver.common import pacing

    now = 100.0
    slept: list[float] = []

    class Loop:
        def time(self) -> float:
            return now

    async def sleep(seconds: float) -> None:
        nonlocal now
        slept.append(seconds)
        now += seconds + (overslept if len(slept) == 1 else 0.0)

    monkeypatch.setattr(pacing, "asyncio", SimpleNamespace(get_running_loop=Loop))
    pieces = ["a", "b", "c", "d", "e"]
    sent = [(piece, now - 100.0) async for piece in pacing.paced(pieces, 4.0, sleep)]
    assert [piece for piece, _at in sent] == pieces
    assert [at for _piece, at in sent] == pytest.approx(sent_at)
    assert slept == pytest.approx(asked)


def test_markdown_answer_is_seeded_and_paced(
    http: httpx.Client, fast_url: str, pauses: list[float]
) -> None:
    from talkie_tui.devserver.common.long_answer import end_line, long_answer

    events = ask(http, fast_url, "talkie-test:markdown 60 200 3")
    deltas = [e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT"]
    assert len(deltas) == 60 and all(len(delta) == 4 for delta in deltas)
    assert "".join(deltas) == long_answer(60, 3) and text_of(events).endswith(end_line(3) + "\n")
    # Paced: the run waited for tokens that were not due yet, never longer than one token's
    # 1/200 s (the schedule itself: test_paced_sends_each_piece_when_due, on a fake clock).
    assert any(pause > 0 for pause in pauses)
    assert all(pause <= 1 / 200 + 1e-9 for pause in pauses)
    pauses.clear()
    unpaced = ask(http, fast_url, "talkie-test:markdown 60 0 3")
    assert text_of(unpaced) == long_answer(60, 3)
    assert all(pause == 0 for pause in pauses)
    assert "Usage:" in text_of(ask(http, fast_url, "talkie-test:markdown lots"))


def test_long_answer_has_the_markdown_it_is_for() -> None:
    from talkie_tui.devserver.common.long_answer import long_answer

    text = long_answer(10_000, 7)
    assert len(text) == 40_000 and text == long_answer(10_000, 7) != long_answer(10_000, 8)
    for mark in ("\n## ", "\n### ", "\n  - ", "\n    - **", "\n```", "**", "\n1. ", "\n> "):
        assert mark in text
