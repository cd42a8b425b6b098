"""Steps the chat tests share: the app on a test server, waiting, sending, reading the screen."""

from __future__ import annotations

import asyncio
import html
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.app import App
from textual.pilot import Pilot
from textual.screen import Screen

from talkie_tui.config import KnownServers, Settings
from talkie_tui.ui.app import TalkieApp
from talkie_tui.ui.chat.screen import ChatScreen
from talkie_tui.ui.widgets.header import TalkieHeader
from talkie_tui.ui.widgets.transcript import Transcript
from tests.helpers import TEST_TOKEN

FAST: dict[str, Any] = {
    "test_mode": True,
    "dev_token": TEST_TOKEN,
    "demo_delay": 0.0,
    "slow_seconds": 3.0,
}


def make_app(url: str, tmp_path: Path, **kwargs: Any) -> TalkieApp:
    """The real app on `url`, with settings and known servers in the test's folder."""
    settings = Settings(downloads_dir=tmp_path / "downloads")
    return TalkieApp(url, token=TEST_TOKEN, settings=settings, known=KnownServers.load(), **kwargs)


async def until(pilot: Pilot[None], condition: Callable[[], bool], timeout: float = 10) -> None:
    """Let the app run until `condition` holds."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("the condition did not hold in time")
        await pilot.pause(0.02)


async def chat_screen(app: TalkieApp, pilot: Pilot[None]) -> ChatScreen:
    """Wait for the connect screen to hand over to the chat screen."""
    await until(
        pilot, lambda: isinstance(app.screen, ChatScreen) and bool(app.screen.query(TalkieHeader))
    )
    screen = app.screen
    assert isinstance(screen, ChatScreen)
    await until(pilot, lambda: screen.header.state == "connected")
    return screen


def screen_up(app: App[Any], kind: type[Screen[Any]]) -> bool:
    """The app shows a screen of `kind` with its widgets mounted (a pushed screen is the app's
    screen a moment before its children are there to query)."""
    return isinstance(app.screen, kind) and app.screen.is_mounted


def chat_composed(app: TalkieApp) -> bool:
    """The chat screen is on and composed (leaving the app before that races its mount)."""
    screen = app.screen
    return isinstance(screen, ChatScreen) and bool(screen.query(Transcript))


async def put_and_send(pilot: Pilot[None], screen: ChatScreen, text: str) -> None:
    """Put `text` in the focused composer and press Enter: for tests whose point is what the
    message does, not how it is typed (Pilot presses a key in some 70 ms: a message of 30
    characters took two seconds; typing itself is tested in test_decision_standard.py)."""
    assert screen.focused is screen.composer  # where typed keys would have gone
    screen.composer.insert(text)
    await pilot.press("enter")


async def send(pilot: Pilot[None], screen: ChatScreen, text: str) -> None:
    """Type a message in the composer, press Enter and wait for the answer to finish."""
    screen.composer.focus()
    screen.composer.insert(text)
    before = len(screen.session.conversation.turns)
    await pilot.press("enter")
    await until(
        pilot,
        lambda: not screen.answering and len(screen.session.conversation.turns) >= before + 2,
    )
    await pilot.pause()  # let the last turn's views compose


def screen_text(app: TalkieApp) -> str:
    """What the terminal shows now, as plain text (from an SVG screenshot)."""
    svg = app.export_screenshot()
    text = re.sub(r"<[^>]+>", "", svg.replace("&#160;", " "))
    return html.unescape(text)
