"""§9 history through the same reducer as live runs: conversation_from_history."""

from __future__ import annotations

from typing import Any

from talkie_tui.backends.talkie.reducer import conversation_from_history
from talkie_tui.chat.turns import ActionPart, CardPart, TextPart, Turn
from talkie_tui.protocol.talkie.models import ThreadHistory


def at(minute: int) -> str:
    return f"2026-10-22T10:{minute:02}:00Z"


def message(mid: str, role: str, content: str, minute: int, **extra: Any) -> dict[str, Any]:
    return {"id": mid, "role": role, "content": content, "createdAt": at(minute), **extra}


def action(aid: str, minute: int | None) -> dict[str, Any]:
    created = {"createdAt": at(minute)} if minute is not None else {}
    return {"id": aid, "summary": aid, "status": "pending", "paramsHash": "h", **created}


def history(messages: list[dict[str, Any]], actions: list[dict[str, Any]]) -> ThreadHistory:
    return ThreadHistory.model_validate(
        {"thread": {"id": "t_1", "title": "T"}, "messages": messages, "actions": actions}
    )


def action_ids(turn: Turn) -> list[str]:
    return [part.action.id for part in turn.parts if isinstance(part, ActionPart)]


CARD = {"title": "Alfa", "fallbackText": "Alfa s.r.o.\x1b[2J"}


def test_messages_become_turns_with_text_and_cards() -> None:
    """§9: user and assistant messages become turns; cards join their message's turn."""
    conversation = conversation_from_history(
        history(
            [
                message("m_1", "user", "Kdo je Alfa?", 0),
                message("m_2", "assistant", "Tady je karta.", 1, cards=[CARD]),
                message("m_3", "user", "Díky", 2),
                message("m_4", "assistant", "", 3),
            ],
            [],
        )
    )

    assert conversation.thread_id == "t_1"
    summary = [(t.id, t.role, t.text, t.state) for t in conversation.turns]
    assert summary == [
        ("m_1", "user", "Kdo je Alfa?", "done"),
        ("m_2", "assistant", "Tady je karta.", "done"),
        ("m_3", "user", "Díky", "done"),
        ("m_4", "assistant", "", "done"),
    ]
    assert [type(p) for p in conversation.turns[1].parts] == [TextPart, CardPart]
    assert conversation.turns[1].parts[1].card.fallback_text == "Alfa s.r.o."
    assert conversation.turns[3].parts == []  # an empty message is hidden
    assert conversation.turns[0].created_at is not None


def test_actions_join_the_answer_to_the_message_they_followed() -> None:
    """§9 actions: each is shown in the answer to the last user message before it."""
    conversation = conversation_from_history(
        history(
            [
                message("m_1", "user", "Pošli nabídku", 0),
                message("m_2", "assistant", "Návrh:", 1),
                message("m_3", "user", "A smaž kontakt", 5),
                message("m_4", "assistant", "Návrh:", 6),
            ],
            [action("a_late", 7), action("a_early", 2), action("a_undated", None)],
        )
    )

    turns = conversation.turns
    assert action_ids(turns[1]) == ["a_early"]
    assert action_ids(turns[3]) == ["a_late", "a_undated"]
    assert set(conversation.actions) == {"a_early", "a_late", "a_undated"}


def test_an_action_older_than_every_message_goes_to_the_last_answer() -> None:
    """An action that predates the messages still appears (in the latest answer)."""
    conversation = conversation_from_history(
        history(
            [message("m_1", "user", "x", 5), message("m_2", "assistant", "y", 6)],
            [action("a_1", 1)],
        )
    )
    assert action_ids(conversation.turns[1]) == ["a_1"]


def test_an_action_without_any_answer_gets_a_turn_of_its_own() -> None:
    """An action in a thread whose answer was never stored is not lost."""
    conversation = conversation_from_history(
        history([message("m_1", "user", "x", 0)], [action("a_1", 1)])
    )

    assert [t.role for t in conversation.turns] == ["user", "assistant"]
    assert action_ids(conversation.turns[1]) == ["a_1"]


def test_new_events_after_loading_start_a_new_answer() -> None:
    """After loading, nothing is left open: the next live event does not join an old turn."""
    conversation = conversation_from_history(
        history([message("m_1", "user", "x", 0), message("m_2", "assistant", "y", 1)], [])
    )
    conversation.add_user_message("m_3", "again")
    turn = conversation.begin_answer("r_9")

    assert conversation.turns[-1] is turn and turn.state == "streaming"
