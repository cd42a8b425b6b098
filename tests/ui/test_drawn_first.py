"""A known server's chat is drawn before the server answers (issue 24), on the reference server.

The discovery waits on a gate the test opens, so what the person sees before the answer is
looked at for sure, not by luck of timing: the name kept from last time and "connecting…" (never
"connected" before it is, issue 20), the keys typed kept and shown, a message sent once the
server is there and once only; a failure, and Esc, show the connect screen.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.widgets import Static

from talkie_tui.backends.talkie.discovery import connect_client
from talkie_tui.config import KnownServers, Settings
from talkie_tui.ui.app import TalkieApp
from talkie_tui.ui.chat.screen import ChatScreen
from talkie_tui.ui.screens.connect import ConnectScreen
from talkie_tui.ui.screens.joining import JoiningScreen
from tests.helpers import TEST_TOKEN
from tests.ui.flows import screen_text, until

KEPT_NAME = "CRM as kept"


def known_at(address: str, tmp_path: Path) -> KnownServers:
    """A server list that knows `address` by the name it had last time."""
    known = KnownServers.load(tmp_path / "servers.json")
    known.remember_server("kept.example", address, name=KEPT_NAME, origin=address)
    return known


def gated(gate: asyncio.Event) -> Callable[..., Any]:
    """talkie/1's discovery, once `gate` is open."""

    async def discover(address: str, **options: Any) -> Any:
        await gate.wait()
        return await connect_client(address, **options)

    return discover


def app_on(address: str, tmp_path: Path, known: KnownServers, gate: asyncio.Event) -> TalkieApp:
    settings = Settings(downloads_dir=tmp_path / "downloads", token_storage="file")
    return TalkieApp(address, token=TEST_TOKEN, settings=settings, known=known, connect=gated(gate))


def joining(app: TalkieApp) -> bool:
    return isinstance(app.screen, JoiningScreen) and bool(app.screen.query("#composer"))


async def test_the_chat_is_drawn_first_and_what_is_typed_is_sent_once(
    server_url: str, tmp_path: Path
) -> None:
    gate = asyncio.Event()
    app = app_on(server_url, tmp_path, known_at(server_url, tmp_path), gate)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: joining(app))
        screen = app.screen
        await until(
            pilot, lambda: "connecting" in str(screen.query_one("#header-state", Static).content)
        )
        shown = screen_text(app)
        assert KEPT_NAME in shown and "Message" in shown
        assert "● connected" not in shown  # not before it is
        await pilot.press(*"hi", "enter", *"yo")
        await until(pilot, lambda: "sent once connected" in screen_text(app))
        assert "yo" in screen_text(app)
        gate.set()
        await until(pilot, lambda: isinstance(app.screen, ChatScreen) and app.screen.is_mounted)
        chat = app.screen
        assert isinstance(chat, ChatScreen)
        await until(pilot, lambda: chat.header.state == "connected")
        await until(pilot, lambda: any(t.role == "user" for t in chat.session.conversation.turns))
        await until(pilot, lambda: not chat.answering)
        await pilot.pause(0.2)
        sent = [t.text for t in chat.session.conversation.turns if t.role == "user"]
        assert sent == ["hi"]  # sent when the server was there, and once
        assert chat.composer.text == "yo" and chat.focused is chat.composer
        assert "Talkie Demo CRM" in screen_text(app)  # the server's own name now


async def test_a_failure_shows_the_connect_screen_with_the_reason(tmp_path: Path) -> None:
    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        address = f"http://127.0.0.1:{closed.getsockname()[1]}"
    gate = asyncio.Event()
    gate.set()
    app = app_on(address, tmp_path, known_at(address, tmp_path), gate)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ConnectScreen))
        screen = app.screen
        assert isinstance(screen, ConnectScreen)
        await until(pilot, lambda: screen.status_text.startswith("✗"))
        assert not any(isinstance(s, JoiningScreen) for s in app.screen_stack)


async def test_escape_on_the_chat_drawn_first_stops_connecting(
    server_url: str, tmp_path: Path
) -> None:
    gate = asyncio.Event()  # never opened: the server is not reached
    app = app_on(server_url, tmp_path, known_at(server_url, tmp_path), gate)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: joining(app))
        await until(pilot, lambda: isinstance(app.screen_stack[-2], ConnectScreen))
        below = app.screen_stack[-2]
        assert isinstance(below, ConnectScreen)
        connect: ConnectScreen = below
        await until(pilot, lambda: connect.busy)
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is connect and not connect.busy)
        assert connect.status_text == "Stopped."
