"""A voice note an agent sent, in the real app against the reference hub: drawn as a waveform
line with its length, reachable by Tab, and Enter on it asks to play it (the playing itself,
through a real output device, is tests/voice/test_voice_notes_e2e.py)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from talkie_tui.config import KnownServers, Settings
from talkie_tui.ui.app import TalkieApp
from talkie_tui.ui.chat.screen import ChatScreen
from talkie_tui.ui.widgets.attachment import AttachmentView
from talkie_tui.ui.widgets.voice_note import VoiceNoteView, waveform_cells
from tests.backends.cuckoo.conftest import FAST_HUB, Hub
from tests.cuckoo_peer.voice_notes import WAVEFORM, send_voice_note
from tests.ui.flows import screen_text, until

pytestmark = pytest.mark.slow

SIZE = (110, 30)


@pytest.fixture
async def hub(cuckoo_hub: Callable[..., str]) -> AsyncIterator[Hub]:
    codes: dict[str, str] = {}
    made = Hub(cuckoo_hub(code_sink=codes.__setitem__, **FAST_HUB), codes)
    yield made
    for backend in made.backends:
        await backend.aclose()
    for agent in made.agents:
        await agent.close()


async def test_a_received_voice_note_shows_as_a_waveform_with_its_length(
    hub: Hub, tmp_path: Path
) -> None:
    person = await hub.person()
    agent = await hub.agent(person)
    message = await send_voice_note(agent.peer, agent.conversation_id, seconds=7.2)
    [attachment] = message["body"]["attachments"]
    assert attachment["duration_ms"] == 7200 and attachment["waveform"] == WAVEFORM
    backend = await hub.backend(person)
    app = TalkieApp(
        backend=backend,
        settings=Settings(token_storage="file", downloads_dir=tmp_path / "downloads"),
        known=KnownServers.load(tmp_path / "servers.json"),
        thread_id=agent.conversation_id,
    )
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ChatScreen) and app.screen.is_mounted)
        chat = app.screen
        assert isinstance(chat, ChatScreen)
        await until(pilot, lambda: bool(chat.transcript.query(VoiceNoteView)), timeout=15)
        view = chat.transcript.query_one(VoiceNoteView)
        assert not chat.transcript.query(AttachmentView)  # a voice note, not a file row
        assert view.part.duration_ms == 7200 and view.part.waveform == tuple(WAVEFORM)
        wave = waveform_cells(tuple(WAVEFORM))
        await until(pilot, lambda: f"▶ {wave} 0:07" in screen_text(app))
        assert "f6 Voice note" in screen_text(app)  # the push-to-talk key records one here
        svg = Path(os.environ.get("TALKIE_VOICE_NOTE_SVG", str(tmp_path / "voice-note.svg")))
        svg.write_text(app.export_screenshot(), encoding="utf-8")
        asked: list[VoiceNoteView] = []
        chat.voice_notes.play = asked.append  # type: ignore[method-assign,assignment]
        view.focus()
        await pilot.press("enter")
        await until(pilot, lambda: asked == [view])
