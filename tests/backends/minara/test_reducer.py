"""The Minara reducer: each event of `minara-stream.md`, bad input, and live equals history."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from talkie_tui.backends.minara.reducer import MinaraConversation, conversation_from_rows
from talkie_tui.chat.turns import (
    InterjectionPart,
    NoticePart,
    Part,
    QuestionOption,
    QuestionPart,
    TextPart,
    TodoPart,
    ToolPart,
    Turn,
    UiBlockPart,
)
from talkie_tui.core.errors import TalkieError, UnsupportedProtocolVersion
from tests.backends.minara.turn_shapes import shapes
from tests.fuzz.kit import fuzz_settings, json_like, nasty_text, unsafe

QUESTION = {
    "id": "q_1",
    "kind": "select",
    "asked_by": {"agent": "planner", "tool": "swap"},
    "questions": [
        {
            "text": "Which account?",
            "options": [{"label": "Salary", "description": "the main one"}, {"label": "Savings"}],
            "multi": False,
            "placeholder": "…",
        }
    ],
    "writeEndpoint": "/v1/credentials/exchange_api_key",
    "expires_at": "2026-12-01T10:05:00Z",
}


def ev(event_type: str, /, **data: Any) -> dict[str, Any]:
    """One `{type, data}` event."""
    return {"type": event_type, "data": data}


def fold(*events: dict[str, Any]) -> MinaraConversation:
    """A conversation with `events` applied, after a user message."""
    conversation = MinaraConversation()
    conversation.add_user_message("u1", "hello")
    for event in events:
        conversation.apply(event)
    return conversation


def answer(conversation: MinaraConversation) -> Turn:
    """The last turn, an assistant one."""
    turn = conversation.turns[-1]
    assert turn.role == "assistant"
    return turn


# --- each event -----------------------------------------------------------------------------


def test_start_begins_a_streaming_turn_with_its_id_and_session() -> None:
    conversation = fold(ev("start", session_id="s1", turn_id="t1"))
    turn = answer(conversation)
    assert (turn.id, turn.state, conversation.thread_id) == ("t1", "streaming", "s1")


def test_start_without_version_or_with_version_1_is_read() -> None:
    fold(ev("start", session_id="s1"))
    fold(ev("start", session_id="s1", protocol_version=1))


@pytest.mark.parametrize("version", [2, 3, 1.5])
def test_a_newer_protocol_version_is_refused_clearly(version: float) -> None:
    with pytest.raises(UnsupportedProtocolVersion) as caught:
        fold(ev("start", session_id="s1", protocol_version=version))
    assert isinstance(caught.value, TalkieError)
    assert str(version) in caught.value.message


def test_a_version_that_is_not_a_number_is_skipped_like_an_absent_one() -> None:
    conversation = fold(ev("start", session_id="s1", protocol_version="2"))
    assert answer(conversation).state == "streaming"


def test_a_second_start_ends_an_unfinished_turn() -> None:
    conversation = fold(ev("start", turn_id="t1"), ev("text_delta", text="a"), ev("start"))
    assert [t.state for t in conversation.turns[1:]] == ["truncated", "streaming"]


def test_text_deltas_append_to_the_open_segment() -> None:
    conversation = fold(ev("start"), ev("text_delta", text="Hel"), ev("text_delta", text="lo"))
    parts = answer(conversation).parts
    assert len(parts) == 1 and isinstance(parts[0], TextPart)
    assert parts[0].text == "Hello"


def test_text_after_another_segment_opens_a_new_one() -> None:
    conversation = fold(
        ev("start"),
        ev("text_delta", text="a"),
        ev("tool_call_start", id="c1", name="swap"),
        ev("text_delta", text="b"),
        ev("text_delta", text="c"),
    )
    parts = answer(conversation).parts
    assert [type(p) for p in parts] == [TextPart, ToolPart, TextPart]
    assert [p.text for p in parts if isinstance(p, TextPart)] == ["a", "bc"]
    assert len({p.message_id for p in parts if isinstance(p, TextPart)}) == 2


def test_empty_text_opens_nothing() -> None:
    assert answer(fold(ev("start"), ev("text_delta", text=""))).parts == []


def test_a_tool_runs_then_ends_ok() -> None:
    conversation = fold(
        ev("start"), ev("tool_call_start", id="c1", name="swap", label="Swapping", args={"a": 1})
    )
    tool = answer(conversation).parts[0]
    assert isinstance(tool, ToolPart)
    assert (tool.name, tool.label, tool.state) == ("swap", "Swapping", "running")
    conversation.apply(ev("tool_call_end", id="c1", ok=True, summary="done"))
    assert (tool.state, tool.error) == ("ok", None)


def test_a_tool_without_label_shows_its_name() -> None:
    tool = answer(fold(ev("start"), ev("tool_call_start", id="c1", name="swap"))).parts[0]
    assert isinstance(tool, ToolPart) and tool.label == "swap"


def test_a_failed_tool_carries_its_error() -> None:
    conversation = fold(
        ev("start"),
        ev("tool_call_start", id="c1", name="swap"),
        ev("tool_call_end", id="c1", ok=False, error="no funds"),
    )
    tool = answer(conversation).parts[0]
    assert isinstance(tool, ToolPart) and (tool.state, tool.error) == ("failed", "no funds")


def test_a_failed_tool_without_error_gets_a_default() -> None:
    conversation = fold(
        ev("start"),
        ev("tool_call_start", id="c1", name="x"),
        ev("tool_call_end", id="c1", ok=False),
    )
    tool = answer(conversation).parts[0]
    assert isinstance(tool, ToolPart) and tool.state == "failed" and tool.error


def test_a_tool_start_seen_twice_is_shown_once() -> None:
    conversation = fold(
        ev("start"),
        ev("tool_call_start", id="c1", name="swap"),
        ev("tool_call_end", id="c1", ok=True),
    )
    assert conversation.apply(ev("tool_call_start", id="c1", name="swap")) is None
    parts = answer(conversation).parts
    assert len(parts) == 1 and isinstance(parts[0], ToolPart) and parts[0].state == "ok"


@pytest.mark.parametrize(
    "block",
    [
        {"kind": "markdown", "text": "**hi**"},
        {"kind": "table", "columns": ["a", "b"], "rows": [[1, 2]]},
        {"kind": "kv", "items": [{"label": "Fee", "value": "1 USD"}]},
        {"kind": "link", "label": "Docs", "url": "https://example.org/"},
        {"kind": "chart", "title": "Price", "series": [{"label": "BTC", "points": [[1, 2]]}]},
    ],
)
def test_each_ui_block_kind_is_a_part(block: dict[str, Any]) -> None:
    part = answer(fold(ev("start"), ev("ui_block", id="b1", block=block))).parts[0]
    assert isinstance(part, UiBlockPart)
    assert (part.block_id, part.kind, part.data) == ("b1", block["kind"], block)


def test_an_unknown_block_kind_is_kept_only_with_a_fallback() -> None:
    conversation = fold(
        ev("start"),
        ev("ui_block", id="b1", block={"kind": "map", "lat": 1}),
        ev("ui_block", id="b2", block={"kind": "map", "fallback_text": "A map of Prague"}),
    )
    parts = answer(conversation).parts
    assert len(parts) == 1 and isinstance(parts[0], UiBlockPart)
    assert parts[0].data["fallback_text"] == "A map of Prague"


def test_a_block_missing_its_fields_is_skipped() -> None:
    conversation = fold(
        ev("start"),
        ev("ui_block", id="b1", block={"kind": "table", "columns": "a,b"}),
        ev("ui_block", id="b2", block={"kind": "link", "label": "x"}),
        ev("ui_block", id="b3", block="markdown"),
    )
    assert answer(conversation).parts == []


def test_block_strings_are_cleaned() -> None:
    block = {"kind": "table", "columns": ["\x1b[2Ja"], "rows": [["\x1b]52;c;x\x07b"]]}
    part = answer(fold(ev("start"), ev("ui_block", id="b1", block=block))).parts[0]
    assert isinstance(part, UiBlockPart)
    assert part.data["columns"] == ["a"] and part.data["rows"] == [["b"]]


def test_todos_are_replaced_whole_in_place() -> None:
    conversation = fold(
        ev("start"),
        ev("text_delta", text="Plan:"),
        ev("todos", items=[{"text": "Quote", "done": False}, {"text": "Swap", "done": False}]),
    )
    parts = answer(conversation).parts
    todo = parts[0]
    assert isinstance(todo, TodoPart) and todo.items == [("Quote", False), ("Swap", False)]
    change = conversation.apply(ev("todos", items=[{"text": "Quote", "done": True}]))
    assert change is todo and todo.items == [("Quote", True)]
    assert sum(isinstance(p, TodoPart) for p in answer(conversation).parts) == 1


def test_a_question_opens_then_closes_with_its_outcome() -> None:
    conversation = fold(ev("start"), ev("pending_question_added", **QUESTION))
    part = answer(conversation).parts[0]
    assert isinstance(part, QuestionPart)
    assert (part.question_id, part.kind, part.outcome) == ("q_1", "select", None)
    assert part.asked_by == {"agent": "planner", "tool": "swap"}
    assert part.expires_at == "2026-12-01T10:05:00Z"
    assert part.write_endpoint == "/v1/credentials/exchange_api_key"
    (question,) = part.questions
    assert question.text == "Which account?" and question.placeholder == "…"
    assert question.options == (
        QuestionOption("Salary", "the main one"),
        QuestionOption("Savings", None),
    )
    assert conversation.questions["q_1"] is part
    assert conversation.apply(ev("pending_question_resolved", id="q_1", outcome="timeout")) is part
    assert part.outcome == "timeout"


@pytest.mark.parametrize("outcome", ["answered", "cancelled", None, "weird"])
def test_a_question_resolved_without_a_known_outcome_is_answered(outcome: str | None) -> None:
    conversation = fold(ev("start"), ev("pending_question_added", **QUESTION))
    data = {"id": "q_1"} if outcome is None else {"id": "q_1", "outcome": outcome}
    conversation.apply({"type": "pending_question_resolved", "data": data})
    expected = outcome if outcome in ("answered", "cancelled") else "answered"
    assert conversation.questions["q_1"].outcome == expected


def test_a_question_asked_twice_is_shown_once_and_an_unknown_one_resolves_nothing() -> None:
    conversation = fold(ev("start"), ev("pending_question_added", **QUESTION))
    assert conversation.apply(ev("pending_question_added", **QUESTION)) is None
    assert conversation.apply(ev("pending_question_resolved", id="q_9")) is None
    assert len(answer(conversation).parts) == 1


def test_an_interjection_is_a_part_inside_the_turn() -> None:
    conversation = fold(
        ev("start"),
        ev("text_delta", text="Working."),
        ev("user_interjection", message="also check fees", ts_ms=1),
        ev("text_delta", text="Fees: 0"),
    )
    parts = answer(conversation).parts
    assert [type(p) for p in parts] == [TextPart, InterjectionPart, TextPart]
    assert isinstance(parts[1], InterjectionPart) and parts[1].text == "also check fees"


def test_done_ends_the_turn() -> None:
    conversation = fold(ev("start"), ev("text_delta", text="a"), ev("done"))
    turn = answer(conversation)
    assert turn.state == "done" and all(p.done for p in turn.parts if isinstance(p, TextPart))


def test_done_interrupted_stops_the_turn_and_keeps_pending_interjections() -> None:
    conversation = fold(
        ev("start"),
        ev("text_delta", text="partial"),
        ev("done", interrupted=True, pending_interjections=["one", 2, "two"]),
    )
    turn = answer(conversation)
    assert turn.state == "cancelled" and turn.text == "partial"
    assert turn.pending_interjections == ["one", "two"]


def test_error_ends_the_turn_with_the_servers_words() -> None:
    conversation = fold(
        ev("start"),
        ev("text_delta", text="a"),
        ev("error", code="upstream", message="Model down", retryable=True),
    )
    turn = answer(conversation)
    notice = turn.parts[-1]
    assert turn.state == "error" and isinstance(notice, NoticePart)
    assert (notice.text, notice.code, notice.retryable, notice.kind) == (
        "Model down",
        "upstream",
        True,
        "failed",
    )


def test_error_without_a_message_says_so() -> None:
    notice = answer(fold(ev("start"), ev("error"))).parts[-1]
    assert isinstance(notice, NoticePart) and notice.text and not notice.retryable


# --- bad input ------------------------------------------------------------------------------


def test_unknown_event_types_and_fields_are_skipped() -> None:
    conversation = fold(
        ev("start", session_id="s1", future="x"),
        ev("reasoning_delta", text="hmm"),
        {"type": "text_delta", "data": {"text": "a", "lang": "en"}, "extra": 1},
        ev("done", reason="ok"),
    )
    turn = answer(conversation)
    assert turn.state == "done" and turn.text == "a" and len(turn.parts) == 1


@pytest.mark.parametrize(
    "event",
    [
        None,
        "text_delta",
        [],
        {"data": {"text": "x"}},
        {"type": 7, "data": {}},
        {"type": "text_delta", "data": "x"},
        {"type": "text_delta", "data": {"text": 5}},
        ev("tool_call_start", id=1, name="x"),
        ev("tool_call_start", id="c", name=None),
        ev("tool_call_end", id="c1", ok="yes"),
        ev("ui_block", id=None, block={"kind": "markdown", "text": "x"}),
        ev("ui_block", id="b", block={"kind": 3}),
        ev("todos", items="all"),
        ev("pending_question_added", id="q", kind="dance", questions=[]),
        ev("pending_question_added", id="q", kind="select", questions={}),
        ev("pending_question_resolved", id=["q"]),
        ev("user_interjection", message={"t": 1}),
    ],
)
def test_malformed_events_are_skipped(event: Any) -> None:
    conversation = fold(ev("start"), ev("tool_call_start", id="c1", name="x"))
    before = [type(p) for p in answer(conversation).parts]
    conversation.apply(event)
    assert [type(p) for p in answer(conversation).parts] == before


def test_malformed_entries_inside_lists_are_dropped() -> None:
    conversation = fold(
        ev("start"),
        ev("todos", items=[{"text": "ok"}, {"text": 3}, "x", {"done": True}]),
        ev(
            "pending_question_added",
            id="q",
            kind="confirm",
            asked_by="planner",
            questions=[{"text": "Go?", "options": [{"label": "Confirm"}, {"x": 1}, 5]}, 7],
        ),
    )
    todo, question = answer(conversation).parts
    assert isinstance(todo, TodoPart) and todo.items == [("ok", False)]
    assert isinstance(question, QuestionPart) and question.asked_by == {}
    assert [o.label for q in question.questions for o in q.options] == ["Confirm"]


def test_server_strings_are_cleaned_where_they_become_text() -> None:
    conversation = fold(
        ev("start"),
        ev("text_delta", text="a\x1b[2Jb"),
        ev("tool_call_start", id="c1", name="n\x07", label="L\x1b[31m"),
        ev("tool_call_end", id="c1", ok=False, error="e\x9b2J"),
        ev("user_interjection", message="i\x00"),
        ev("todos", items=[{"text": "t\x1b]52;c;x\x07", "done": True}]),
        ev("error", code="c\x1b", message="m\x1b[2J"),
    )
    assert unsafe(*_texts(answer(conversation).parts)) == []


# --- live equals history --------------------------------------------------------------------


def _texts(parts: list[Part]) -> list[str]:
    """Every display string of `parts`."""
    texts: list[str] = []
    for part in parts:
        if isinstance(part, TextPart | InterjectionPart):
            texts.append(part.text)
        elif isinstance(part, ToolPart):
            texts += [part.name, part.label, part.error or ""]
        elif isinstance(part, NoticePart):
            texts += [part.text, part.code or ""]
        elif isinstance(part, TodoPart):
            texts += [text for text, _done in part.items]
        elif isinstance(part, QuestionPart):
            texts += [q.text for q in part.questions]
            texts += [o.label for q in part.questions for o in q.options]
        elif isinstance(part, UiBlockPart):
            texts.append(repr(part.data))
    return texts


def stored(
    session_id: str, turns: list[tuple[str, list[dict[str, Any]]]], pending: list[Any]
) -> dict[str, Any]:
    """The session detail a gateway would store for these turns, per minara-stream.md."""
    rows: list[dict[str, Any]] = []
    for n, (message, events) in enumerate(turns):
        rows.append(
            {
                "id": f"u{n}",
                "role": "user",
                "content": message,
                "created_at": "2026-12-01T10:00:00Z",
            }
        )
        segments: list[dict[str, Any]] = []
        tools: dict[str, dict[str, Any]] = {}
        metadata: dict[str, Any] = {"segments": segments}
        content = ""
        for event in events:
            kind, data = event["type"], event["data"]
            if kind == "text_delta":
                content += data["text"]
                if segments and segments[-1]["type"] == "text":
                    segments[-1]["text"] += data["text"]
                else:
                    segments.append({"type": "text", "text": data["text"]})
            elif kind == "tool_call_start" and data["id"] not in tools:
                tools[data["id"]] = {"type": "tool", "id": data["id"], "name": data["name"]}
                if "label" in data:
                    tools[data["id"]]["label"] = data["label"]
                segments.append(tools[data["id"]])
            elif kind == "tool_call_end":
                tools[data["id"]].update(
                    {"ok": data["ok"]}, **({"error": data["error"]} if "error" in data else {})
                )
            elif kind == "ui_block":
                segments.append({"type": "ui_block", "id": data["id"], "block": data["block"]})
            elif kind == "user_interjection":
                segments.append({"type": "interjection", "message": data["message"]})
            elif kind == "todos":
                metadata["todos"] = data["items"]
            elif kind == "done" and data.get("interrupted"):
                metadata["interrupted"] = True
        rows.append(
            {
                "id": f"a{n}",
                "role": "assistant",
                "content": content,
                "created_at": "2026-12-01T10:00:01Z",
                "metadata": metadata,
            }
        )
    return {
        "session": {"id": session_id, "title": "t"},
        "messages": rows,
        "is_streaming": False,
        "pending_questions": pending,
        "last_seq": 0,
    }


def live(session_id: str, turns: list[tuple[str, list[dict[str, Any]]]]) -> MinaraConversation:
    """The conversation as folded live, turn by turn."""
    conversation = MinaraConversation(session_id)
    for n, (message, events) in enumerate(turns):
        conversation.add_user_message(f"u{n}", message)
        for event in events:
            conversation.apply(event)
    return conversation


FULL_TURN = [
    ev("start", session_id="s1", turn_id="a0"),
    ev("text_delta", text="Let me "),
    ev("text_delta", text="check."),
    ev("todos", items=[{"text": "Quote", "done": False}, {"text": "Swap", "done": False}]),
    ev("tool_call_start", id="c1", name="quote", label="Getting a quote"),
    ev("tool_call_start", id="c1", name="quote", label="Getting a quote"),  # a replay
    ev("tool_call_end", id="c1", ok=True, summary="1 BTC"),
    ev("tool_call_start", id="c2", name="swap"),
    ev("tool_call_end", id="c2", ok=False, error="slippage"),
    ev("ui_block", id="b1", block={"kind": "table", "columns": ["a"], "rows": [["1"]]}),
    ev("user_interjection", message="and the fee?", ts_ms=5),
    ev("text_delta", text="The fee is 1 USD."),
    ev("todos", items=[{"text": "Quote", "done": True}, {"text": "Swap", "done": False}]),
    ev("text_delta", text=" Which account?"),
    ev("pending_question_added", **QUESTION),
    ev("done"),
]


def test_live_equals_history_for_a_full_turn() -> None:
    turns = [("swap 1 BTC", FULL_TURN)]
    seen = live("s1", turns)
    rebuilt = conversation_from_rows(stored("s1", turns, [QUESTION]))
    assert shapes(rebuilt) == shapes(seen)
    assert [type(p).__name__ for p in rebuilt.turns[1].parts] == [
        "TodoPart",
        "TextPart",
        "ToolPart",
        "ToolPart",
        "UiBlockPart",
        "InterjectionPart",
        "TextPart",
        "QuestionPart",
    ]
    assert rebuilt.thread_id == "s1" and rebuilt.turns[1].created_at is not None
    assert rebuilt.questions["q_1"].outcome is None  # reopened


def test_live_equals_history_for_an_interrupted_turn_and_a_second_one() -> None:
    turns = [
        ("first", [ev("start"), ev("text_delta", text="part"), ev("done", interrupted=True)]),
        ("second", [ev("start"), ev("tool_call_start", id="t", name="x"), ev("done")]),
    ]
    seen = live("s1", turns)
    rebuilt = conversation_from_rows(stored("s1", turns, []))
    assert shapes(rebuilt) == shapes(seen)
    assert [t.state for t in rebuilt.turns] == ["done", "cancelled", "done", "done"]


def test_a_pending_question_of_a_turn_still_running_opens_a_new_answer() -> None:
    detail = {
        "session": {"id": "s1"},
        "messages": [{"id": "u0", "role": "user", "content": "go"}],
        "is_streaming": True,
        "pending_questions": [QUESTION],
    }
    conversation = conversation_from_rows(detail)
    turn = conversation.turns[-1]
    assert turn.role == "assistant" and turn.state == "streaming"
    assert isinstance(turn.parts[0], QuestionPart)


def test_a_row_without_segments_shows_its_content() -> None:
    detail = {
        "session": {"id": "s1"},
        "messages": [
            {"id": "u0", "role": "user", "content": "hi"},
            {"id": "a0", "role": "assistant", "content": "hello\x1b[2J"},
        ],
    }
    assert [t.text for t in conversation_from_rows(detail).turns] == ["hi", "hello"]


@pytest.mark.parametrize(
    "detail",
    [
        {},
        {"session": "x", "messages": "y", "pending_questions": "z"},
        {"messages": [None, 1, {"role": "user"}, {"id": "a", "role": "assistant", "metadata": 5}]},
        {
            "messages": [
                {"id": "a", "role": "assistant", "metadata": {"segments": [1, {"type": "x"}]}}
            ]
        },
        {"messages": [{"id": "u", "role": "user", "content": 3, "created_at": "yesterday"}]},
        {"pending_questions": [1, {"id": "q"}]},
    ],
)
def test_malformed_session_details_rebuild_what_they_can(detail: dict[str, Any]) -> None:
    conversation_from_rows(detail)


# --- properties -----------------------------------------------------------------------------

EVENT_TYPES = [
    "start",
    "text_delta",
    "tool_call_start",
    "tool_call_end",
    "ui_block",
    "todos",
    "pending_question_added",
    "pending_question_resolved",
    "user_interjection",
    "done",
    "error",
]
FIELDS = st.sampled_from(
    [
        "session_id",
        "protocol_version",
        "turn_id",
        "text",
        "id",
        "name",
        "label",
        "args",
        "ok",
        "error",
        "block",
        "kind",
        "items",
        "done",
        "questions",
        "options",
        "outcome",
        "message",
        "interrupted",
        "pending_interjections",
        "code",
        "retryable",
        "fallback_text",
        "asked_by",
    ]
)
events = st.lists(
    st.fixed_dictionaries(
        {
            "type": st.one_of(st.sampled_from(EVENT_TYPES), nasty_text),
            "data": st.one_of(st.dictionaries(FIELDS, json_like(FIELDS), max_size=6), json_like()),
        }
    ),
    max_size=12,
)


@given(events)
@fuzz_settings(200)
def test_any_dict_shaped_events_never_raise_but_a_newer_version(
    sequence: list[dict[str, Any]],
) -> None:
    conversation = MinaraConversation()
    for event in sequence:
        try:
            conversation.apply(event)
        except UnsupportedProtocolVersion:
            continue
    for turn in conversation.turns:
        assert unsafe(*_texts(turn.parts)) == []


# Text without control characters: cleaning each delta live and the joined text of a stored row
# removes the same nothing (an escape split across deltas is removed differently, both safe).
plain = st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=5)
segment_events = st.one_of(
    st.builds(lambda t: ev("text_delta", text=t), plain),
    st.builds(
        lambda i, ok: [
            ev("tool_call_start", id=f"c{i}", name=f"tool{i}"),
            ev("tool_call_end", id=f"c{i}", ok=ok),
        ],
        st.integers(0, 3),
        st.booleans(),
    ),
    st.builds(
        lambda i: ev("ui_block", id=f"b{i}", block={"kind": "markdown", "text": f"#{i}"}),
        st.integers(0, 3),
    ),
    st.builds(lambda t: ev("user_interjection", message=t, ts_ms=1), plain),
    st.builds(lambda done: ev("todos", items=[{"text": "a", "done": done}]), st.booleans()),
)


def _flatten(items: list[Any]) -> list[dict[str, Any]]:
    return [e for item in items for e in (item if isinstance(item, list) else [item])]


@given(
    st.lists(
        st.tuples(st.lists(segment_events, max_size=8).map(_flatten), st.booleans()),
        min_size=1,
        max_size=3,
    )
)
@fuzz_settings(200)
def test_live_equals_history_for_generated_turns(
    generated: list[tuple[list[dict[str, Any]], bool]],
) -> None:
    turns = []
    for n, (body, interrupted) in enumerate(generated):
        kept = []
        for event in body:  # ids per turn (a repeat within one is a replay), blocks unique
            if event["type"] == "tool_call_start":
                event = ev(
                    "tool_call_start", id=f"{n}-{event['data']['id']}", name=event["data"]["name"]
                )
            elif event["type"] == "tool_call_end":
                event = ev("tool_call_end", id=f"{n}-{event['data']['id']}", ok=event["data"]["ok"])
            elif event["type"] == "ui_block":
                event = ev("ui_block", id=f"{n}-{len(kept)}", block=event["data"]["block"])
            kept.append(event)
        turns.append((f"m{n}", [ev("start"), *kept, ev("done", interrupted=interrupted)]))
    assert shapes(conversation_from_rows(stored("s", turns, []))) == shapes(live("s", turns))


def _shown(turn: Turn) -> list[str]:
    return [
        f"» {p.text}" if isinstance(p, InterjectionPart) else p.text
        for p in turn.parts
        if isinstance(p, TextPart | InterjectionPart)
    ]


def test_an_interjection_echoed_mid_sentence_stands_before_its_paragraph() -> None:
    conversation = fold(
        ev("start", turn_id="t1"),
        ev("text_delta", text="The price stayed in a"),
        ev("user_interjection", message="and gold?"),
        ev("text_delta", text=" narrow range."),
        ev("text_delta", text=" Gold rose."),
        ev("done"),
    )
    assert _shown(answer(conversation)) == [
        "» and gold?",
        "The price stayed in a narrow range. Gold rose.",
    ]


def test_an_interjection_at_a_sentence_end_follows_it() -> None:
    conversation = fold(
        ev("start", turn_id="t1"),
        ev("text_delta", text="Done.\n"),
        ev("user_interjection", message="thanks"),
        ev("text_delta", text="More."),
    )
    assert _shown(answer(conversation)) == ["Done.\n", "» thanks", "More."]
