"""The reducer: recorded streams (over real HTTP) folded into turns, and the rules the
conversation keeps: tools, cards, actions (§8), links, usage, errors, AG-UI sloppiness."""

from __future__ import annotations

import ag_ui.core as agui
import pytest

from talkie_tui.backends.talkie.reducer import TalkieConversation as Conversation
from talkie_tui.chat.turns import (
    ActionPart,
    CardPart,
    LinkPart,
    NoticePart,
    Part,
    TextPart,
    ToolPart,
    Turn,
)
from talkie_tui.protocol.talkie.cards import Card
from talkie_tui.protocol.talkie.client import TalkieClient
from talkie_tui.protocol.talkie.events import ActionProposed, CardReceived, StreamTruncated
from talkie_tui.protocol.talkie.models import Action, DecisionResult
from talkie_tui.protocol.talkie.run_request import RunRequest

ACTION = {"id": "a_1", "summary": "Send", "status": "pending", "paramsHash": "sha256:x"}


async def fold(client: TalkieClient, stream: str) -> Conversation:
    """The conversation after the person sent `stream` and the recorded answer arrived."""
    conversation = Conversation()
    conversation.add_user_message("m_user", stream)
    async for event in client.run(RunRequest(stream)):
        conversation.apply(event)
    return conversation


def answer(conversation: Conversation, index: int = -1) -> Turn:
    """An assistant turn (the last one by default)."""
    turns = [turn for turn in conversation.turns if turn.role == "assistant"]
    return turns[index]


def parts(turn: Turn, cls: type[Part]) -> list:
    return [part for part in turn.parts if isinstance(part, cls)]


def texts(turn: Turn) -> list[str]:
    return [part.text for part in parts(turn, TextPart)]


# --- recorded streams -----------------------------------------------------------------------


async def test_text_answer_becomes_one_done_turn(replay: TalkieClient) -> None:
    """§5/§7: text deltas form one assistant text part; markup stays characters."""
    conversation = await fold(replay, "text.sse")

    assert [turn.role for turn in conversation.turns] == ["user", "assistant"]
    turn = answer(conversation)
    assert (turn.state, turn.run_id, turn.text) == (
        "done",
        "r_1",
        "Dobrý den, **světe** [b]není markup[/b]",
    )
    assert all(part.done for part in parts(turn, TextPart))
    assert conversation.thread_id == "t_server"


async def test_tool_status_shows_the_label_and_never_the_raw_output(replay: TalkieClient) -> None:
    """§5: TOOL_CALL_START metadata.label is the status; TOOL_CALL_RESULT is not displayed."""
    turn = answer(await fold(replay, "tool_ok.sse"))

    (tool,) = parts(turn, ToolPart)
    assert (tool.name, tool.label, tool.state, tool.error) == (
        "search_contacts",
        "Searching contacts…",
        "ok",
        None,
    )
    assert [type(part) for part in turn.parts] == [ToolPart, TextPart]
    assert "RAW TOOL OUTPUT" not in turn.text


async def test_failed_tools_show_their_error(replay: TalkieClient) -> None:
    """§5: TOOL_CALL_END metadata.ok false with metadata.error; no label means the name."""
    turn = answer(await fold(replay, "tool_failed.sse"))

    tools = parts(turn, ToolPart)
    assert [(t.label, t.state, t.error) for t in tools] == [
        ("Sending…", "failed", "The mail server is down."),
        ("no_label", "failed", "The tool failed."),
    ]
    assert turn.state == "done" and turn.text == "Sorry."


async def test_cards_are_parts_and_an_unreadable_card_is_a_warning(replay: TalkieClient) -> None:
    """§6: a card is shown as a part; one without fallbackText becomes a warning notice."""
    turn = answer(await fold(replay, "card.sse"))

    (card,) = parts(turn, CardPart)
    assert card.card.fallback_text == "Alfa s.r.o. – klient v Brně, aktivní"
    (notice,) = parts(turn, NoticePart)
    assert notice.level == "warning" and "talkie.card" in notice.text


