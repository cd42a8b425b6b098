"""`talkie connect` finds a Minara gateway, asks for its token, keeps it, and uses it again."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from talkie_tui.auth.bearer_grants import find_bearer
from talkie_tui.auth.file_store import FileStore
from talkie_tui.config import KnownServers, Settings
from talkie_tui.ui.app import TalkieApp
from talkie_tui.ui.screens.connect import ConnectScreen
from talkie_tui.ui.screens.token_prompt import TokenScreen
from tests.helpers import TEST_TOKEN
from tests.stub_server import StubServer
from tests.ui.flows import chat_composed

pytestmark = pytest.mark.slow


def app_for(address: str, tmp_path: Path, **options: object) -> TalkieApp:
    settings = Settings(token_storage="file")
    known = KnownServers.load(tmp_path / "servers.json")
    return TalkieApp(address, settings=settings, known=known, **options)  # type: ignore[arg-type]


async def wait_for(pilot: object, condition: Callable[[], bool], seconds: float = 10.0) -> None:
    for _ in range(int(seconds / 0.05)):
        if condition():
            return
        await pilot.pause(0.05)  # type: ignore[attr-defined]
    raise AssertionError("the screen did not get there")


async def test_a_gateway_is_found_its_token_asked_for_kept_and_used_again(
    gateway_url: str, tmp_path: Path
) -> None:
    address = gateway_url.removeprefix("http://")
    app = app_for(address, tmp_path)
    async with app.run_test(size=(110, 36)) as pilot:
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, TokenScreen) and bool(app.screen.query("#token-input")),
        )
        screen = app.screen
        assert isinstance(screen, TokenScreen)
        assert "Bearer" in screen.query_one("#token-reason").render().plain  # the gateway's words
        await pilot.press(*"wrong-token", "enter")
        await wait_for(pilot, lambda: "Not signed in" in screen.status_text)
        assert isinstance(app.screen, TokenScreen)  # asked again, nothing else happened
        screen.query_one("#token-input").value = TEST_TOKEN  # type: ignore[attr-defined]
        await pilot.press("enter")
        await wait_for(pilot, lambda: chat_composed(app))
        assert app.backend is not None and app.backend.info.protocol == "minara"

    origin = gateway_url
    kept = find_bearer(origin, origin, FileStore())
    assert kept is not None and kept[0] == TEST_TOKEN
    entry = KnownServers.load(tmp_path / "servers.json").find(address)
    assert entry is not None and entry.protocol == "minara"
    assert entry.signed_in  # kept in the private file: it lasts

    again = app_for(address, tmp_path)
    async with again.run_test(size=(110, 36)) as pilot:
        await wait_for(pilot, lambda: chat_composed(again))


async def test_an_address_that_is_neither_says_so(tmp_path: Path) -> None:
    async def a_web_page(request: Request) -> Response:
        return PlainTextResponse("Welcome to my blog", status_code=404)

    stub = StubServer(Starlette(routes=[Route("/{path:path}", a_web_page)])).start()
    try:
        app = app_for(stub.origin.removeprefix("http://"), tmp_path)
        async with app.run_test(size=(110, 36)) as pilot:
            screen = app.screen
            assert isinstance(screen, ConnectScreen)
            await wait_for(pilot, lambda: "✗" in screen.status_text)
            assert "not a Talkie, Minara or Cuckoo server" in screen.status_text
    finally:
        stub.stop()


async def test_an_address_where_nothing_answers_says_that(tmp_path: Path) -> None:
    app = app_for("127.0.0.1:9", tmp_path)  # the discard port: nothing listens
    async with app.run_test(size=(110, 36)) as pilot:
        screen = app.screen
        assert isinstance(screen, ConnectScreen)
        await wait_for(pilot, lambda: "✗" in screen.status_text)
        assert "connection refused" in screen.status_text
        assert "not a Talkie, Minara or Cuckoo server" not in screen.status_text
