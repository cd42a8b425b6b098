"""Issue 20: an answer that ended without its protocol's end says "The answer is incomplete",
live and after a reload, on all three protocols; where the server later has the whole answer,
the whole answer replaces it.

A Talkie server and a Minara gateway are stopped mid-answer (their stored answer is what they
had written, marked as cut short) and started again on the same port and database; a hub
closes an agent's stream that went quiet (`stream_idle_seconds`), as the spec says it must.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import AbstractContextManager, ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest
from textual.pilot import Pilot

from talkie_tui.commands.demo_cuckoo import _Codes, _set_up
from talkie_tui.config import KnownServers, Settings
from talkie_tui.devserver.cuckoo.config import HubConfig
from talkie_tui.devserver.cuckoo.runner import serve_in_thread as serve_hub
from talkie_tui.devserver.minara.config import GatewayConfig
from talkie_tui.devserver.minara.runner import serve_in_thread as serve_gateway
from talkie_tui.devserver.talkie.config import ServerConfig
from talkie_tui.devserver.talkie.runner import serve_in_thread as serve_talkie
from talkie_tui.ui.app import TalkieApp
from talkie_tui.ui.chat.screen import ChatScreen
from tests.helpers import TEST_TOKEN
from tests.ui.flows import put_and_send, screen_text, until

pytestmark = pytest.mark.slow

SIZE = (120, 40)
WAIT = 60.0
INCOMPLETE = "The answer is incomplete"


class Restartable:
    """A reference server that can be stopped (gracefully, as Ctrl+C does) and started again
    on the same port and database."""

    def __init__(self, serve: Any, config: Any) -> None:
        self._serve, self._config = serve, config
        self._running: AbstractContextManager[str] | None = None
        self.url = self.start()

    def start(self) -> str:
        """Start (again)."""
        self._running = self._serve(self._config)
        url = self._running.__enter__()
        port = httpx.URL(url).port
        self._config = type(self._config)(**{**vars(self._config), "port": port})
        return url

    def stop(self) -> None:
        """Stop: the answers being written are stored as far as they went."""
        if self._running is not None:
            self._running.__exit__(None, None, None)
            self._running = None


@pytest.fixture
def stops() -> Iterator[ExitStack]:
    with ExitStack() as stack:
        yield stack


def app_on(url: str, tmp_path: Path, **options: Any) -> TalkieApp:
    settings = Settings(downloads_dir=tmp_path / "downloads", token_storage="file")
    known = KnownServers.load(tmp_path / "servers.json")
    return TalkieApp(url, settings=settings, known=known, **options)


async def chat(app: TalkieApp, pilot: Pilot[None]) -> ChatScreen:
    await until(pilot, lambda: isinstance(app.screen, ChatScreen) and app.screen.is_mounted, WAIT)
    screen = app.screen
    assert isinstance(screen, ChatScreen)
    await until(pilot, lambda: screen.header.state == "connected", WAIT)
    return screen


def answer_text(screen: ChatScreen) -> str:
    return "".join(t.text for t in screen.session.conversation.turns if t.role == "assistant")


async def cut_mid_answer(
    server: Restartable, app: TalkieApp, message: str
) -> tuple[str | None, str]:
    """Send `message`, stop the server mid-answer, stop waiting (Esc): the thread id and the
    text that had arrived, once the screen says the answer is incomplete."""
    async with app.run_test(size=SIZE) as pilot:
        screen = await chat(app, pilot)
        await put_and_send(pilot, screen, message)
        await until(pilot, lambda: len(answer_text(screen)) > 40, WAIT)
        await asyncio.to_thread(server.stop)
        await until(pilot, lambda: screen.header.state in ("reconnecting", "offline"), WAIT)
        await pilot.press("escape")  # stop waiting: the answer is cut and stays so
        await until(pilot, lambda: INCOMPLETE in screen_text(app), WAIT)
        return screen.session.thread_id, answer_text(screen)


async def reloaded(app: TalkieApp, arrived: str) -> None:
    """A new app opening the thread shows what was written, marked incomplete."""
    async with app.run_test(size=SIZE) as pilot:
        screen = await chat(app, pilot)
        await until(pilot, lambda: INCOMPLETE in screen_text(app), WAIT)
        assert answer_text(screen).startswith(arrived[:40])


async def test_a_talkie_answer_cut_by_a_server_stop_is_marked_then_replaced(
    tmp_path: Path, stops: ExitStack
) -> None:
    config = ServerConfig(test_mode=True, dev_token=TEST_TOKEN, db_path=tmp_path / "t.sqlite3")
    server = Restartable(serve_talkie, config)
    stops.callback(server.stop)
    message = "talkie-test:markdown 300 40 7"
    thread_id, arrived = await cut_mid_answer(
        server, app_on(server.url, tmp_path, token=TEST_TOKEN), message
    )
    assert thread_id is not None
    await asyncio.to_thread(server.start)
    app = app_on(server.url, tmp_path, token=TEST_TOKEN, thread_id=thread_id)
    await reloaded(app, arrived)
    app = app_on(server.url, tmp_path, token=TEST_TOKEN, thread_id=thread_id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await chat(app, pilot)
        await until(pilot, lambda: INCOMPLETE in screen_text(app), WAIT)
        await pilot.click(".notice--retry-button")  # the server answers it again, whole
        await until(pilot, lambda: screen.session.conversation.turns[-1].state == "done", WAIT)
        await until(pilot, lambda: INCOMPLETE not in screen_text(app), WAIT)
        answers = [t for t in screen.session.conversation.turns if t.role == "assistant"]
        assert len(answers) == 1 and len(answers[0].text) > len(arrived)
        assert [t.text for t in screen.session.conversation.turns if t.role == "user"] == [message]


async def test_a_minara_answer_cut_by_a_gateway_stop_is_marked(
    tmp_path: Path, stops: ExitStack
) -> None:
    config = GatewayConfig(test_mode=True, auth_token=TEST_TOKEN, db_path=tmp_path / "m.sqlite3")
    server = Restartable(serve_gateway, config)
    stops.callback(server.stop)
    options = {"gateway_token": TEST_TOKEN, "protocol": "minara"}
    app = app_on(server.url, tmp_path, **options)
    thread_id, arrived = await cut_mid_answer(server, app, "minara-test:markdown 300 40 7")
    assert thread_id is not None
    await asyncio.to_thread(server.start)
    await reloaded(app_on(server.url, tmp_path, thread_id=thread_id, **options), arrived)


async def test_a_hub_reply_the_agent_left_unfinished_is_marked(tmp_path: Path) -> None:
    codes = _Codes()
    config = HubConfig(
        dev=True, db_path=tmp_path / "hub.sqlite3", code_sink=codes, stream_idle_seconds=1.0
    )
    with serve_hub(config) as hub_url:
        token, _user, _agent, secret, conversation = await _set_up(hub_url, codes)
        options = {"hub_token": token, "protocol": "cuckoo", "thread_id": conversation}
        app = app_on(hub_url, tmp_path, **options)
        async with (
            app.run_test(size=SIZE) as pilot,
            httpx.AsyncClient(
                base_url=hub_url, headers={"Authorization": f"Bearer {secret}"}
            ) as agent,
        ):
            screen = await chat(app, pilot)
            started = await agent.post(
                f"/v1/agent/conversations/{conversation}/messages", json={"stream": True}
            )
            assert started.status_code == 201, started.text
            message_id = started.json()["message"]["id"]
            appended = await agent.post(
                f"/v1/agent/messages/{message_id}/append", json={"text": "Half of an ans"}
            )
            assert appended.status_code == 204, appended.text
            await until(pilot, lambda: "Half of an ans" in answer_text(screen), WAIT)
            await until(pilot, lambda: INCOMPLETE in screen_text(app), WAIT)  # went quiet
        await reloaded(app_on(hub_url, tmp_path, **options), "Half of an ans")
