"""`talkie connect` turns garbage collection off while the TUI starts (cli.py, issue 24); the app
turns it back on once its first frame is out, whichever screen that is: a session never runs
without it. On the reference server, with the real app."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from talkie_tui.config import KnownServers, Settings
from talkie_tui.ui.app import TalkieApp
from talkie_tui.ui.chat.screen import ChatScreen
from talkie_tui.ui.screens.connect import ConnectScreen
from talkie_tui.ui.screens.joining import JoiningScreen
from tests.helpers import TEST_TOKEN
from tests.ui.flows import screen_up, until


@pytest.fixture
def started_without_collection() -> Iterator[None]:
    """Collection off, as `talkie connect` starts the app; on again after the test in any case."""
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def settings(tmp_path: Path) -> Settings:
    """Settings in the test's folder, sign-ins kept in a file."""
    return Settings(downloads_dir=tmp_path / "downloads", token_storage="file")


@pytest.mark.usefixtures("started_without_collection")
async def test_the_picker_turns_collection_back_on(tmp_path: Path) -> None:
    known = KnownServers.load(tmp_path / "servers.json")
    app = TalkieApp(settings=settings(tmp_path), known=known)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: screen_up(app, ConnectScreen))
        await until(pilot, gc.isenabled)


@pytest.mark.usefixtures("started_without_collection")
async def test_the_chat_drawn_first_turns_collection_back_on(
    server_url: str, tmp_path: Path
) -> None:
    known = KnownServers.load(tmp_path / "servers.json")
    known.remember_server("kept.example", server_url, name="CRM as kept", origin=server_url)
    app = TalkieApp(server_url, token=TEST_TOKEN, settings=settings(tmp_path), known=known)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: screen_up(app, JoiningScreen) or screen_up(app, ChatScreen))
        await until(pilot, gc.isenabled)
        await until(pilot, lambda: screen_up(app, ChatScreen))
        assert gc.isenabled()
