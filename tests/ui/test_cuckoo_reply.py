"""Answering a message, in the real app: against the reference hub with the independent test
agent, a message of the agent is selected in the transcript (Shift+↑), `r` quotes it above the
composer, and the message sent carries `reply_to` (read back from the hub's REST API) and shows
the quote; ✕ and Esc drop a reply. Against the reference Talkie server, which takes no replies,
`r` says so and the palette does not offer it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import httpx
import pytest
from textual.command import CommandList, CommandPalette
from textual.pilot import Pilot

from talkie_tui.backends.cuckoo import sign_in
from talkie_tui.chat.turns import ReplyPart
from talkie_tui.config import KnownServers, Settings
from talkie_tui.ui.app import TalkieApp
from talkie_tui.ui.chat.screen import ChatScreen
from talkie_tui.ui.widgets.buttons import ReplyQuoteView
from talkie_tui.ui.widgets.reply_bar import ReplyBar
from tests.backends.cuckoo.conftest import Hub, hub, on_message
from tests.cuckoo_peer.agent import AgentBackend
from tests.ui.flows import FAST, chat_screen, make_app, screen_text, send, until
from tests.ui.minara_e2e import notices

pytestmark = pytest.mark.slow

__all__ = ["hub"]  # the reference hub fixture, shared with the hub backend tests

SIZE = (120, 36)
# Markup and brackets in the agent's words: shown as written, never read as style.
FIRST = "Alfa s.r.o. [bold red]is a client[/] from Brno"
SECOND = "Beta a.s. is a prospect from Ostrava"


async def echo(peer: AgentBackend, event: dict[str, Any], text: str) -> None:
    conversation_id = event["data"]["conversation"]["id"]
    await peer.send(conversation_id, f"echo: {text}")


async def hub_messages(hub: Hub, person: sign_in.SignedIn, conversation_id: str) -> list[Any]:
    """The conversation as the hub stores it, oldest first."""
    async with httpx.AsyncClient(trust_env=False, timeout=10) as http:
        answer = await http.get(
            f"{hub.url}/v1/client/conversations/{conversation_id}/messages",
            params={"limit": 100},
            headers={"Authorization": f"Bearer {person.token}"},
        )
    answer.raise_for_status()
    return list(reversed(answer.json()["messages"]))


def _sent_id(reply: dict[str, Any]) -> str:
    """The id of the message an agent's `send` made, from the hub's reply to it."""
    return str(reply["message"]["id"] if "message" in reply else reply["message_id"])


def palette_options(app: TalkieApp) -> str:
    """What the open command palette lists, as text."""
    return " ".join(str(option.prompt) for option in app.screen.query_one(CommandList).options)


def reply_bar(chat: ChatScreen) -> ReplyBar:
    return chat.query_one(ReplyBar)


async def opened(hub: Hub, tmp_path: Path) -> Any:
    """A person, their agent (which wrote FIRST, then SECOND) and the app on that thread."""
    person = await hub.person()
    agent = await hub.agent(person, on_message(echo))
    first = await agent.peer.send(agent.conversation_id, FIRST)
    await agent.peer.send(agent.conversation_id, SECOND)
    backend = await hub.backend(person)
    known = KnownServers.load(tmp_path / "servers.json")
    settings = Settings(token_storage="file", downloads_dir=tmp_path / "downloads")
    app = TalkieApp(
        backend=backend, settings=settings, known=known, thread_id=agent.conversation_id
    )
    return person, agent, _sent_id(first), app


async def thread_shown(app: TalkieApp, pilot: Pilot[None]) -> ChatScreen:
    await until(pilot, lambda: isinstance(app.screen, ChatScreen) and app.screen.is_mounted)
    chat = app.screen
    assert isinstance(chat, ChatScreen)
    await until(pilot, lambda: "Beta a.s. is a prospect" in screen_text(app), timeout=15)
    return chat


async def test_r_on_a_selected_message_sends_a_reply_that_quotes_it(
    hub: Hub, tmp_path: Path
) -> None:
    person, agent, first_id, app = await opened(hub, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        chat = await thread_shown(app, pilot)
        assert not reply_bar(chat).display
        chat.transcript.focus()
        await pilot.press("shift+up")  # the newest message
        assert chat.transcript.selected is not None
        assert chat.transcript.selected.text == SECOND
        await pilot.press("shift+up")  # the one before it
        selected = chat.transcript.selected
        assert selected is not None and selected.id == first_id
        assert chat.transcript.turn_view(selected).has_class("-selected")  # type: ignore[union-attr]
        await pilot.press("r")
        await pilot.pause()
        bar = reply_bar(chat)
        assert bar.display and bar.target is not None and bar.target.message_id == first_id
        assert chat.focused is chat.composer
        shown = screen_text(app)
        # The agent's markup is shown as its words, not as a style.
        assert "↩ Replying to Echo Bot: Alfa s.r.o. [bold red]is a client[/] from Brno" in shown
        svg = Path(os.environ.get("TALKIE_REPLY_SVG", str(tmp_path / "cuckoo-reply.svg")))
        svg.write_text(app.export_screenshot(), encoding="utf-8")
        await pilot.press(*"where in Brno?", "enter")
        await until(pilot, lambda: "echo: where in Brno?" in screen_text(app), timeout=15)
        await until(pilot, lambda: not chat.answering, timeout=15)
        await pilot.pause()
        assert not bar.display and bar.target is None  # the quote went with the message
        mine = next(t for t in chat.session.conversation.turns if t.text == "where in Brno?")
        quote = mine.parts[0]
        assert isinstance(quote, ReplyPart) and quote.message_id == first_id
        view = chat.transcript.turn_view(mine)
        assert view is not None and bool(view.query(ReplyQuoteView))
        assert "↱ Agent: Alfa s.r.o. [bold red]is a client[/] from Brno" in screen_text(app)
    stored = await hub_messages(hub, person, agent.conversation_id)
    sent = next(m for m in stored if m["body"].get("text") == "where in Brno?")
    assert sent["reply_to"]["id"] == first_id
    assert sent["reply_to"]["sender_kind"] == "agent"
    # The message sent before the reply answered nothing.
    assert all(m.get("reply_to") is None for m in stored if m["id"] != sent["id"])


async def test_the_palette_replies_to_the_agents_newest_and_esc_or_x_drops_it(
    hub: Hub, tmp_path: Path
) -> None:
    person, agent, _first_id, app = await opened(hub, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        chat = await thread_shown(app, pilot)
        await pilot.press("ctrl+p")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"reply to this")
        await until(pilot, lambda: "Reply to this message" in palette_options(app))
        await pilot.press("enter")
        await until(pilot, lambda: reply_bar(chat).target is not None)
        target = reply_bar(chat).target
        assert target is not None and target.turn.text == SECOND  # none selected: the newest
        assert "↩ Replying to Echo Bot: Beta a.s." in screen_text(app)
        await pilot.press(*"draft")
        await pilot.press("escape")  # Esc drops the reply; what was typed stays
        await pilot.pause()
        assert reply_bar(chat).target is None and not reply_bar(chat).display
        assert chat.composer.text == "draft"
        chat.transcript.focus()
        await pilot.press("r")
        await until(pilot, lambda: reply_bar(chat).target is not None)
        await pilot.click(".reply-bar--cancel")  # ✕
        await pilot.pause()
        assert reply_bar(chat).target is None
        chat.composer.clear()
        await pilot.press(*"plain", "enter")
        await until(pilot, lambda: "echo: plain" in screen_text(app), timeout=15)
    stored = await hub_messages(hub, person, agent.conversation_id)
    plain = next(m for m in stored if m["body"].get("text") == "plain")
    assert plain["reply_to"] is None


async def test_a_talkie_server_takes_no_replies_and_says_so(devserver, tmp_path: Path) -> None:
    app = make_app(devserver(**FAST), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        chat = await chat_screen(app, pilot)
        await send(pilot, chat, "talkie-test:echo hello")
        chat.transcript.focus()
        await pilot.press("shift+up", "r")
        await until(pilot, lambda: "does not take replies" in notices(app))
        assert chat.query_one(ReplyBar).target is None
        assert app.check_action("reply", ()) is False  # the palette hides it
