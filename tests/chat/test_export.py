"""Exporting a thread to Markdown: every part of every turn, in words; tables, key-value lists
and charts as tables a Markdown reader (markdown-it, GFM tables) renders as such."""

from __future__ import annotations

from typing import Any

import ag_ui.core as agui
import httpx
import pytest
from markdown_it import MarkdownIt

from talkie_tui.backends import connect
from talkie_tui.backends.minara.backend import MinaraBackend
from talkie_tui.backends.minara.reducer import MinaraConversation
from talkie_tui.backends.talkie.reducer import TalkieConversation as Conversation
from talkie_tui.chat.export import conversation_markdown
from talkie_tui.chat.turns import AttachmentPart, QuestionPart
from talkie_tui.core.tokens import StaticToken
from talkie_tui.protocol.talkie.cards import Card
from talkie_tui.protocol.talkie.events import ActionProposed, CardReceived, LinkSuggested
from talkie_tui.protocol.talkie.models import Action, OpenLink
from tests.helpers import AUTH, TEST_TOKEN


def test_an_export_holds_text_tools_cards_actions_links_and_notices() -> None:
    conversation = Conversation("t_1")
    conversation.add_user_message("m_1", "Kdo je Petr Novák?")
    conversation.begin_answer("r_1")
    conversation.apply(agui.ToolCallStartEvent(tool_call_id="c1", tool_call_name="search_contacts"))
    conversation.apply(agui.ToolCallEndEvent(tool_call_id="c1"))
    conversation.apply(agui.TextMessageContentEvent(message_id="a_1", delta="Jednatel **Alfy**."))
    conversation.apply(CardReceived(Card.model_validate({"fallbackText": "Alfa s.r.o., Brno"})))
    conversation.apply(
        ActionProposed(
            Action.model_validate(
                {"id": "a_9", "summary": "Send the offer", "status": "pending", "paramsHash": "h"}
            )
        )
    )
    conversation.apply(LinkSuggested(OpenLink(url="https://crm.example.com/alfa", label="Alfa")))
    conversation.apply(
        agui.RunErrorEvent(message="The model is busy.", code="upstream_unavailable")
    )

    text = conversation_markdown(conversation, "Example CRM")

    assert "Example CRM" in text
    assert "Kdo je Petr Novák?" in text and "Jednatel **Alfy**." in text
    assert "Alfa s.r.o., Brno" in text
    assert "Send the offer" in text
    assert "https://crm.example.com/alfa" in text
    assert "The model is busy." in text


# --- the Minara parts -------------------------------------------------------------------------

TABLE = {
    "kind": "table",
    "columns": ["Asset", "Amount", "Note"],
    "rows": [["BTC", "0.5", "cold | wallet"], ["ETH", 4, None], ["SOL", "20", "hot\nwallet"]],
}
KV = {"kind": "kv", "items": [{"label": "Total", "value": "48,800 USD"}, {"label": "24 h"}]}
CHART = {
    "kind": "chart",
    "title": "Prices this week",
    "series": [
        {"label": "BTC", "points": [["Mon", 60], ["Tue", 61.5], ["Wed", 62]]},
        {"label": "ETH", "points": [["Mon", 30], ["Wed", 28]]},
    ],
}


def minara_answer(*events: dict[str, Any]) -> str:
    """The export of a conversation whose answer is `events` (the real Minara reducer)."""
    conversation = MinaraConversation("chat_1")
    conversation.add_user_message("m_1", "Show me everything.")
    conversation.apply({"type": "start", "data": {"session_id": "chat_1", "turn_id": "t_1"}})
    for event in events:
        conversation.apply(event)
    conversation.apply({"type": "done", "data": {}})
    return conversation_markdown(conversation, "Minara")


def block(block_id: str, data: dict[str, Any]) -> dict[str, Any]:
    return {"type": "ui_block", "data": {"id": block_id, "block": data}}


def tables(markdown: str) -> list[list[list[tuple[str, str | None]]]]:
    """Each GFM table of `markdown` as rows of (cell text, alignment), as a reader renders it."""
    found: list[list[list[tuple[str, str | None]]]] = []
    align: str | None = None
    for token in MarkdownIt("commonmark").enable("table").parse(markdown):
        if token.type == "table_open":
            found.append([])
        elif token.type == "tr_open":
            found[-1].append([])
        elif token.type in ("th_open", "td_open"):
            style = token.attrs.get("style")
            align = str(style).removeprefix("text-align:") if style else None
        elif token.type == "inline" and found and found[-1]:
            found[-1][-1].append((token.content, align))
    return found


def test_a_table_block_is_a_markdown_table_with_numbers_right_aligned() -> None:
    text = minara_answer(block("b1", TABLE))
    (table,) = tables(text)
    assert table == [
        [("Asset", None), ("Amount", "right"), ("Note", None)],
        [("BTC", None), ("0.5", "right"), ("cold | wallet", None)],
        [("ETH", None), ("4", "right"), ("", None)],
        [("SOL", None), ("20", "right"), ("hot wallet", None)],
    ]


def test_a_kv_block_is_a_two_column_table() -> None:
    (table,) = tables(minara_answer(block("b1", KV)))
    assert [[cell for cell, _align in row] for row in table] == [
        ["Field", "Value"],
        ["Total", "48,800 USD"],
        ["24 h", ""],
    ]


