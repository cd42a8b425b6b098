"""Exporting a thread to Markdown: every part of every turn, in words."""

from __future__ import annotations

import ag_ui.core as agui

from talkie_tui.backends.talkie.reducer import TalkieConversation as Conversation
from talkie_tui.chat.export import conversation_markdown
from talkie_tui.protocol.events import ActionProposed, CardReceived, LinkSuggested
from talkie_tui.protocol.models import Action, Card, OpenLink


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
