"""The Cuckoo reducer: hub messages from pages and pushes folded into turns, each message once,
streams grown and settled, buttons and taps, notices, hostile input, and live equal to history."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from talkie_tui.backends.cuckoo.reducer import CuckooConversation, conversation_from_page
from talkie_tui.chat.turns import (
    AttachmentPart,
    ButtonsPart,
    NoticePart,
    QuickRepliesPart,
    ReplyPart,
    TextPart,
    Turn,
)
from talkie_tui.protocol.cuckoo.models import Message, Page, Participant

CNV = "cnv_1"


def message(
    message_id: str,
    text: str = "",
    *,
    kind: str = "agent",
    status: str = "complete",
    **body: Any,
) -> dict[str, Any]:
    extra = {
        key: body.pop(key)
        for key in ("truncated", "stopped", "reply_to", "delivery_status")
        if key in body
    }
    return {
        "id": message_id,
        "conversation_id": CNV,
        "sender": {"kind": kind, "id": "usr_1" if kind == "user" else "agt_1"},
        "body": {**({"text": text} if text else {}), **body},
        "status": status,
        "created_at": "2026-07-01T10:00:00Z",
        **extra,
    }


def push(kind: str, **data: Any) -> dict[str, Any]:
    return {"type": kind, "data": {"conversation_id": CNV, **data}}


def shape(turns: list[Turn]) -> list[tuple[Any, ...]]:
    """What a turn shows, comparable (parts are compared by what they hold)."""

    def part_shape(part: Any) -> tuple[Any, ...]:
        if isinstance(part, TextPart):
            return ("text", part.text, part.done)
        if isinstance(part, ButtonsPart):
            return ("buttons", part.source_message_id, tuple(part.rows), part.selected_button_id)
        if isinstance(part, QuickRepliesPart):
            return ("quick", tuple(part.labels))
        if isinstance(part, NoticePart):
            return ("notice", part.code, part.text)
        if isinstance(part, ReplyPart):
            return ("reply", part.message_id, part.role, part.preview)
        if isinstance(part, AttachmentPart):
            return ("file", part.key, part.filename, part.size, part.kind, part.url)
        raise AssertionError(part)

    return [
        (turn.id, turn.role, turn.state, tuple(part_shape(part) for part in turn.parts))
        for turn in turns
    ]


def test_a_page_folds_into_turns_in_order() -> None:
    page = Page.model_validate(
        {
            "messages": [  # newest first, as the hub pages back
                message("msg_03", "Which one?", buttons=[[{"id": "a", "label": "A"}]]),
                message(
                    "msg_02",
                    "Hi",
                    kind="user",
                    attachments=[
                        {
                            "media_id": "med_1",
                            "kind": "image",
                            "byte_size": 5,
                            "file_name": "p.png",
                            "mime_type": "image/png",
                        }
                    ],
                ),
                message("msg_01", "Welcome", quick_replies=[{"label": "Hello"}]),
            ],
            "next_before": "msg_01",
            "trimmed": True,
        }
    )
    conversation = conversation_from_page(page, CNV)
    assert [(t.id, t.role) for t in conversation.turns] == [
        ("msg_01", "assistant"),
        ("msg_02", "user"),
        ("msg_03", "assistant"),
    ]
    assert conversation.next_before == "msg_01" and conversation.trimmed
    assert conversation.last_message_id == "msg_03"
    quick = conversation.turns[0].parts[1]
    assert isinstance(quick, QuickRepliesPart) and quick.labels == ["Hello"]
    file = conversation.turns[1].parts[1]
    assert isinstance(file, AttachmentPart)
    assert (file.key, file.url, file.kind) == ("med_1", "v1/client/media/med_1", "image")
    buttons = conversation.turns[2].parts[1]
    assert isinstance(buttons, ButtonsPart) and buttons.rows[0][0].button_id == "a"
    older = Page.model_validate({"messages": [message("msg_00", "Earlier")]})
    conversation.load_page(older)
    assert conversation.turns[0].id == "msg_00" and conversation.next_before is None


def test_a_stream_grows_and_settles() -> None:
    conversation = CuckooConversation(CNV)
    started = conversation.apply_frame(
        push("message.started", message=message("msg_1", status="streaming"))
    )
    assert isinstance(started, Turn) and started.state == "streaming"
    for piece in ["Hel", "lo\x1b[31m", " there"]:
        conversation.apply_frame(push("message.delta", message_id="msg_1", text=piece))
    assert conversation.turns[0].text == "Hello there"
    assert not conversation.turns[0].parts[0].done  # type: ignore[union-attr]
    final = message("msg_1", "Hello there!", buttons=[[{"id": "ok", "label": "OK"}]])
    conversation.apply_frame(push("message.completed", message=final))
    assert shape(conversation.turns) == [
        (
            "msg_1",
            "assistant",
            "done",
            (
                ("text", "Hello there!", True),
                ("buttons", "msg_1", (conversation.turns[0].parts[1].rows[0],), None),
            ),  # type: ignore[union-attr]
        )
    ]
    # Late news of a finished stream changes nothing.
    assert conversation.apply_frame(push("message.delta", message_id="msg_1", text="x")) is None
    assert (
        conversation.apply_frame(
            push("message.started", message=message("msg_1", status="streaming"))
        )
        is None
    )
    assert conversation.turns[0].text == "Hello there!"


def test_a_delta_for_an_unknown_message_starts_its_bubble_once() -> None:
    conversation = CuckooConversation(CNV)
    conversation.apply_frame(push("message.delta", message_id="msg_9", text="Half"))
    conversation.apply_frame(push("message.started", message=message("msg_9", status="streaming")))
    conversation.apply_frame(push("message.delta", message_id="msg_9", text=" way"))
    assert len(conversation.turns) == 1 and conversation.turns[0].text == "Half way"
    conversation.apply_frame(push("message.created", message=message("msg_9", "Half way.")))
    conversation.apply_frame(push("message.created", message=message("msg_9", "Half way.")))
    assert len(conversation.turns) == 1 and conversation.turns[0].text == "Half way."


def test_stopped_and_truncated_replies_show_a_notice() -> None:
    conversation = CuckooConversation(CNV)
    conversation.apply_message(
        Page.model_validate(
            {"messages": [message("msg_1", "Par", stopped=True, truncated=True)]}
        ).messages[0]
    )
    conversation.load_page(
        Page.model_validate({"messages": [message("msg_2", "Cut", truncated=True)]})
    )
    stopped, cut = conversation.turns
    assert stopped.state == "cancelled" and cut.state == "truncated"
    assert [p.code for p in stopped.parts if isinstance(p, NoticePart)] == ["stopped"]
    assert [p.code for p in cut.parts if isinstance(p, NoticePart)] == ["truncated"]


def test_a_tap_marks_its_button_even_before_the_source_arrives() -> None:
    conversation = CuckooConversation(CNV)
    tap = message(
        "msg_2", "Raise", kind="user", action={"button_id": "raise", "source_message_id": "msg_1"}
    )
    conversation.apply_frame(push("message.created", message=tap))
    source = message(
        "msg_1",
        "Complain?",
        buttons=[
            [{"id": "raise", "label": "Raise"}, {"url": "https://x.example", "label": "Docs"}]
        ],
    )
    conversation.load_page(Page.model_validate({"messages": [source]}))
    buttons = conversation.turns[0].parts[1]
    assert isinstance(buttons, ButtonsPart) and buttons.selected_button_id == "raise"
    assert buttons.rows[0][1].url == "https://x.example" and buttons.rows[0][1].button_id is None


def test_reply_to_is_kept() -> None:
    conversation = CuckooConversation(CNV)
    reply = message(
        "msg_2",
        "Yes",
        kind="user",
        reply_to={"id": "msg_1", "sender_kind": "agent", "text_preview": "Sure\x1b[?25l?"},
    )
    conversation.apply_frame(push("message.created", message=reply))
    odd = message(
        "msg_3",
        "",
        kind="agent",
        status="streaming",
        reply_to={"id": "msg_2", "sender_kind": "robot"},
    )
    conversation.apply_frame(push("message.started", message=odd))
    conversation.apply_frame(push("message.delta", message_id="msg_3", text="ok"))
    first, second = conversation.turns
    assert isinstance(first.parts[0], ReplyPart)
    assert (first.parts[0].message_id, first.parts[0].role, first.parts[0].preview) == (
        "msg_1",
        "assistant",
        "Sure?",
    )
    assert isinstance(second.parts[0], ReplyPart) and second.parts[0].role is None
    assert isinstance(second.parts[1], TextPart) and second.text == "ok"


def test_what_the_socket_tells_besides_messages() -> None:
    conversation = CuckooConversation()
    sent = message("msg_1", "Hi", kind="user", delivery_status="pending")
    assert conversation.apply_frame(push("message.created", message=sent)) is not None
    assert conversation.thread_id == CNV and conversation.delivery == {"msg_1": "pending"}
    assert (
        conversation.apply_frame(
            push("delivery.updated", message_id="msg_1", delivery_status="delivered")
        )
        is conversation.turns[0]
    )
    assert conversation.delivery == {"msg_1": "delivered"}
    assert (
        conversation.apply_frame(
            push("activity", agent_id="agt_1", state="working", label="Looking\x1b[0m")
        )
        is None
    )
    assert conversation.activity["agt_1"].label == "Looking"
    conversation.apply_frame(push("conversation.read", read_up_to="msg_1"))
    conversation.apply_frame(
        {"type": "agent.status", "data": {"agent_id": "agt_1", "status": "idle"}}
    )
    conversation.apply_frame({"type": "ready", "data": {"user_id": "usr_1"}})
    assert conversation.read_up_to == "msg_1" and conversation.agent_status == {"agt_1": "idle"}
    assert conversation.turn("msg_1") is conversation.turns[0] and conversation.turn("x") is None


def test_hostile_input_is_skipped_and_cleaned() -> None:
    conversation = CuckooConversation(CNV)
    hostile: list[Any] = [
        "not json",
        b"\xff\xfe",
        json.dumps([1, 2]),
        {"type": "message.created"},
        {"type": "message.created", "data": "x"},
        {"type": "message.created", "data": {"conversation_id": CNV, "message": {"id": "m"}}},
        {"type": "message.delta", "data": {"conversation_id": CNV, "message_id": 5, "text": "x"}},
        {"type": "typing", "data": {"conversation_id": CNV}},
        {"type": None, "data": {}},
        push(
            "message.created",
            message=message("msg_x", "other", kind="agent") | {"conversation_id": "cnv_other"},
        ),
        {
            "type": "message.created",
            "data": {"conversation_id": "cnv_other", "message": message("msg_y", "no")},
        },
        {
            "type": "message.delta",
            "data": {"conversation_id": "cnv_other", "message_id": "msg_z", "text": "no"},
        },
        push("message.delta", message_id="msg_q", text=""),
    ]
    for frame in hostile:
        assert conversation.apply_frame(frame) is None
    weird = message(
        "msg_1",
        "\x1b]8;;https://evil\x07click\x1b]8;;\x07 \x9b31mred\x07",
        kind="agent",
        buttons=[
            [
                {"id": "a", "url": "https://both", "label": "Both"},
                {"id": "b", "label": "\x1b[5mB", "style": "blinking"},
            ],
            "row",
            [{"label": ""}],
        ],
        quick_replies=[{"label": "\x1b[1mYes"}, {"nope": 1}],
        attachments=[
            {"media_id": "med_1", "file_name": "x\x1b[2J.png", "byte_size": -5},
            {"media_id": "med_2"},
        ],
        unknown_field={"deep": True},
    )
    weird["sender"]["display_name"] = "\x1b[31mEvil"
    weird["surprise"] = 1
    conversation.apply_frame(push("message.created", message=weird))
    (turn,) = conversation.turns
    assert turn.text == "click red"
    buttons = turn.parts[2]
    assert isinstance(buttons, ButtonsPart)
    assert [(b.button_id, b.label, b.style) for row in buttons.rows for b in row] == [
        ("b", "B", "default")
    ]
    assert isinstance(turn.parts[3], QuickRepliesPart) and turn.parts[3].labels == ["Yes"]
    file = turn.parts[1]
    assert isinstance(file, AttachmentPart) and (file.key, file.filename) == ("med_2", "med_2")
    assert conversation.turns[0].created_at is not None


# --- live equals history -------------------------------------------------------------------

_words = st.text(alphabet="abc xyz\x1b[0m\n", min_size=0, max_size=12)


@st.composite
def scripts(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A conversation's messages in order, each with how it arrives live."""
    count = draw(st.integers(1, 8))
    script: list[dict[str, Any]] = []
    agent_with_buttons: list[str] = []
    for n in range(count):
        message_id = f"msg_{n:03d}"
        if draw(st.booleans()):
            tap_source = (
                draw(st.sampled_from(agent_with_buttons))
                if agent_with_buttons and draw(st.booleans())
                else None
            )
            final = message(message_id, draw(_words) or "hi", kind="user")
            if tap_source is not None:
                final["body"]["action"] = {"button_id": "b1", "source_message_id": tap_source}
            script.append({"final": final, "pieces": None, "dupes": draw(st.integers(0, 2))})
            continue
        pieces = draw(st.lists(_words, max_size=5)) if draw(st.booleans()) else None
        text = "".join(pieces) if pieces is not None else draw(_words)
        body: dict[str, Any] = {}
        if draw(st.booleans()):
            body["buttons"] = [
                [{"id": "b1", "label": "One"}, {"url": "https://e.example", "label": "Two"}]
            ]
            agent_with_buttons.append(message_id)
        if draw(st.booleans()):
            body["quick_replies"] = [{"label": "Sure"}]
        final = message(message_id, text, **body)
        ending = draw(st.sampled_from(["plain", "truncated", "stopped"]))
        if ending != "plain":
            final["truncated"] = True
            final["stopped"] = ending == "stopped"
        script.append(
            {
                "final": final,
                "pieces": pieces,
                "skip_start": draw(st.booleans()),
                "dupes": draw(st.integers(0, 2)),
            }
        )
    return script


