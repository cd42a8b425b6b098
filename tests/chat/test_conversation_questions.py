"""The agent's questions and the late interjections, as the neutral conversation keeps them."""

from __future__ import annotations

from talkie_tui.chat.conversation import Conversation
from talkie_tui.chat.turns import Question, QuestionPart


def test_a_question_is_settled_once_and_counted_while_open() -> None:
    conversation = Conversation("s1")
    part = QuestionPart("q1", "confirm", [Question("Swap 100 USDC?")])
    conversation.questions["q1"] = part
    conversation.add_part(part)
    assert conversation.pending_questions == 1

    assert conversation.settle_question("q1", "elsewhere") is part
    assert conversation.settle_question("q1", "answered") is None  # the first word stands
    assert part.outcome == "elsewhere"
    assert conversation.pending_questions == 0
    assert conversation.settle_question("nope", "answered") is None


def test_late_interjections_are_handed_over_once() -> None:
    conversation = Conversation("s1")
    conversation.add_user_message("m1", "research ETH")
    turn = conversation.begin_answer("t1")
    turn.pending_interjections = ["also BTC", "and SOL"]
    conversation.end_answer()

    assert conversation.take_pending_interjections() == ["also BTC", "and SOL"]
    assert conversation.take_pending_interjections() == []


def test_only_the_last_answer_hands_over_its_interjections() -> None:
    conversation = Conversation("s1")
    turn = conversation.begin_answer("t1")
    turn.pending_interjections = ["too late"]
    conversation.end_answer()
    conversation.add_user_message("m2", "next")

    assert conversation.take_pending_interjections() == []
