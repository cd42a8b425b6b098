"""SVG snapshots of the main screens, from a fixed server so that every run draws the same."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from talkie_tui import browser
from talkie_tui.auth.loopback import CallbackOutcome
from talkie_tui.auth.tokens import OAuthTokens
from talkie_tui.config import KnownServers, Settings
from talkie_tui.protocol.talkie.manifest import DiscoveredServer
from talkie_tui.protocol.talkie.models import Manifest
from talkie_tui.ui.app import TalkieApp
from talkie_tui.ui.screens.sign_in import SignInScreen
from talkie_tui.ui.widgets.action_card import ActionCard
from tests.ui.fake_server import MANIFEST, ORIGIN
from tests.ui.snapshot_steps import SIZE, ask, fixed_app, ready


@pytest.fixture
def app(tmp_path: Path) -> TalkieApp:
    return fixed_app(tmp_path)


def test_chat_with_streamed_answer_card_and_action(snap_compare, app: TalkieApp) -> None:
    """Markdown answer, tool status, a card and a pending action waiting with its hint."""

    async def run_before(pilot: Pilot[None]) -> None:
        await ask(pilot, "Show me Alfa")

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_a_focused_confirm(snap_compare, app: TalkieApp) -> None:
    """Ctrl+O on the waiting card: its Confirm has the focus, the hint says which keys work."""

    async def run_before(pilot: Pilot[None]) -> None:
        await ask(pilot, "Show me Alfa")
        await pilot.press("ctrl+o")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_a_risky_second_step(snap_compare, app: TalkieApp) -> None:
    """A high-risk action after one Enter on Confirm: it asks once more, nothing is decided."""

    async def run_before(pilot: Pilot[None]) -> None:
        screen = await ask(pilot, "Delete Tomáš Dvořák")
        await pilot.press("ctrl+o", "enter")
        card = screen.transcript.query_one(ActionCard)
        while not card.asking_again:
            await pilot.pause(0.05)
        while card.is_guarded:  # the guard dims the card for a moment: draw it settled
            await pilot.pause(0.05)
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_thread_list(snap_compare, app: TalkieApp) -> None:
    """The thread list, filtered."""

    async def run_before(pilot: Pilot[None]) -> None:
        await ready(pilot)
        await pilot.press("ctrl+b", "ctrl+b", "ctrl+b")  # to the list, hidden, shown again
        pilot.app.screen.query_one("ThreadList Input").focus()
        await pilot.press(*"of")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_help(snap_compare, app: TalkieApp) -> None:
    """F1 help over the chat screen."""

    async def run_before(pilot: Pilot[None]) -> None:
        await ready(pilot)
        await pilot.press("f1")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_error_with_retry(snap_compare, app: TalkieApp) -> None:
    """RUN_ERROR: the server's words, the code, and Retry."""

    async def run_before(pilot: Pilot[None]) -> None:
        await ask(pilot, "please fail")

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_small_terminal(snap_compare, app: TalkieApp) -> None:
    """80x24: the sidebar, transcript and composer still fit."""

    async def run_before(pilot: Pilot[None]) -> None:
        await ask(pilot, "Show me Alfa")

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


# --- the sign-in screen ----------------------------------------------------------------------

AUTH_ISSUER = "https://login.example.com"
AUTH_URL = (
    f"{AUTH_ISSUER}/authorize?response_type=code&client_id=https%3A%2F%2Ftalkie.firemni-crm.cz"
    "%2Foauth%2Fterminal.json&redirect_uri=http%3A%2F%2F127.0.0.1%3A53682%2Fcallback"
    "&scope=talkie+offline_access&state=Zm9yIHNuYXBzaG90cyBvbmx5&code_challenge="
    "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256&prompt=consent"
)


class FixedFlow:
    """A sign-in flow with a fixed address that waits for ever (a screen to draw, not to use)."""

    async def start(self) -> str:
        return AUTH_URL

    def submit(self, url: str) -> CallbackOutcome:
        return CallbackOutcome(False, "This answer does not belong to this sign-in.", False)

    async def wait(self, timeout: float = 600.0) -> OAuthTokens:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        return None


def oauth_server() -> DiscoveredServer:
    """The fixed server's manifest, offering OAuth sign-in."""
    document = MANIFEST | {"auth": {"oauth": {"issuer": AUTH_ISSUER}}}
    return DiscoveredServer(
        manifest=Manifest.model_validate(document),
        manifest_url=f"{ORIGIN}/.well-known/talkie.json",
        origin=ORIGIN,
        fetched_at=0.0,
        max_age=0.0,
    )


def test_sign_in(snap_compare, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The sign-in screen over SSH: the address, why no browser opens, the paste box."""
    monkeypatch.setattr(browser, "graphical_browser_available", lambda: False)
    monkeypatch.setattr(
        browser,
        "browser_description",
        lambda: "none: this is an SSH session, so the browser would open on the wrong machine",
    )
    app = TalkieApp(settings=Settings(downloads_dir=tmp_path), known=KnownServers.load())

    async def run_before(pilot: Pilot[None]) -> None:
        screen = SignInScreen(oauth_server(), FixedFlow, clock=lambda: 42.0)
        await pilot.app.push_screen(screen)
        for _ in range(200):
            if screen.url and "Waiting" in screen.status_text:
                break
            await pilot.pause(0.02)
        for box in screen.query(Input):
            box.cursor_blink = False
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