def _pushes(script: list[dict[str, Any]]) -> list[dict[str, Any]]:
    frames: list[dict[str, Any]] = []
    for step in script:
        final = step["final"]
        if step["pieces"] is None:
            frames += [push("message.created", message=final)] * (1 + step["dupes"])
            continue
        start = message(final["id"], status="streaming")
        if not step["skip_start"]:
            frames.append(push("message.started", message=start))
        frames += [push("message.delta", message_id=final["id"], text=p) for p in step["pieces"]]
        frames += [push("message.completed", message=final)] * (1 + step["dupes"])
    return frames


def _history(script: list[dict[str, Any]]) -> dict[str, Any]:
    """The final page, newest first, with taken buttons marked on their messages as the hub
    does."""
    finals = [json.loads(json.dumps(step["final"])) for step in script]
    by_id = {m["id"]: m for m in finals}
    for m in finals:
        action = m["body"].get("action")
        if action is not None:
            by_id[action["source_message_id"]]["body"].setdefault(
                "selected_button_id", action["button_id"]
            )
    return {"messages": list(reversed(finals)), "next_before": None}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scripts())
def test_live_equals_history(script: list[dict[str, Any]]) -> None:
    live = CuckooConversation(CNV)
    for frame in _pushes(script):
        live.apply_frame(frame)
    history = conversation_from_page(Page.model_validate(_history(script)), CNV)
    assert shape(live.turns) == shape(history.turns)


def test_an_agents_turns_carry_its_display_name_once_the_members_are_known() -> None:
    conversation = CuckooConversation(CNV)
    conversation.apply_message(Message.model_validate(message("msg_01", "Hello")))
    assert conversation.turns[0].author is None  # the client form names no sender
    renamed = conversation.name_members(
        [
            Participant.model_validate({"kind": "agent", "id": "agt_1", "display_name": "CRM"}),
            Participant.model_validate({"kind": "user", "id": "usr_1", "display_name": "Jana"}),
        ]
    )
    assert renamed == [conversation.turns[0]] and conversation.turns[0].author == "CRM"
    conversation.apply_message(Message.model_validate(message("msg_02", "Hi", kind="user")))
    conversation.apply_message(Message.model_validate(message("msg_03", "Again")))
    assert [turn.author for turn in conversation.turns] == ["CRM", None, "CRM"]  # not the person
