"""The whole UI in Czech: chosen from the setting, the system's language or the server's.

The snapshots show every part of the chat screen (header, thread list, transcript, card, action,
composer, footer) and the help in Czech; what the server's agent wrote stays as it wrote it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from textual.pilot import Pilot

from talkie_tui.config import KnownServers, Settings
from talkie_tui.i18n import current_language, use_language
from talkie_tui.protocol.net.http import make_http_client
from talkie_tui.ui.app import TalkieApp
from tests.helpers import TEST_TOKEN
from tests.ui.fake_server import ORIGIN, connect_fixed
from tests.ui.flows import FAST, chat_screen, send, until
from tests.ui.snapshot_steps import SIZE, ask, ready


def czech_fixed_app(tmp_path: Path) -> TalkieApp:
    """The snapshot app (fixed server) with `language = "cs"` in its settings."""
    return TalkieApp(
        ORIGIN,
        token="dev-token",
        settings=Settings(downloads_dir=tmp_path, language="cs"),
        known=KnownServers.load(),
        connect=connect_fixed,
    )


def test_snapshot_czech_chat_with_card_and_action(snap_compare: Any, tmp_path: Path) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        await ask(pilot, "Show me Alfa")

    assert snap_compare(czech_fixed_app(tmp_path), terminal_size=SIZE, run_before=run_before)


def test_snapshot_czech_help(snap_compare: Any, tmp_path: Path) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        await ready(pilot)
        await pilot.press("f1")
        await pilot.pause()

    assert snap_compare(czech_fixed_app(tmp_path), terminal_size=SIZE, run_before=run_before)


def footer_words(app: TalkieApp) -> set[str]:
    """The descriptions the footer shows for the screen's bindings."""
    return {active.binding.description for active in app.screen.active_bindings.values()}


async def run_in(
    url: str, tmp_path: Path, language: str = "auto"
) -> tuple[str, set[str], str, str]:
    """Open the app on `url`: its language, footer words, composer title and an answer."""
    settings = Settings(downloads_dir=tmp_path / "downloads", language=language)
    app = TalkieApp(url, token=TEST_TOKEN, settings=settings, known=KnownServers.load())
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        await send(pilot, screen, "talkie-test:echo Dobrý den")
        await until(pilot, lambda: "Dobrý den" in screen.session.conversation.turns[-1].text)
        title = str(screen.composer.border_title)
        return (
            current_language(),
            footer_words(app),
            title,
            screen.session.conversation.turns[-1].text,
        )


async def test_the_system_language_gives_a_czech_ui(
    devserver: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LANG", "cs_CZ.UTF-8")
    language, words, title, answer = await run_in(devserver(**FAST), tmp_path)
    assert language == "cs"
    assert {"Nápověda", "Ukončit"} <= words and "Help" not in words
    assert title == "Zpráva"
    assert "Dobrý den" in answer  # the server's words, as it wrote them


async def test_without_a_system_language_the_server_s_locale_decides(
    devserver: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LANG", "C.UTF-8")
    language, words, title, _answer = await run_in(devserver(locale="cs", **FAST), tmp_path)
    assert language == "cs" and "Nápověda" in words and title == "Zpráva"


async def test_the_setting_overrides_the_system_and_the_server(
    devserver: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LANG", "cs_CZ.UTF-8")
    language, words, title, _answer = await run_in(
        devserver(locale="cs", **FAST), tmp_path, language="en"
    )
    assert language == "en" and "Help" in words and title == "Message"


async def test_servers_are_asked_for_the_ui_language() -> None:
    seen: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers["Accept-Language"])
        return httpx.Response(204)

    async with make_http_client(transport=httpx.MockTransport(answer)) as http:
        await http.get("http://127.0.0.1/status")
        use_language("cs")
        await http.get("http://127.0.0.1/status")
        await http.get("http://127.0.0.1/status", headers={"Accept-Language": "de"})
    assert seen == ["en", "cs, en;q=0.5", "de"]