def test_a_chart_is_a_table_of_its_points() -> None:
    text = minara_answer(block("b1", CHART))
    assert "**Prices this week**" in text
    (table,) = tables(text)
    assert [[cell for cell, _align in row] for row in table] == [
        ["", "BTC", "ETH"],
        ["Mon", "60", "30"],
        ["Tue", "61.5", ""],
        ["Wed", "62", "28"],
    ]


def test_links_markdown_and_other_kinds() -> None:
    text = minara_answer(
        block("b1", {"kind": "markdown", "text": "**Bold** and a list:\n\n- one"}),
        block("b2", {"kind": "link", "label": "Docs [v2]", "url": "https://example.com/docs"}),
        block("b3", {"kind": "link", "label": "Odd", "url": "https://example.com/a (b)"}),
        block("b4", {"kind": "map", "center": [50, 14], "fallback_text": "A map of Prague."}),
        block("b5", {"kind": "hologram", "frames": 3}),
    )
    assert "**Bold** and a list:\n\n- one" in text
    assert "[Docs \\[v2\\]](https://example.com/docs)" in text
    assert "[Odd](<https://example.com/a (b)>)" in text
    links = [
        t.attrs.get("href")
        for token in MarkdownIt("commonmark").parse(text)
        for t in token.children or []
        if t.type == "link_open"
    ]
    assert links == ["https://example.com/docs", "https://example.com/a%20(b)"]
    assert "A map of Prague." in text and "hologram" not in text


def test_todos_are_a_checklist_as_they_ended() -> None:
    items = [{"text": "Check balances", "done": True}, {"text": "Write it up", "done": False}]
    first = [{"text": "Check balances", "done": False}, {"text": "Write it up", "done": False}]
    text = minara_answer(
        {"type": "todos", "data": {"items": first}}, {"type": "todos", "data": {"items": items}}
    )
    assert "- [x] Check balances\n- [ ] Write it up" in text
    assert text.count("Check balances") == 1
    assert "To do · 1 of 2 done" in text


@pytest.mark.parametrize(
    ("outcome", "words"),
    [(None, "*Open*"), ("answered", "*Answered*"), ("timeout", "*Timed out*")],
)
def test_a_question_is_a_quote_with_its_options_and_outcome(
    outcome: str | None, words: str
) -> None:
    asked = {
        "id": "q_1",
        "kind": "select",
        "questions": [
            {
                "text": "Which account?",
                "options": [{"label": "Salary", "description": "The Salary account"}],
            }
        ],
    }
    events: list[dict[str, Any]] = [{"type": "pending_question_added", "data": asked}]
    if outcome is not None:
        events.append(
            {"type": "pending_question_resolved", "data": {"id": "q_1", "outcome": outcome}}
        )
    text = minara_answer(*events)
    quoted = [line for line in text.splitlines() if line.startswith(">")]
    assert quoted == [
        "> **The agent asks** (select)",
        "> Which account?",
        "> - Salary — The Salary account",
        ">",
        f"> {words}",
    ]


def test_interjections_and_attachments() -> None:
    conversation = MinaraConversation("chat_1")
    files = [
        AttachmentPart("k1", "chart.png", "image/png", 48213, "image"),
        AttachmentPart("k2", "data.bin", "application/octet-stream", 512, "blob"),
    ]
    conversation.add_user_message("m_1", "Look at these.", attachments=files)
    conversation.apply({"type": "start", "data": {"session_id": "chat_1"}})
    conversation.apply({"type": "user_interjection", "data": {"message": "Only BTC, please."}})
    conversation.apply({"type": "done", "data": {}})
    text = conversation_markdown(conversation, "Minara")
    assert "📎 chart.png (image, 48.2 kB)" in text
    assert "📎 data.bin (blob, 512 B)" in text
    assert "*You, while the agent worked:* Only BTC, please." in text


@pytest.mark.slow
async def test_an_export_holds_nothing_typed_into_a_secret_box(gateway_url: str) -> None:
    """A secret answered through the real gateway: neither the live conversation's export nor
    the one rebuilt from the session's rows holds the value."""
    secret = "sk-live-EXPORT-9137-zyxw"
    backend = await connect(gateway_url, tokens=StaticToken(TEST_TOKEN))
    assert isinstance(backend, MinaraBackend)
    try:
        session = backend.new_session()
        outgoing = session.prepare("minara-test:question secret 30")
        async for update in session.send(outgoing):
            change = update.change
            if isinstance(change, QuestionPart) and change.outcome is None:
                assert await backend.provide_secret(change, secret) == "answered"
        live = conversation_markdown(session.conversation, "Minara")
        loaded = backend.new_session()
        assert session.thread_id is not None
        await loaded.load(session.thread_id)
        stored = conversation_markdown(loaded.conversation, "Minara")
    finally:
        await backend.aclose()
    async with httpx.AsyncClient(headers=AUTH) as http:
        kept = (await http.get(f"{gateway_url}/v1/_test/credentials/test_api_key")).json()
    for text in (live, stored):
        assert "Answer: provided" in text and "> *Answered*" in text
        assert secret not in text
    assert kept["set"] is True  # the value did arrive, through its own route