async def test_a_new_proposal_never_replaces_an_older_pending_one(replay: TalkieClient) -> None:
    """§8: two proposals are two actions; the same id is updated in place."""
    conversation = await fold(replay, "action.sse")
    turn = answer(conversation)

    actions = parts(turn, ActionPart)
    assert [(p.action.id, p.action.status) for p in actions] == [
        ("a_1", "running"),
        ("a_2", "pending"),
    ]
    assert set(conversation.actions) == {"a_1", "a_2"}
    assert conversation.actions["a_1"] is actions[0]


async def test_links_and_usage(replay: TalkieClient) -> None:
    """§5: talkie.open is a link part (opened only on a gesture); talkie.usage updates meters."""
    conversation = await fold(replay, "link_usage.sse")

    (link,) = parts(answer(conversation), LinkPart)
    assert link.link.url == "https://crm.example.com/deal/7"
    assert [meter.label for meter in conversation.usage] == ["Tokens today", "Voice today"]


async def test_run_error_ends_the_turn_with_the_servers_message(replay: TalkieClient) -> None:
    """§5: RUN_ERROR shows message, code and whether retrying helps; partial text stays."""
    turn = answer(await fold(replay, "run_error.sse"))

    (notice,) = parts(turn, NoticePart)
    assert (notice.text, notice.code, notice.retryable, notice.level) == (
        "The model provider is unavailable.",
        "upstream_unavailable",
        True,
        "error",
    )
    assert turn.state == "error" and turn.text == "Let me check"
    assert all(part.done for part in parts(turn, TextPart))


async def test_chunk_events_fold_like_their_long_form(replay: TalkieClient) -> None:
    """AG-UI chunks become text and tool parts; an empty chunk message is hidden."""
    turn = answer(await fold(replay, "chunks.sse"))

    assert texts(turn) == ["Hello!", "Done."]
    (tool,) = parts(turn, ToolPart)
    assert (tool.label, tool.state) == ("Looking up…", "ok")


@pytest.mark.parametrize(
    ("stream", "text"),
    [
        ("unknown.sse", "still here"),
        ("malformed.sse", "one two"),
        ("sloppy.sse", "float and nulls"),
    ],
)
async def test_unknown_and_sloppy_events_do_not_disturb_the_answer(
    replay: TalkieClient, stream: str, text: str
) -> None:
    """§5 MUST ignore unknown events; malformed ones are warnings; the answer completes."""
    turn = answer(await fold(replay, stream))
    assert (turn.text, turn.state) == (text, "done")
    assert all(notice.level == "warning" for notice in parts(turn, NoticePart))


async def test_sloppy_sequencing_is_repaired(replay: TalkieClient) -> None:
    """AG-UI pitfalls: empty messages hidden, reused ids appended, CONTENT without START shown,
    missing ENDs closed at RUN_FINISHED, and nothing after RUN_FINISHED shown."""
    conversation = await fold(replay, "sequencing.sse")
    turn = answer(conversation)

    assert texts(turn) == [
        "Before the tool. After the tool, same id.",
        "Content without a START.",
    ]
    assert [(t.tool_call_id, t.state) for t in parts(turn, ToolPart)] == [
        ("call_1", "ok"),
        ("call_open", "ok"),
    ]
    assert all(part.done for part in parts(turn, TextPart))
    assert turn.state == "done" and not parts(turn, CardPart)
    assert len(conversation.turns) == 2


async def test_a_late_run_error_is_shown(replay: TalkieClient) -> None:
    """A RUN_ERROR after RUN_FINISHED is shown on the answer it ends; the text stays."""
    conversation = await fold(replay, "late_error.sse")

    assert len(conversation.turns) == 2
    late = answer(conversation)
    assert late.text == "Done."
    assert late.state == "error"
    assert parts(late, NoticePart)[0].text == "Storing the answer failed."


async def test_two_runs_in_one_stream_are_two_answers(replay: TalkieClient) -> None:
    """A second RUN_STARTED starts a new answer; a cancelled outcome marks it cancelled."""
    conversation = await fold(replay, "two_runs.sse")

    assert [(t.text, t.state, t.run_id) for t in conversation.turns[1:]] == [
        ("First run.", "done", "r_1"),
        ("Second run.", "cancelled", "r_2"),
    ]


