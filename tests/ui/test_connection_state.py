"""The header tells the truth about the connection, on all three protocols: a server that goes
away while the app is idle shows as offline, one that comes back as connected, and a message
sent meanwhile stays once with Retry and goes out once when retried.

Each server sits behind `KillableProxy`, which takes it away (connections cut, new ones
refused) and brings it back on the same port.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from talkie_tui.chat.turns import NoticePart
from talkie_tui.commands.demo_cuckoo import cuckoo_demo
from talkie_tui.config import KnownServers, Settings
from talkie_tui.ui.app import TalkieApp
from talkie_tui.ui.chat import status
from talkie_tui.ui.chat.screen import ChatScreen
from talkie_tui.ui.widgets.notice import NoticeView
from tests.helpers import TEST_TOKEN
from tests.ui.flows import put_and_send, screen_text, until
from tests.ui.killable_proxy import KillableProxy

pytestmark = pytest.mark.slow

SIZE = (120, 40)
WAIT = 60.0


@pytest.fixture(autouse=True)
def quick_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Checks every second and quick retries: the same rule, at a test's pace."""
    monkeypatch.setattr(status, "CHECK_SECONDS", 1.0)
    monkeypatch.setattr(status, "RETRY_SECONDS", (0.5, 1.0))


@dataclass
class Server:
    """A reference server: its address, how talkie signs in to it, and its echo command."""

    url: str
    options: dict[str, Any]
    echo: str


@pytest.fixture(params=["talkie", "minara", "cuckoo"])
def server(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    devserver: Callable[..., str],
    minara_gateway: Callable[..., str],
) -> Iterator[Server]:
    """Each protocol's reference server in turn."""
    if request.param == "cuckoo":
        with cuckoo_demo(tmp_path / "demo") as demo:
            options = {"hub_token": demo.session_token, "protocol": "cuckoo"}
            yield Server(demo.hub_url, options, "talkie-test:echo")
    elif request.param == "minara":
        url = minara_gateway(test_mode=True, auth_token=TEST_TOKEN)
        yield Server(url, {"gateway_token": TEST_TOKEN, "protocol": "minara"}, "minara-test:echo")
    else:
        url = devserver(test_mode=True, dev_token=TEST_TOKEN, demo_delay=0.0)
        yield Server(url, {"token": TEST_TOKEN}, "talkie-test:echo")


@asynccontextmanager
async def behind_a_proxy(
    server: Server, tmp_path: Path
) -> AsyncIterator[tuple[KillableProxy, TalkieApp]]:
    """The server behind a proxy, and the app on the proxy."""
    async with KillableProxy(server.url) as proxy:
        yield proxy, app_on(proxy, server, tmp_path)


def app_on(proxy: KillableProxy, server: Server, tmp_path: Path, **options: Any) -> TalkieApp:
    """A new app on the proxy (the same drafts and known servers as the ones before it)."""
    settings = Settings(downloads_dir=tmp_path / "downloads", token_storage="file")
    known = KnownServers.load(tmp_path / "servers.json")
    return TalkieApp(proxy.origin, settings=settings, known=known, **server.options, **options)


async def connected_chat(app: TalkieApp, pilot: Pilot[None]) -> ChatScreen:
    await until(pilot, lambda: isinstance(app.screen, ChatScreen) and app.screen.is_mounted, WAIT)
    screen = app.screen
    assert isinstance(screen, ChatScreen)
    await until(pilot, lambda: screen.header.state == "connected", WAIT)
    return screen


async def test_a_server_gone_while_idle_is_offline_and_back_when_it_answers(
    server: Server, tmp_path: Path
) -> None:
    async with behind_a_proxy(server, tmp_path) as (proxy, app), app.run_test(size=SIZE) as pilot:
        screen = await connected_chat(app, pilot)
        await proxy.down()
        await until(pilot, lambda: screen.header.state == "offline", WAIT)
        # Since when, and the next try (in the header's wording for 120 columns).
        shows_when = re.compile(r"○ offline \d\d:\d\d · retry in \d+ s")
        await until(pilot, lambda: bool(shows_when.search(screen_text(app))), WAIT)
        await pilot.pause(1.5)  # more checks fail meanwhile: it stays offline
        assert screen.header.state == "offline"
        await proxy.up()
        await until(pilot, lambda: screen.header.state == "connected", WAIT)


