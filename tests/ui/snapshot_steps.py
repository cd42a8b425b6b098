"""The snapshot tests' steps: the real app on the fixed in-process server, drawn once it settles."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.pilot import Pilot

from talkie_tui.config import KnownServers, Settings
from talkie_tui.ui.app import TalkieApp
from talkie_tui.ui.chat.screen import ChatScreen
from talkie_tui.ui.widgets.action_card import ActionCard
from talkie_tui.ui.widgets.header import TalkieHeader
from tests.ui.fake_server import ORIGIN, connect_fixed

SIZE = (120, 40)


def fixed_app(tmp_path: Path) -> TalkieApp:
    """The real app connected to the fixed in-process server."""
    return TalkieApp(
        ORIGIN,
        token="dev-token",  # the fixed server offers only development tokens (§2.2)
        settings=Settings(downloads_dir=tmp_path),
        known=KnownServers.load(),
        connect=connect_fixed,
    )


async def ready(pilot: Pilot[None]) -> ChatScreen:
    """Wait for the chat screen with its status and threads loaded."""
    app = pilot.app
    for _ in range(200):
        screen = app.screen
        if (
            isinstance(screen, ChatScreen)
            and screen.query(TalkieHeader)
            and screen.header.state == "connected"
        ):
            break
        await pilot.pause(0.02)
    await app.workers.wait_for_complete()
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, ChatScreen)
    for box in screen.query("Input, TextArea"):
        box.cursor_blink = False  # type: ignore[attr-defined]  # blinking draws differently
    return screen


async def ask(pilot: Pilot[None], text: str) -> ChatScreen:
    """Send `text` and wait until the answer is drawn."""
    screen = await ready(pilot)
    screen.composer.insert(text)
    await pilot.press("enter")
    deadline = asyncio.get_running_loop().time() + 30  # a loaded two-core machine is slow
    while screen.answering or len(screen.session.conversation.turns) < 2:
        assert asyncio.get_running_loop().time() < deadline, "the answer did not end"
        await pilot.pause(0.02)
    await pilot.app.workers.wait_for_complete()
    await pilot.pause(0.1)
    for card in screen.transcript.query(ActionCard):
        while card.is_guarded:  # the guard dims the card for a moment: draw it settled
            await pilot.pause(0.05)
        card.blur()  # the focus ring would otherwise depend on timing
    screen.composer.focus()
    await pilot.pause()
    return screen
