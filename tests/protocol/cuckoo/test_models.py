"""The hub's shapes read leniently: nulls as absent, bad parts dropped, strings cleaned."""

from __future__ import annotations

from datetime import UTC, datetime

from talkie_tui.protocol.cuckoo.models import Conversation, Message, Participant, Storage


def test_a_message_keeps_what_it_can() -> None:
    message = Message.model_validate(
        {
            "id": "msg_1",
            "sender": {"kind": "agent", "id": "agt_1", "display_name": "ignored"},
            "body": "not an object",
            "reply_to": {"text_preview": "no id"},
            "schedule": {"id": "sch_1", "title": "Daily\x1b[1m"},
            "status": None,
            "created_at": 12,
        }
    )
    assert message.body.text == "" and message.reply_to is None
    assert message.schedule is not None and message.schedule.title == "Daily"
    assert message.status == "complete" and not message.streaming and message.created_at is None
    when = datetime(2026, 7, 1, tzinfo=UTC)
    tapped = Message.model_validate(
        {
            "id": "msg_2",
            "sender": {"kind": "user"},
            "body": {"action": {"button_id": "a", "source_message_id": "msg_1"}, "text": "A"},
            "created_at": when,
        }
    )
    assert tapped.body.action is not None and tapped.created_at == when


def test_a_conversation_and_its_members() -> None:
    conversation = Conversation.model_validate(
        {
            "id": "cnv_1",
            "participants": "none",
            "last_message": {"id": "msg_1"},
            "created_at": "not a time",
        }
    )
    assert conversation.participants == () and conversation.last_message is None
    assert conversation.created_at is None and conversation.agents() == ()
    agent = Participant.model_validate(
        {"kind": "agent", "id": "agt_1", "starters": ["Hi\x1b[0m", 3], "has_avatar": True}
    )
    assert agent.starters == ("Hi",)
    lonely = Participant.model_validate({"kind": "agent", "id": "agt_2", "starters": "Hi"})
    assert lonely.starters == ()


def test_storage_defaults() -> None:
    storage = Storage.model_validate({"media": {"used_bytes": 5}})
    assert storage.media.budget_bytes == 0 and storage.messages.kept_since is None


def test_buttons_rows_and_a_bad_tap() -> None:
    message = Message.model_validate(
        {
            "id": "msg_3",
            "sender": {"kind": "agent"},
            "body": {
                "buttons": [
                    [{"id": "a", "label": "A", "style": "loud"}, {"id": "b", "url": "https://x"}],
                    [{"url": "tel:123", "label": "Call", "style": "danger"}],
                    "not a row",
                ],
                "buttons_extra": 1,
                "action": {"button_id": ""},
            },
        }
    )
    rows = message.body.buttons
    assert [[(b.id, b.url, b.style) for b in row] for row in rows] == [
        [("a", None, "default")],
        [(None, "tel:123", "danger")],
    ]
    assert message.body.action is None
    assert Message.model_validate({"id": "m", "sender": {"kind": "x"}, "body": {"buttons": 3}})
