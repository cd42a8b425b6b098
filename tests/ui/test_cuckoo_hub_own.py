"""A person's own doings on a hub, in the real app against the reference hub (the agent is the
independent test agent): scrolling to the top of a conversation longer than a page loads the
earlier page above, the view kept where it was, and the retention window ends the history with
its notice; a message hidden and the conversation cleared for the person, each after asking;
the display name changed from the palette."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from textual.command import CommandPalette
from textual.pilot import Pilot
from textual.widgets import Input

from talkie_tui.backends.cuckoo import sign_in
from talkie_tui.backends.cuckoo.session import TRIMMED_ID
from talkie_tui.config import KnownServers, Settings
from talkie_tui.devserver.common import clock
from talkie_tui.ui.app import TalkieApp
from talkie_tui.ui.chat.screen import ChatScreen
from talkie_tui.ui.screens.confirm import ConfirmScreen
from talkie_tui.ui.screens.name_prompt import LinePromptScreen
from talkie_tui.ui.widgets.transcript import TurnView
from tests.backends.cuckoo.conftest import Agent, Hub, hub
from tests.ui.flows import screen_text, screen_up, until
from tests.ui.minara_e2e import notices
from tests.ui.test_cuckoo_reply import palette_options

pytestmark = pytest.mark.slow

__all__ = ["hub"]  # the reference hub fixture, shared with the hub backend tests


SIZE = (120, 36)
PAGE = 50


async def agent_wrote(agent: Agent, count: int) -> list[str]:
    """The agent writes `count` numbered messages (over HTTP): their ids, oldest first."""
    ids = []
    for n in range(count):
        sent = await agent.peer.post_message(agent.conversation_id, text=f"message {n}")
        assert sent.status_code == 201, sent.text
        ids.append(sent.json()["message"]["id"])
    return ids


async def app_on(hub: Hub, person: sign_in.SignedIn, agent: Agent, tmp_path: Path) -> TalkieApp:
    backend = await hub.backend(person)
    known = KnownServers.load(tmp_path / "servers.json")
    settings = Settings(token_storage="file", downloads_dir=tmp_path / "downloads")
    return TalkieApp(
        backend=backend, settings=settings, known=known, thread_id=agent.conversation_id
    )


async def opened(hub: Hub, tmp_path: Path, count: int) -> tuple[sign_in.SignedIn, Agent, TalkieApp]:
    """A person, their agent (which wrote `count` messages) and the app on that thread."""
    person = await hub.person()
    agent = await hub.agent(person)
    await agent_wrote(agent, count)
    return person, agent, await app_on(hub, person, agent, tmp_path)


async def shown(app: TalkieApp, pilot: Pilot[None], text: str) -> ChatScreen:
    await until(pilot, lambda: isinstance(app.screen, ChatScreen) and app.screen.is_mounted)
    chat = app.screen
    assert isinstance(chat, ChatScreen)
    await until(pilot, lambda: text in screen_text(app), timeout=15)
    return chat


def turn_ids(chat: ChatScreen) -> list[str]:
    return [turn.id for turn in chat.session.conversation.turns]


def views(chat: ChatScreen) -> list[TurnView]:
    return list(chat.transcript.query(TurnView))


async def run_command(app: TalkieApp, pilot: Pilot[None], typed: str, name: str) -> None:
    """Choose a palette command by typing part of its name."""
    await pilot.press("ctrl+p")
    await until(pilot, lambda: isinstance(app.screen, CommandPalette))
    await pilot.press(*typed)
    await until(pilot, lambda: name in palette_options(app))
    await pilot.press("enter")


async def test_the_top_of_a_long_conversation_loads_the_earlier_page_in_place(
    hub: Hub, tmp_path: Path
) -> None:
    person = await hub.person()
    agent = await hub.agent(person)
    ids = await agent_wrote(agent, PAGE + 20)
    app = await app_on(hub, person, agent, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        chat = await shown(app, pilot, f"message {PAGE + 19}")
        assert turn_ids(chat) == ids[20:]  # the newest page only
        first = views(chat)[0]
        assert first.turn.id == ids[20]
        chat.transcript.focus()
        await pilot.press("home")  # to the top: the page before comes
        await until(pilot, lambda: len(views(chat)) == PAGE + 20, timeout=15)
        assert turn_ids(chat) == ids
        assert [view.turn.id for view in views(chat)] == ids
        # What was at the top stays at the top, the older messages above it.
        await until(pilot, lambda: chat.transcript.scroll_y > 0)
        await pilot.pause(0.2)
        assert abs(chat.transcript.scroll_y - first.virtual_region.y) <= 2
        svg = Path(os.environ.get("TALKIE_HISTORY_SVG", str(tmp_path / "history.svg")))
        svg.write_text(app.export_screenshot(), encoding="utf-8")
        assert chat.transcript.has_focus  # nothing moved the focus
        await pilot.press("home")  # no more pages: nothing more is asked, no notice
        await until(pilot, lambda: not chat.earlier.loading)
        await pilot.pause(0.3)
        assert turn_ids(chat) == ids
        assert "no longer kept" not in screen_text(app)


async def test_the_retention_window_ends_the_history_with_a_notice(
    hub: Hub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    person = await hub.person()
    # The conversation began 100 days ago, before the hub's 90-day window.
    real_now = clock.now
    monkeypatch.setattr(clock, "now", lambda: real_now() - timedelta(days=100))
    agent = await hub.agent(person)
    monkeypatch.setattr(clock, "now", real_now)
    ids = await agent_wrote(agent, PAGE + 5)
    app = await app_on(hub, person, agent, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        chat = await shown(app, pilot, f"message {PAGE + 4}")
        chat.transcript.focus()
        await pilot.press("home")
        await until(pilot, lambda: turn_ids(chat)[1:] == ids, timeout=15)
        assert turn_ids(chat)[0] == TRIMMED_ID
        await until(pilot, lambda: views(chat)[0].turn.id == TRIMMED_ID)
        await pilot.press("home")
        await until(pilot, lambda: "Older messages are no longer kept." in screen_text(app))
        assert screen_text(app).count("Older messages are no longer kept.") == 1


async def messages_seen(hub: Hub, person: sign_in.SignedIn, agent: Agent) -> list[str]:
    async with httpx.AsyncClient(trust_env=False, timeout=10) as http:
        answer = await http.get(
            f"{hub.url}/v1/client/conversations/{agent.conversation_id}/messages",
            headers={"Authorization": f"Bearer {person.token}"},
        )
    answer.raise_for_status()
    return [m["body"]["text"] for m in reversed(answer.json()["messages"])]


async def confirm(app: TalkieApp, pilot: Pilot[None], title: str) -> None:
    """The confirmation asks `title` with Cancel focused: Tab to the confirm button, Enter."""
    await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
    assert title in screen_text(app)
    assert app.screen.focused is not None and app.screen.focused.id == "cancel"
    await pilot.press("tab", "enter")


async def test_a_message_hidden_and_the_conversation_cleared_for_me(
    hub: Hub, tmp_path: Path
) -> None:
    person, agent, app = await opened(hub, tmp_path, 3)
    async with app.run_test(size=SIZE) as pilot:
        chat = await shown(app, pilot, "message 2")
        chat.transcript.focus()
        await pilot.press("shift+up", "shift+up")  # message 1
        selected = chat.transcript.selected
        assert selected is not None and selected.text == "message 1"
        await run_command(app, pilot, "hide this", "Hide this message for me")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("enter")  # Enter on the focused Cancel: nothing is hidden
        await until(pilot, lambda: app.screen is chat)
        assert "message 1" in screen_text(app)
        await run_command(app, pilot, "hide this", "Hide this message for me")
        await confirm(app, pilot, "Hide this message for you?")
        await until(pilot, lambda: "message 1" not in screen_text(app))
        assert await messages_seen(hub, person, agent) == ["message 0", "message 2"]
        await run_command(app, pilot, "clear this", "Clear this conversation for me")
        await confirm(app, pilot, "Clear this conversation for you?")
        await until(pilot, lambda: not chat.session.conversation.turns)
        assert "message 0" not in screen_text(app)
        assert await messages_seen(hub, person, agent) == []
        await agent_wrote(agent, 1)  # what comes after a clear shows
        await until(pilot, lambda: "message 0" in screen_text(app), timeout=15)
    history = await agent.peer.http.get(f"/v1/agent/conversations/{agent.conversation_id}/messages")
    assert len(history.json()["messages"]) == 4  # the agent keeps everything


async def test_the_palette_changes_my_name(hub: Hub, tmp_path: Path) -> None:
    person, agent, app = await opened(hub, tmp_path, 1)
    async with app.run_test(size=SIZE) as pilot:
        chat = await shown(app, pilot, "message 0")
        await run_command(app, pilot, "change your", "Change your name")
        await until(pilot, lambda: screen_up(app, LinePromptScreen))
        app.screen.query_one(Input).value = "Ana Nováková"
        await pilot.press("enter")
        await until(pilot, lambda: app.screen is chat)
        await until(pilot, lambda: "The hub now calls you Ana Nováková." in notices(app))
    async with httpx.AsyncClient(trust_env=False, timeout=10) as http:
        me = await http.get(
            f"{hub.url}/v1/client/me", headers={"Authorization": f"Bearer {person.token}"}
        )
    assert me.json()["user"]["display_name"] == "Ana Nováková"
    about = await agent.peer.http.get(f"/v1/agent/conversations/{agent.conversation_id}")
    names = {p["display_name"] for p in about.json()["conversation"]["participants"]}
    assert "Ana Nováková" in names  # the agent sees the new name
