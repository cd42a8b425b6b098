"""The contract's extensions of the session rows, rebuilt as the live turn showed them:
question segments with their outcome, `metadata.error`, and the files of a user row."""

from __future__ import annotations

from typing import Any

from talkie_tui.backends.minara.reducer import MinaraConversation, conversation_from_rows
from talkie_tui.chat.turns import AttachmentPart, NoticePart, QuestionPart
from tests.backends.minara.test_reducer import QUESTION, ev
from tests.backends.minara.turn_shapes import shapes


def detail(*rows: dict[str, Any], pending: list[Any] | None = None) -> dict[str, Any]:
    return {"session": {"id": "s1"}, "messages": list(rows), "pending_questions": pending or []}


def test_a_question_segment_keeps_its_place_and_outcome() -> None:
    live = MinaraConversation("s1")
    live.add_user_message("u0", "swap")
    for event in [
        ev("start", session_id="s1", turn_id="a0"),
        ev("text_delta", text="Asking."),
        ev("pending_question_added", **QUESTION),
        ev("pending_question_resolved", id="q_1", outcome="timeout"),
        ev("text_delta", text="No answer."),
        ev("done"),
    ]:
        live.apply(event)
    segment = {"type": "question", **QUESTION, "outcome": "timeout"}
    rebuilt = conversation_from_rows(
        detail(
            {"id": "u0", "role": "user", "content": "swap"},
            {
                "id": "a0",
                "role": "assistant",
                "content": "Asking.No answer.",
                "metadata": {
                    "segments": [
                        {"type": "text", "text": "Asking."},
                        segment,
                        {"type": "text", "text": "No answer."},
                    ]
                },
            },
        )
    )
    assert shapes(rebuilt) == shapes(live)
    question = rebuilt.questions["q_1"]
    assert question.outcome == "timeout" and question.write_endpoint == QUESTION["writeEndpoint"]


def test_an_open_question_segment_is_shown_once_with_pending_questions() -> None:
    rebuilt = conversation_from_rows(
        detail(
            {"id": "u0", "role": "user", "content": "swap"},
            {
                "id": "a0",
                "role": "assistant",
                "content": "",
                "metadata": {"segments": [{"type": "question", **QUESTION, "outcome": None}]},
            },
            pending=[QUESTION],
        )
    )
    parts = [p for p in rebuilt.turns[-1].parts if isinstance(p, QuestionPart)]
    assert len(parts) == 1 and parts[0].outcome is None and rebuilt.pending_questions == 1


def test_metadata_error_ends_the_rebuilt_turn_like_the_live_error() -> None:
    error = {"code": "agent_failed", "message": "The agent failed on purpose.", "retryable": True}
    live = MinaraConversation("s1")
    live.add_user_message("u0", "go")
    for event in [
        ev("start", turn_id="a0"),
        ev("text_delta", text="Partial."),
        ev("error", **error),
    ]:
        live.apply(event)
    rebuilt = conversation_from_rows(
        detail(
            {"id": "u0", "role": "user", "content": "go"},
            {
                "id": "a0",
                "role": "assistant",
                "content": "Partial.",
                "metadata": {"segments": [{"type": "text", "text": "Partial."}], "error": error},
            },
        )
    )
    assert shapes(rebuilt) == shapes(live)
    notice = rebuilt.turns[-1].parts[-1]
    assert isinstance(notice, NoticePart) and (notice.code, notice.retryable) == (
        "agent_failed",
        True,
    )
    assert rebuilt.turns[-1].state == "error"


def test_a_user_rows_files_become_attachment_parts() -> None:
    files = [
        {
            "key": "chat/files/a.png",
            "filename": "chart\x1b[2J.png",
            "media_type": "image/png",
            "size": 48213,
            "kind": "image",
            "url": "/v1/files/chat/files/a.png",
        },
        {"filename": "no key"},
        {"key": "k", "filename": "n.pdf", "size": -4},
        "junk",
    ]
    rebuilt = conversation_from_rows(
        detail({"id": "u0", "role": "user", "content": "look", "attachments": files})
    )
    parts = [p for p in rebuilt.turns[0].parts if isinstance(p, AttachmentPart)]
    assert [(p.key, p.filename, p.size, p.kind) for p in parts] == [
        ("chat/files/a.png", "chart.png", 48213, "image"),
        ("k", "n.pdf", 0, ""),
    ]
    assert rebuilt.turns[0].text == "look"


def test_a_reopened_answer_is_discarded_for_its_replay() -> None:
    rebuilt = conversation_from_rows(
        detail({"id": "u0", "role": "user", "content": "go"}, pending=[QUESTION])
    )
    assert rebuilt.turns[-1].role == "assistant"
    assert rebuilt.discard_open_answer() is True
    assert [t.role for t in rebuilt.turns] == ["user"] and not rebuilt.questions
    assert rebuilt.discard_open_answer() is False
