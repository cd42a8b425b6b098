"""Voice notes in the real app against the reference hub: one an agent sent is drawn as a
waveform line with its length and Enter on it asks to play it (the playing itself, through a
real output device, is tests/voice/test_voice_notes_e2e.py); a recording (from a scripted
microphone here) stops at the longest note the hub takes and says so, and Esc throws one away
with nothing uploaded."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from talkie_tui.backends.base import Attachment
from talkie_tui.backends.cuckoo.backend import CuckooBackend
from talkie_tui.backends.cuckoo.backend import connect as connect_hub
from talkie_tui.commands.demo_cuckoo import CuckooDemo, cuckoo_demo
from talkie_tui.config import KnownServers, Settings
from talkie_tui.core.tokens import StaticToken
from talkie_tui.ui.app import TalkieApp
from talkie_tui.ui.chat import dictation
from talkie_tui.ui.chat.screen import ChatScreen
from talkie_tui.ui.widgets.attachment import AttachmentView
from talkie_tui.ui.widgets.voice_note import VoiceNoteView, waveform_cells
from talkie_tui.voice.memory_audio import ScriptedMicrophone
from tests.backends.cuckoo.conftest import Hub, hub
from tests.cuckoo_peer.voice_notes import WAVEFORM, send_voice_note
from tests.ui.flows import screen_text, until
from tests.ui.minara_e2e import notices

pytestmark = pytest.mark.slow

SIZE = (110, 30)


__all__ = ["hub"]  # the reference hub fixture, shared with the hub backend tests


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


@pytest.fixture
def microphone(monkeypatch: pytest.MonkeyPatch) -> ScriptedMicrophone:
    """The microphone "hears" three seconds of a tone; the hub takes notes of one second."""
    mic = ScriptedMicrophone()
    mic.say((np.sin(np.arange(3 * 48_000) * 2 * np.pi * 440 / 48_000) * 8000).astype(np.int16))
    monkeypatch.setattr(dictation, "make_microphone", lambda options: mic)
    monkeypatch.setattr(CuckooBackend, "voice_note_seconds", property(lambda self: 1))
    return mic


async def app_on_agent(hub: Hub, tmp_path: Path) -> tuple[CuckooBackend, TalkieApp]:
    person = await hub.person()
    agent = await hub.agent(person)
    backend = await hub.backend(person)
    app = TalkieApp(
        backend=backend,
        settings=Settings(token_storage="file"),
        known=KnownServers.load(tmp_path / "servers.json"),
        thread_id=agent.conversation_id,
    )
    return backend, app


async def test_a_recording_stops_at_the_longest_note_and_says_so(
    hub: Hub, tmp_path: Path, microphone: ScriptedMicrophone
) -> None:
    _backend, app = await app_on_agent(hub, tmp_path)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ChatScreen) and app.screen.is_mounted)
        chat = app.screen
        assert isinstance(chat, ChatScreen)
        await pilot.press("f6")
        await until(pilot, lambda: "Recording 00:0" in screen_text(app))
        await until(pilot, lambda: chat.attachments.ready_count() == 1, timeout=15)
        assert "The voice note stopped at 0:01, the longest this server takes." in notices(app)
        [item] = chat.attachments.items
        assert item.attachment is not None and item.attachment.duration_ms == 1000
        assert not chat.session.conversation.turns  # for review: nothing was sent


async def test_esc_throws_a_recording_away(
    hub: Hub, tmp_path: Path, microphone: ScriptedMicrophone, monkeypatch: pytest.MonkeyPatch
) -> None:
    uploads: list[int] = []
    upload = CuckooBackend.upload_voice_note

    async def counted(self: CuckooBackend, pcm: bytes, rate: int) -> Attachment:
        uploads.append(len(pcm))
        return await upload(self, pcm, rate)

    monkeypatch.setattr(CuckooBackend, "upload_voice_note", counted)
    _backend, app = await app_on_agent(hub, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ChatScreen) and app.screen.is_mounted)
        chat = app.screen
        assert isinstance(chat, ChatScreen)
        await pilot.press("f6")
        await until(pilot, lambda: chat.voice_notes.state == "recording")
        await pilot.press("escape")
        await until(pilot, lambda: chat.voice_notes.state == "idle")
        await pilot.pause(0.3)
        assert not chat.attachments.items and not chat.dictation_bar.display
    assert uploads == []  # nothing went to the hub


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[CuckooDemo]:
    with cuckoo_demo(tmp_path / "demo") as running:
        yield running


async def test_the_demo_agent_answers_a_voice_note_with_its_own(
    demo: CuckooDemo, tmp_path: Path, microphone: ScriptedMicrophone
) -> None:
    """`talkie demo --protocol cuckoo`'s pieces: a note recorded in the app goes to the hub, and
    the bridge serving the demo agent answers with a spoken note, drawn as one."""
    backend = await connect_hub(demo.hub_url, tokens=StaticToken(demo.session_token))
    app = TalkieApp(
        backend=backend,
        settings=Settings(token_storage="file"),
        known=KnownServers.load(tmp_path / "servers.json"),
        thread_id=demo.conversation_id,
    )
    try:
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: isinstance(app.screen, ChatScreen) and app.screen.is_mounted)
            chat = app.screen
            assert isinstance(chat, ChatScreen)
            await pilot.press("f6")
            await until(pilot, lambda: chat.attachments.ready_count() == 1, timeout=15)
            await pilot.press("enter")
            await until(pilot, lambda: len(chat.transcript.query(VoiceNoteView)) == 2, timeout=30)
            mine, reply = (view.part for view in chat.transcript.query(VoiceNoteView))
            assert mine.duration_ms == 1000
            assert reply.duration_ms is not None and reply.duration_ms > 1000
            assert len(reply.waveform) == 64
            await until(pilot, lambda: "Thank you for your voice note of 0:01" in screen_text(app))
            assert "↱ You: voice note 0:01" in screen_text(app)  # what the answer replies to
    finally:
        await backend.aclose()
