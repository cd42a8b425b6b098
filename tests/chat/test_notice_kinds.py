"""Notices carry a kind where they are made, so behaviour never reads their (translated) words;
the count of actions waiting for a decision is the conversation's own."""

from __future__ import annotations

import ag_ui.core as agui

from talkie_tui.backends.talkie.reducer import TalkieConversation as Conversation
from talkie_tui.chat.turns import NoticePart, Turn
from talkie_tui.protocol.talkie.events import ActionProposed, MalformedEvent, StreamTruncated
from talkie_tui.protocol.talkie.models import Action

ACTION = {"id": "a_1", "summary": "Send", "status": "pending", "paramsHash": "sha256:x"}


def notices(turn: Turn) -> list[NoticePart]:
    return [part for part in turn.parts if isinstance(part, NoticePart)]


def started() -> Conversation:
    conversation = Conversation()
    conversation.add_user_message("m_1", "hello")
    conversation.apply(agui.RunStartedEvent(thread_id="t_1", run_id="r_1"))
    return conversation


def test_each_notice_says_what_it_is_about() -> None:
    failed = started()
    failed.apply(agui.RunErrorEvent(message="The agent broke.", code="internal"))
    cut = started()
    cut.apply(StreamTruncated("Connection lost."))
    odd = started()
    odd.apply(MalformedEvent("talkie.card", "no title"))

    assert [n.kind for n in notices(failed.turns[-1])] == ["failed"]
    assert [n.kind for n in notices(cut.turns[-1])] == ["cut_off"]
    assert [n.kind for n in notices(odd.turns[-1])] == ["malformed"]


def test_a_message_not_delivered_keeps_its_turn_and_offers_a_retry() -> None:
    conversation = Conversation()
    conversation.add_user_message("m_1", "first")
    sent = conversation.add_user_message("m_2", "keep me")

    turn = conversation.not_delivered("m_2", "No route.", code="offline", retry_after=3.0)

    assert turn is sent and sent.text == "keep me"
    (notice,) = notices(sent)
    assert (notice.kind, notice.text, notice.code, notice.retryable, notice.retry_after) == (
        "not_delivered",
        "No route.",
        "offline",
        True,
        3.0,
    )
    assert conversation.not_delivered("m_unknown", "No route.") is None


def test_pending_actions_are_counted_from_the_conversation() -> None:
    conversation = started()
    assert conversation.pending_actions == 0
    conversation.apply(ActionProposed(Action.model_validate(ACTION)))
    conversation.apply(ActionProposed(Action.model_validate({**ACTION, "id": "a_2"})))
    assert conversation.pending_actions == 2

    conversation.update_action(Action.model_validate({**ACTION, "status": "running"}))
    assert conversation.pending_actions == 1