async def test_a_message_sent_while_offline_stays_once_and_goes_out_once_on_retry(
    server: Server, tmp_path: Path
) -> None:
    echo = server.echo
    async with behind_a_proxy(server, tmp_path) as (proxy, app), app.run_test(size=SIZE) as pilot:
        screen = await connected_chat(app, pilot)
        await proxy.down()
        await until(pilot, lambda: screen.header.state == "offline", WAIT)
        await put_and_send(pilot, screen, f"{echo} while away")
        await until(pilot, lambda: bool(screen.transcript.query(NoticeView)), WAIT)
        await pilot.pause(0.5)
        notices = [
            part
            for turn in screen.session.conversation.turns
            for part in turn.parts
            if isinstance(part, NoticePart) and part.kind == "not_delivered"
        ]
        assert len(notices) == 1 and len(screen.transcript.query(NoticeView)) == 1
        sent = [t for t in screen.session.conversation.turns if t.role == "user"]
        assert [t.text for t in sent] == [f"{echo} while away"]
        assert screen.header.state == "offline"
        await proxy.up()
        await until(pilot, lambda: screen.header.state == "connected", WAIT)
        await pilot.click(".notice--retry-button")
        await until(pilot, lambda: "while away" in _answers(screen), WAIT)
        sent = [t for t in screen.session.conversation.turns if t.role == "user"]
        assert [t.text for t in sent] == [f"{echo} while away"]  # once, not twice
        assert _answers(screen).count("while away") == 1
        # It reached the server: the screen no longer says it did not.
        await until(pilot, lambda: "Not delivered." not in screen_text(app), WAIT)
        assert sent[0].state == "done"


def _answers(screen: ChatScreen) -> str:
    return " ".join(t.text for t in screen.session.conversation.turns if t.role == "assistant")


def _sent(screen: ChatScreen) -> list[str]:
    return [t.text for t in screen.session.conversation.turns if t.role == "user"]


def _not_delivered(screen: ChatScreen) -> int:
    return sum(
        1
        for turn in screen.session.conversation.turns
        for part in turn.parts
        if isinstance(part, NoticePart) and part.kind == "not_delivered"
    )


async def _send_while_down(app: TalkieApp, proxy: KillableProxy, text: str) -> None:
    """Take the server away, send `text`, and see it kept once with Retry; the app quits."""
    async with app.run_test(size=SIZE) as pilot:
        screen = await connected_chat(app, pilot)
        await pilot.pause(0.5)  # a thread given to open has loaded (or not: it is the same)
        await proxy.down()
        await until(pilot, lambda: screen.header.state == "offline", WAIT)
        await put_and_send(pilot, screen, text)
        await until(pilot, lambda: _not_delivered(screen) == 1, WAIT)
        assert _sent(screen)[-1] == text
        assert len(screen.transcript.query(NoticeView)) == 1


async def _retried_after_restart(app: TalkieApp, proxy: KillableProxy, text: str) -> ChatScreen:
    """With the server back, a new app shows `text` not sent, once; Retry sends it once."""
    await proxy.up()
    async with app.run_test(size=SIZE) as pilot:
        screen = await connected_chat(app, pilot)
        await until(pilot, lambda: _not_delivered(screen) == 1, WAIT)
        assert _sent(screen).count(text) == 1
        await pilot.pause(0.5)  # nothing goes out by itself: it is the person's choice
        assert "while away" not in _answers(screen)
        await pilot.press("ctrl+r")  # Retry from the keyboard
        await until(pilot, lambda: "while away" in _answers(screen), WAIT)
        await until(pilot, lambda: _not_delivered(screen) == 0, WAIT)
        assert _sent(screen).count(text) == 1
        assert _answers(screen).count("while away") == 1
        return screen


async def test_a_message_sent_offline_in_a_new_thread_survives_a_quit_and_goes_out_once(
    server: Server, tmp_path: Path
) -> None:
    text = f"{server.echo} while away"
    async with KillableProxy(server.url) as proxy:
        await _send_while_down(app_on(proxy, server, tmp_path), proxy, text)
        screen = await _retried_after_restart(app_on(proxy, server, tmp_path), proxy, text)
        thread_id = screen.session.thread_id
        assert thread_id is not None
        again = app_on(proxy, server, tmp_path, thread_id=thread_id)
        async with again.run_test(size=SIZE) as pilot:  # the server kept it once
            screen = await connected_chat(again, pilot)
            await until(pilot, lambda: text in _sent(screen), WAIT)
            assert _sent(screen).count(text) == 1 and _not_delivered(screen) == 0


async def test_a_message_sent_offline_in_an_open_thread_survives_a_quit_and_goes_out_once(
    server: Server, tmp_path: Path
) -> None:
    text = f"{server.echo} while away"
    async with KillableProxy(server.url) as proxy:
        first = app_on(proxy, server, tmp_path)
        async with first.run_test(size=SIZE) as pilot:
            screen = await connected_chat(first, pilot)
            await put_and_send(pilot, screen, f"{server.echo} before")
            await until(pilot, lambda: "before" in _answers(screen), WAIT)
            thread_id = screen.session.thread_id
        assert thread_id is not None
        await _send_while_down(app_on(proxy, server, tmp_path, thread_id=thread_id), proxy, text)
        later = app_on(proxy, server, tmp_path, thread_id=thread_id)
        screen = await _retried_after_restart(later, proxy, text)
        assert _sent(screen) == [f"{server.echo} before", text]
