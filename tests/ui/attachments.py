"""Files to attach and the steps that attach them, for the composer's extras tests."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from talkie_tui.ui.app import TalkieApp
from talkie_tui.ui.chat.screen import ChatScreen
from tests.ui.flows import until

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64
PDF = b"%PDF-1.7\n"


def make_file(folder: Path, name: str, head: bytes, size: int) -> Path:
    """A file of `size` bytes starting with `head` (sparse past the head: quick to make)."""
    path = folder / name
    with path.open("wb") as file:
        file.write(head)
        file.truncate(max(size, len(head)))
    return path


async def chat(app: TalkieApp, pilot: Pilot[None]) -> ChatScreen:
    """Wait for the chat screen to be mounted and connected."""
    await until(pilot, lambda: isinstance(app.screen, ChatScreen) and app.screen.is_mounted)
    screen = app.screen
    assert isinstance(screen, ChatScreen)
    await until(pilot, lambda: screen.header.state == "connected")
    return screen


async def attach(pilot: Pilot[None], screen: ChatScreen, path: Path) -> None:
    """`/attach PATH` typed in the composer and Enter."""
    screen.composer.focus()
    screen.composer.load_text(f"/attach {path}")
    await pilot.press("enter")
    await pilot.pause()