async def test_a_truncated_stream_marks_the_turn_truncated(replay: TalkieClient) -> None:
    """§5 disconnect: the partial answer stays, marked truncated with a retryable warning."""
    turn = answer(await fold(replay, "truncated.sse"))

    assert turn.state == "truncated"
    assert turn.text == "The answer is chunked"
    (notice,) = parts(turn, NoticePart)
    assert (notice.level, notice.retryable) == ("warning", True)


# --- the conversation's own rules -----------------------------------------------------------


def test_only_assistant_text_is_shown_in_the_answer() -> None:
    """Text of a message started with another role (e.g. an echoed user message) is not shown
    as the agent's words; empty deltas show nothing."""
    conversation = Conversation()
    for event in (
        agui.TextMessageStartEvent(message_id="m_u", role="user"),
        agui.TextMessageContentEvent(message_id="m_u", delta="echo of the user"),
        agui.TextMessageContentEvent(message_id="m_e", delta=""),
        agui.TextMessageContentEvent(message_id="m_a", delta="agent"),
    ):
        conversation.apply(event)

    assert answer(conversation).text == "agent"


def test_a_reopened_message_is_not_done_until_it_ends_again() -> None:
    """AG-UI 1.0 allows START after END for the same id."""
    conversation = Conversation()
    for event in (
        agui.TextMessageContentEvent(message_id="m", delta="a"),
        agui.TextMessageEndEvent(message_id="m"),
        agui.TextMessageStartEvent(message_id="m", role="assistant"),
    ):
        conversation.apply(event)

    (part,) = answer(conversation).parts
    assert not part.done
    conversation.apply(agui.TextMessageEndEvent(message_id="m"))
    assert part.done


def test_an_answer_begun_before_run_started_is_reused() -> None:
    """A UI may open the answer ("thinking…") before RUN_STARTED; no second turn appears."""
    conversation = Conversation()
    conversation.add_user_message("m", "hi")
    early = conversation.begin_answer()

    assert conversation.apply(agui.RunStartedEvent(thread_id="t", run_id="r")) is early
    assert early.run_id == "r" and len(conversation.turns) == 2


def test_errors_end_running_tools_as_failed() -> None:
    """A run that ends badly does not leave a tool spinning or pretending success."""
    conversation = Conversation()
    conversation.apply(agui.ToolCallStartEvent(tool_call_id="c", tool_call_name="t"))
    conversation.apply(agui.RunErrorEvent(message=""))

    turn = answer(conversation)
    assert parts(turn, ToolPart)[0].state == "failed"
    assert parts(turn, NoticePart)[0].text == "The agent failed without saying why."
    assert conversation.end_answer() is None


def test_events_the_reducer_does_not_show_change_nothing() -> None:
    """State snapshots and similar AG-UI events have no visible effect."""
    conversation = Conversation()
    assert conversation.apply(agui.StateSnapshotEvent(snapshot={})) is None
    assert conversation.apply(agui.TextMessageEndEvent(message_id="nope")) is None
    assert conversation.turns == []


def test_a_user_message_closes_the_current_answer_for_new_events() -> None:
    """After the person writes, the next events form a new answer."""
    conversation = Conversation()
    conversation.apply(CardReceived(Card(fallback_text="one")))
    conversation.add_user_message("m", "next")
    conversation.apply(CardReceived(Card(fallback_text="two")))

    assert [turn.role for turn in conversation.turns] == ["assistant", "user", "assistant"]


def test_truncation_notice_without_an_answer_opens_one() -> None:
    """A stream lost before any event still shows that it was lost."""
    conversation = Conversation()
    conversation.apply(StreamTruncated("lost"))
    assert answer(conversation).state == "truncated"


# --- decisions (§8) -------------------------------------------------------------------------


def test_a_decision_updates_the_action_in_place_and_shows_its_result() -> None:
    """§8: POST decision's action replaces the shown state; its events become a new answer."""
    conversation = Conversation()
    conversation.apply(ActionProposed(Action.model_validate(ACTION)))
    shown = conversation.actions["a_1"]
    card = {"type": "CUSTOM", "name": "talkie.card", "value": {"fallbackText": "Sent\x1b[2J"}}
    result = DecisionResult.model_validate(
        {"action": dict(ACTION, status="done"), "events": [card]}
    )

    changes = conversation.apply_decision(result)

    assert changes[0] is shown and shown.action.status == "done"
    result_turn = answer(conversation)
    assert result_turn.state == "done"
    assert parts(result_turn, CardPart)[0].card.fallback_text == "Sent"


