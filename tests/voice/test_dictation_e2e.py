"""Dictation with real parts: the microphone is PortAudio on a PulseAudio null sink fed with
espeak-ng speech, the recording goes to the reference gateway's `POST /v1/voice/transcribe`,
and the transcript lands in the real app's composer, sent only when the person presses Enter."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from talkie_tui import backends
from talkie_tui.config import KnownServers, Settings
from talkie_tui.core.tokens import StaticToken
from talkie_tui.devserver.minara.voice import SCRIPT
from talkie_tui.ui.app import TalkieApp
from tests.helpers import AUTH, TEST_TOKEN
from tests.ui.minara_e2e import SIZE, WAIT, chat, until
from tests.voice.pulse import MIC_DEVICE, PulseAudio

pytestmark = [pytest.mark.voice, pytest.mark.slow]


async def test_spoken_words_reach_the_composer_for_review_and_go_with_their_recording(
    pulse: PulseAudio, gateway_url: str, tmp_path: Path
) -> None:
    backend = await backends.connect(gateway_url, protocol="minara", tokens=StaticToken(TEST_TOKEN))
    settings = Settings(
        downloads_dir=tmp_path / "downloads", token_storage="file", audio_input=MIC_DEVICE
    )
    known = KnownServers.load(tmp_path / "servers.json")
    app = TalkieApp(settings=settings, known=known, backend=backend)
    speech = pulse.speech_wav("Please show me my portfolio.")
    async with app.run_test(size=SIZE) as pilot:
        screen = await chat(app, pilot)
        await pilot.press("f6")
        await until(pilot, lambda: screen.dictation.state == "recording", WAIT)
        await until(pilot, lambda: bool(pulse.streams("source-outputs")), WAIT)  # mic is open
        player = pulse.play_wav_into_mic(speech, wait=False)
        await asyncio.to_thread(player.wait, 30)
        await pilot.press("enter")  # stops the recording; sends nothing
        await until(pilot, lambda: screen.dictation.state == "idle", WAIT)
        assert screen.composer.text == SCRIPT[0]  # the gateway heard speech: its first line
        assert not screen.answering and not screen.session.conversation.turns
        await pilot.press("enter")
        await until(pilot, lambda: bool(screen.session.thread_id) and not screen.answering, WAIT)
        thread_id = screen.session.thread_id

    async with httpx.AsyncClient(base_url=gateway_url, headers=AUTH, timeout=10) as http:
        detail = (await http.get(f"/v1/sessions/{thread_id}")).json()
    sent = [row for row in detail["messages"] if row.get("role") == "user"]
    assert [row.get("content") for row in sent] == [SCRIPT[0]]
    key = sent[0].get("voice_input_key")
    assert isinstance(key, str) and key  # the recording went with the transcript
    async with httpx.AsyncClient(base_url=gateway_url, headers=AUTH, timeout=10) as http:
        wav = (await http.get(f"/v1/files/{key}")).content
    assert wav[:4] == b"RIFF" and len(wav) > 16_000  # the stored recording is the real one
