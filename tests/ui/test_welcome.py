"""The start of a new thread: the real app on the reference server, and a snapshot in the real app.

The welcome panel shows the server's name and description, what it offers and the keys to
start; it goes with the first message, is not a part of the conversation (so never exported),
and does not appear over a stored thread being opened.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Static

from talkie_tui.devserver.talkie import routes
from talkie_tui.i18n import use_language
from talkie_tui.ui.widgets import transcript as transcript_module
from talkie_tui.ui.widgets.transcript import TurnView
from talkie_tui.ui.widgets.welcome import Welcome, WelcomePanel
from tests.ui import fake_server
from tests.ui.flows import FAST, chat_screen, make_app, screen_text, send, until
from tests.ui.snapshot_steps import SIZE, fixed_app, ready

DESCRIPTION = "Sales assistant of the Talkie demo CRM (sample data)"


def panel_text(panel: WelcomePanel) -> str:
    """The panel's words, line by line, as its Statics hold them."""
    return "\n".join(str(static.render()) for static in panel.query(Static))


async def test_a_new_thread_shows_the_server_its_offers_and_the_keys(
    devserver, tmp_path: Path
) -> None:
    """The demo server (voice, actions): name, description, what it offers, F5 among the keys."""
    app = make_app(devserver(**FAST, fake_voice=True), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        panel = screen.transcript.welcome_panel
        assert panel is not None and panel.is_mounted
        await until(pilot, lambda: "Start a voice call" in panel_text(panel))  # after status
        text = panel_text(panel)
        for words in (
            "Talkie Demo CRM",
            DESCRIPTION,
            "This server offers",
            "Voice calls: talk with the agent through your microphone",
            "Actions: proposed by the agent, done only after you confirm (by key or voice)",
            "Send the message (Ctrl+J adds a new line)",
            "Help and all keys",
            "Command palette",
        ):
            assert words in text
        await until(pilot, lambda: DESCRIPTION in screen_text(app))
        assert "F5" in screen_text(app) and "Ctrl+P" in screen_text(app)
        # UI only: the conversation has no turn for it.
        assert screen.session.conversation.turns == []


async def test_without_voice_the_panel_offers_no_call(devserver, tmp_path: Path) -> None:
    """A server without voice: no voice line and no F5; actions are confirmed by key."""
    app = make_app(devserver(**FAST), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        panel = screen.transcript.welcome_panel
        assert panel is not None
        text = panel_text(panel)
        assert "Voice calls" not in text and "Start a voice call" not in text
        assert "Actions: proposed by the agent, done only after you confirm" in text
        assert "(by key or voice)" not in text


async def test_the_panel_goes_with_the_first_message_and_comes_back_for_a_new_thread(
    devserver, tmp_path: Path
) -> None:
    app = make_app(devserver(**FAST), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        assert screen.transcript.welcome_panel is not None
        await send(pilot, screen, "talkie-test:echo hello")
        assert screen.transcript.welcome_panel is None
        assert not screen.transcript.query(WelcomePanel)
        assert DESCRIPTION not in screen_text(app)
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert len(screen.transcript.query(WelcomePanel)) == 1


async def test_a_new_thread_over_an_empty_one_shows_one_panel(devserver, tmp_path: Path) -> None:
    """Ctrl+N while the panel is still there: the old one is replaced, never duplicated."""
    app = make_app(devserver(**FAST), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        for _ in range(3):
            await pilot.press("ctrl+n")
            await pilot.pause()
        await until(pilot, lambda: len(screen.transcript.query(WelcomePanel)) == 1)
        assert screen.transcript.welcome_panel is not None
        assert screen.transcript.welcome_panel.is_mounted


async def test_an_opened_thread_with_messages_has_no_panel(
    devserver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From the thread list, and with --thread (where no panel may flash before the turns)."""
    url = devserver(**FAST)
    app = make_app(url, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        await send(pilot, screen, "talkie-test:echo stored")
        thread = screen.session.thread_id
        assert thread is not None
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert screen.transcript.query(WelcomePanel)
        screen.open_thread(thread)
        await until(pilot, lambda: screen.session.thread_id == thread)
        await pilot.pause()
        assert screen.transcript.query(TurnView)
        assert not screen.transcript.query(WelcomePanel)
        assert screen.transcript.welcome_panel is None

    made: list[WelcomePanel] = []

    def counted(welcome: Welcome, **kwargs: Any) -> WelcomePanel:
        made.append(WelcomePanel(welcome, **kwargs))
        return made[-1]

    monkeypatch.setattr(transcript_module, "WelcomePanel", counted)
    again = make_app(url, tmp_path, thread_id=thread)
    async with again.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(again, pilot)
        await until(pilot, lambda: bool(screen.transcript.query(TurnView)))
        assert made == []


async def test_the_panel_is_never_exported(devserver, tmp_path: Path) -> None:
    """Export has the turns only: no description, offers or keys of the panel."""
    app = make_app(devserver(**FAST, fake_voice=True), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        await pilot.press("ctrl+s")  # nothing to export yet: the panel is not a turn
        await pilot.pause()
        assert not list((tmp_path / "downloads").glob("*.md"))
        await send(pilot, screen, "talkie-test:echo exported")
        await pilot.press("ctrl+s")
        files = list((tmp_path / "downloads").glob("*.md"))
        assert len(files) == 1
        text = files[0].read_text()
        assert "talkie-test:echo exported" in text
        for words in (DESCRIPTION, "This server offers", "Voice calls", "Help and all keys"):
            assert words not in text


async def test_server_name_and_description_are_plain_text(
    devserver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Escape sequences are stripped, markup is shown as characters and never run."""
    build = routes.build_manifest

    def hostile(*args: Any) -> dict[str, Any]:
        return build(*args) | {
            "name": "[@click=app.quit]Evil[/] \x1b]52;c;aGk=\x07CRM",
            "description": "[b]bold[/b] \x1b[2Jcleared \x9b31mred [link=https://x.test]x[/link]",
        }

    monkeypatch.setattr(routes, "build_manifest", hostile)
    app = make_app(devserver(**FAST), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        panel = screen.transcript.welcome_panel
        assert panel is not None
        text = panel_text(panel)
        assert "[@click=app.quit]Evil[/] CRM" in text
        assert "[b]bold[/b] cleared red [link=https://x.test]x[/link]" in text
        assert not any(char in text for char in "\x1b\x07\x9b")
        await until(pilot, lambda: "[b]bold[/b] cleared red" in screen_text(app))
        assert "[@click=app.quit]Evil[/] CRM" in screen_text(app)
        await pilot.click(WelcomePanel)
        assert app.is_running


def test_the_panel_speaks_czech() -> None:
    """Formal Czech, with the keys as people write them."""
    welcome = Welcome("CRM", voice=True, actions=True, voice_confirm=True, voice_allowed=True)
    use_language("cs")
    try:
        offers, keys = welcome.offer_lines(), welcome.key_rows()
    finally:
        use_language("en")
    assert offers == [
        "Hlasové hovory: mluvte s agentem přes mikrofon",
        "Akce: navrhuje je agent, provedou se až po vašem potvrzení (klávesou nebo hlasem)",
    ]
    assert keys == [
        ("Enter", "Odeslat zprávu (Ctrl+J přidá nový řádek)"),
        ("F5", "Zahájit hlasový hovor"),
        ("F1", "Nápověda a všechny klávesy"),
        ("Ctrl+P", "Paleta příkazů"),
    ]


def test_voice_not_allowed_is_said_and_offers_no_key() -> None:
    welcome = Welcome("CRM", voice=True, voice_allowed=False)
    assert welcome.offer_lines() == ["Voice calls (not enabled for your account)"]
    assert "F5" not in [key for key, _what in welcome.key_rows()]


# --- the snapshot, inside the real TalkieApp -------------------------------------------------


def test_snapshot_new_thread(snap_compare, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A new thread on a server with a description, voice and actions."""
    voice_endpoints = {
        "voiceSessions": "/api/talkie/voice/sessions",
        "voiceTool": "/api/talkie/voice/sessions/{voiceSessionId}/tools/{name}",
        "voiceTranscript": "/api/talkie/voice/sessions/{voiceSessionId}/transcript",
        "voiceUsage": "/api/talkie/voice/sessions/{voiceSessionId}/usage",
    }
    manifest = fake_server.MANIFEST | {
        "description": "Sales assistant of Example CRM: companies, contacts, offers and meetings",
        "endpoints": fake_server.MANIFEST["endpoints"] | voice_endpoints,
        "capabilities": {
            "voice": {"transports": ["webrtc"], "eventProtocols": ["openai-realtime/1"]},
            "actions": {"voiceConfirm": True},
        },
    }
    monkeypatch.setattr(fake_server, "MANIFEST", manifest)
    monkeypatch.setattr(fake_server, "STATUS", fake_server.STATUS | {"voice": True})

    async def run_before(pilot: Pilot[None]) -> None:
        screen = await ready(pilot)
        panel = screen.transcript.welcome_panel
        assert panel is not None and panel.welcome.call_key

    assert snap_compare(fixed_app(tmp_path), terminal_size=SIZE, run_before=run_before)


def test_a_gateway_panel_names_what_it_offers_and_its_keys() -> None:
    from talkie_tui.backends.base import Capabilities, ServerInfo

    offers = Capabilities(
        questions=True, attachments=True, search=True, models=True, dictation=True
    )
    info = ServerInfo("gw", "http://127.0.0.1:1", "minara", "Minara gateway", capabilities=offers)
    welcome = Welcome.from_info(info)
    lines = " ".join(welcome.offer_lines())
    for word in ("Questions", "Files", "Search", "Models", "Dictation"):
        assert word in lines
    assert "Voice calls" not in lines and "Actions" not in lines
    keys = dict(welcome.key_rows())
    assert "Attach a file" in keys.values() and "Dictate a message" in keys.values()


def test_a_talkie_panel_says_nothing_of_a_gateways_offers() -> None:
    from talkie_tui.backends.base import ServerInfo

    welcome = Welcome.from_info(ServerInfo("s", "http://127.0.0.1:1", "talkie", "CRM"))
    assert welcome.offer_lines() == []
    assert len(welcome.key_rows()) == 3


def test_a_hub_panel_names_its_buttons_and_devices() -> None:
    from talkie_tui.backends.base import Capabilities, ServerInfo

    offers = Capabilities(attachments=True, buttons=True, devices=True, live=True)
    info = ServerInfo("hub", "http://127.0.0.1:1", "cuckoo", "Cuckoo hub", capabilities=offers)
    welcome = Welcome.from_info(info)
    lines = welcome.offer_lines()
    assert "Buttons: the agent's choices and quick replies, taken with a key" in lines
    assert "Devices: see where you are signed in, in the command palette" in lines
    assert dict(welcome.key_rows())["Ctrl+O"] == "Go to the agent's buttons"
