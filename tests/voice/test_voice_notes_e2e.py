"""Voice notes on the reference hub with real audio devices (PortAudio on PulseAudio null
sinks): a note an agent sent plays through the output device, its line drawing the progress,
and Esc stops it; F6 records espeak-ng speech from the microphone into a note that waits for
review, and Enter sends it: the hub holds a valid WAV with its length and 64-value waveform."""

from __future__ import annotations

import asyncio
import io
import os
import wave
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from textual.pilot import Pilot

from talkie_tui.config import KnownServers, Settings
from talkie_tui.ui.app import TalkieApp
from talkie_tui.ui.chat.screen import ChatScreen
from talkie_tui.ui.widgets.attachment_tray import AttachmentTray
from talkie_tui.ui.widgets.voice_note import VoiceNoteView
from tests.backends.cuckoo.conftest import Agent, Hub, hub
from tests.cuckoo_peer.voice_notes import send_voice_note
from tests.ui.flows import screen_text, until
from tests.voice.pulse import MIC_DEVICE, SPEAKER_DEVICE, PulseAudio

pytestmark = [pytest.mark.voice, pytest.mark.slow]

SIZE = (110, 30)
WAIT = 30.0


__all__ = ["hub"]  # the reference hub fixture, shared with the hub backend tests


async def opened(hub: Hub, tmp_path: Path, seconds: float | None) -> tuple[Any, Agent, TalkieApp]:
    """A person, their agent (which sent a note of `seconds` first, if given), and the app on
    that conversation with the test microphone and speaker."""
    person = await hub.person()
    agent = await hub.agent(person)
    if seconds is not None:
        await send_voice_note(agent.peer, agent.conversation_id, seconds=seconds)
    backend = await hub.backend(person)
    settings = Settings(
        token_storage="file",
        downloads_dir=tmp_path / "downloads",
        audio_input=MIC_DEVICE,
        audio_output=SPEAKER_DEVICE,
    )
    app = TalkieApp(
        backend=backend,
        settings=settings,
        known=KnownServers.load(tmp_path / "servers.json"),
        thread_id=agent.conversation_id,
    )
    return person, agent, app


async def chat_on(app: TalkieApp, pilot: Pilot[None]) -> ChatScreen:
    await until(pilot, lambda: isinstance(app.screen, ChatScreen) and app.screen.is_mounted)
    chat = app.screen
    assert isinstance(chat, ChatScreen)
    return chat


async def note_view(pilot: Pilot[None], chat: ChatScreen) -> VoiceNoteView:
    await until(pilot, lambda: bool(chat.transcript.query(VoiceNoteView)), WAIT)
    return chat.transcript.query_one(VoiceNoteView)


async def test_a_voice_note_plays_through_the_speaker_with_its_progress(
    pulse: PulseAudio, hub: Hub, tmp_path: Path
) -> None:
    _person, _agent, app = await opened(hub, tmp_path, seconds=1.5)
    async with app.run_test(size=SIZE) as pilot:
        chat = await chat_on(app, pilot)
        view = await note_view(pilot, chat)
        view.focus()
        speaker = pulse.start_speaker_recording()
        seen: list[float] = []
        await pilot.press("enter")
        await until(pilot, lambda: view.playing, WAIT)

        def heard() -> bool:
            if view.progress is not None:
                seen.append(view.progress)
            return not view.playing

        await until(pilot, heard, WAIT)
        samples = await asyncio.to_thread(speaker.stop)
    assert any(0 < p < 1 for p in seen)  # the line drew the progress between its ends
    assert seen == sorted(seen)
    assert np.abs(samples.astype(np.int32)).max() > 1000  # the tone came out of the speaker


async def test_esc_stops_a_voice_note_playing(pulse: PulseAudio, hub: Hub, tmp_path: Path) -> None:
    _person, _agent, app = await opened(hub, tmp_path, seconds=20.0)
    async with app.run_test(size=SIZE) as pilot:
        chat = await chat_on(app, pilot)
        view = await note_view(pilot, chat)
        view.focus()
        await pilot.press("enter")
        await until(pilot, lambda: (view.progress or 0) > 0.01, WAIT)
        assert " / 0:20" in screen_text(app)
        await pilot.press("escape")
        await until(pilot, lambda: not view.playing and chat.voice_notes.playing is None, WAIT)
        await until(pilot, lambda: not pulse.streams("sink-inputs"), WAIT)  # the device closed
        assert view.progress is None


async def test_a_recorded_voice_note_is_reviewed_then_sent_to_the_hub(
    pulse: PulseAudio, hub: Hub, tmp_path: Path
) -> None:
    person, agent, app = await opened(hub, tmp_path, seconds=None)
    speech = pulse.speech_wav("This is a voice note for the hub.")
    async with app.run_test(size=SIZE) as pilot:
        chat = await chat_on(app, pilot)
        await until(pilot, lambda: "f6 Voice note" in screen_text(app), WAIT)
        await pilot.press("f6")
        await until(pilot, lambda: chat.voice_notes.state == "recording", WAIT)
        await until(pilot, lambda: bool(pulse.streams("source-outputs")), WAIT)  # mic is open
        player = pulse.play_wav_into_mic(speech, wait=False)
        await asyncio.to_thread(player.wait, 30)
        await pilot.press("enter")  # stops the recording; sends nothing yet
        await until(pilot, lambda: chat.attachments.ready_count() == 1, WAIT)
        assert chat.voice_notes.state == "idle"
        assert not chat.session.conversation.turns  # waiting for review, not sent
        await until(pilot, lambda: "♪ voice note" in screen_text(app), WAIT)
        review = chat.query_one(AttachmentTray).query_one(VoiceNoteView)
        assert review.part.duration_ms is not None and len(review.part.waveform) == 64
        svg = Path(os.environ.get("TALKIE_VOICE_REVIEW_SVG", str(tmp_path / "review.svg")))
        svg.write_text(app.export_screenshot(), encoding="utf-8")
        review.focus()
        await pilot.press("enter")  # heard before it is sent
        await until(pilot, lambda: review.playing, WAIT)
        await pilot.press("escape")
        await until(pilot, lambda: not review.playing, WAIT)
        chat.composer.focus()
        await pilot.press("enter")  # the empty composer sends the note
        await until(pilot, lambda: bool(chat.transcript.query(VoiceNoteView)), WAIT)
    async with httpx.AsyncClient(trust_env=False, timeout=10) as http:
        listed = await http.get(
            f"{hub.url}/v1/client/conversations/{agent.conversation_id}/messages",
            headers={"Authorization": f"Bearer {person.token}"},
        )
        [message] = listed.json()["messages"]
        [attachment] = message["body"]["attachments"]
        wav = await http.get(
            f"{hub.url}/v1/client/media/{attachment['media_id']}",
            headers={"Authorization": f"Bearer {person.token}"},
        )
    assert (attachment["kind"], attachment["mime_type"]) == ("audio", "audio/wav")
    waveform = attachment["waveform"]
    assert len(waveform) == 64 and max(waveform) == 100 and all(0 <= v <= 100 for v in waveform)
    with wave.open(io.BytesIO(wav.content)) as file:
        assert (file.getnchannels(), file.getsampwidth(), file.getframerate()) == (1, 2, 16_000)
        seconds = file.getnframes() / 16_000
    assert abs(attachment["duration_ms"] - seconds * 1000) <= 1
    with wave.open(str(speech)) as spoken:
        assert seconds >= spoken.getnframes() / spoken.getframerate()  # all of it was heard