def test_a_decision_without_events_only_updates_the_action() -> None:
    """§8: a cancel usually has no result events."""
    conversation = Conversation()
    conversation.apply(ActionProposed(Action.model_validate(ACTION)))
    turns = len(conversation.turns)

    conversation.apply_decision(
        DecisionResult.model_validate({"action": dict(ACTION, status="cancelled")})
    )

    assert conversation.actions["a_1"].action.status == "cancelled"
    assert len(conversation.turns) == turns


def test_updating_an_unknown_action_changes_nothing() -> None:
    """A fresh GET action for an action this conversation never showed is ignored."""
    assert Conversation().update_action(Action.model_validate(ACTION)) is None


# --- voice (§10) -----------------------------------------------------------------------------


def test_spoken_words_become_turns_marked_as_voice() -> None:
    from talkie_tui.backends.talkie.reducer import TalkieConversation as Conversation

    conversation = Conversation("t_1")
    said = conversation.add_spoken("user", "item_1", "Kdo je Petr Novák?")
    answer = conversation.add_spoken("assistant", "item_2", "Jednatel firmy Alfa.")
    assert [t.role for t in conversation.turns] == ["user", "assistant"]
    assert said.text == "Kdo je Petr Novák?" and answer.text == "Jednatel firmy Alfa."
    assert said.channel == answer.channel == "voice" and answer.state == "done"


def test_a_voice_tool_result_is_an_answer_with_its_cards_and_actions() -> None:
    from talkie_tui.backends.talkie.reducer import TalkieConversation as Conversation
    from talkie_tui.chat.turns import ActionPart, CardPart
    from talkie_tui.protocol.talkie.cards import Card
    from talkie_tui.protocol.talkie.events import ActionProposed, CardReceived
    from talkie_tui.protocol.talkie.models import Action

    conversation = Conversation("t_1")
    card = Card.model_validate({"fallbackText": "Alfa", "title": "Alfa"})
    action = Action.model_validate(
        {"id": "a_1", "summary": "Send", "status": "pending", "paramsHash": "h"}
    )
    conversation.add_answer([CardReceived(card), ActionProposed(action)])
    [turn] = conversation.turns
    assert turn.state == "done"
    assert [type(p) for p in turn.parts] == [CardPart, ActionPart]
    assert "a_1" in conversation.actions


@pytest.mark.parametrize("error", [None, "", "The CRM is down."])
def test_a_voice_tool_answer_is_what_its_agui_tool_events_made(error: str | None) -> None:
    """`add_tool_answer` (the call controller's, without AG-UI) shows what the AG-UI tool
    events it replaced showed: the same parts, states, errors and changes."""
    card = Card.model_validate({"fallbackText": "Alfa", "title": "Alfa"})
    action = Action.model_validate(ACTION)
    outcome = [CardReceived(card), ActionProposed(action)]

    direct = Conversation("t_1")
    changes = direct.add_tool_answer("c_1", "search", "Searching…", outcome, error=error)

    folded = Conversation("t_1")
    end = {"ok": False, "error": error} if error else {"ok": True}
    expected = folded.add_answer(
        [
            agui.ToolCallStartEvent(
                tool_call_id="c_1", tool_call_name="search", metadata={"label": "Searching…"}
            ),
            agui.ToolCallEndEvent(tool_call_id="c_1", metadata=end),
            *outcome,
        ]
    )

    def shown(parts: list[Part]) -> list[tuple[object, ...]]:
        return [
            (p.name, p.label, p.state, p.error) if isinstance(p, ToolPart) else (type(p),)
            for p in parts
        ]

    [turn], [want] = direct.turns, folded.turns
    assert (turn.state, shown(turn.parts)) == (want.state, shown(want.parts))
    assert [type(c) for c in changes] == [type(c) for c in expected]
    assert turn.parts[0].state == ("failed" if error else "ok")
    assert list(direct.actions) == ["a_1"]
