"""Voice end to end with real parts: PulseAudio, PortAudio, espeak-ng, aiortc on both sides.

The microphone is the monitor of the `talkie_mic` null sink, fed with espeak-ng speech; the
assistant plays into `talkie_speaker`. talkie's real device backend (sounddevice/PortAudio)
records and plays; the reference server's fake provider answers over WebRTC on 127.0.0.1 and
calls the server's tools. (The provider takes the user's words from its script; it hears that
someone spoke, from the audio's energy.)
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from talkie_tui.core.tokens import StaticToken
from talkie_tui.protocol.talkie.client import TalkieClient
from talkie_tui.voice.call import VoiceCall
from talkie_tui.voice.call_updates import ConsentHeard, VoiceDecided
from talkie_tui.voice.sound_card import DeviceMicrophone, DeviceSpeaker
from tests.helpers import TEST_TOKEN
from tests.voice.call_helpers import (
    Recorder,
    decisions,
    server_test_endpoint,
    talk,
    until_action,
)
from tests.voice.pulse import MIC_DEVICE, SPEAKER_DEVICE, PulseAudio, active_seconds

pytestmark = [pytest.mark.voice, pytest.mark.slow]


@pytest.fixture
async def call_parts(pulse: PulseAudio, devserver: Callable[..., str]) -> Any:
    url = devserver(test_mode=True, fake_voice=True, dev_token=TEST_TOKEN, demo_delay=0)
    client = await TalkieClient.connect(url, tokens=StaticToken(TEST_TOKEN))
    recorder = Recorder()
    call = VoiceCall(
        client,
        microphone=DeviceMicrophone(MIC_DEVICE),
        speaker=DeviceSpeaker(SPEAKER_DEVICE),
        listener=recorder,
        locale="cs",
        allow_http_signaling=True,
        usage_interval=2.0,
    )

    async def speak(words: str) -> None:
        # espeak-ng's Czech voice into the microphone sink, as a person at the laptop would.
        await asyncio.to_thread(pulse.speak_into_mic, words, "cs")

    yield client, call, recorder, speak
    await call.hang_up()
    await client.aclose()


async def test_talk_tool_card_action_read_out_then_a_spoken_ano_confirms(
    call_parts: Any, pulse: PulseAudio
) -> None:
    client, call, recorder, speak = call_parts
    await call.start()
    speaker_recording = pulse.start_speaker_recording()
    action = await until_action(call, recorder, speak)
    await recorder.wait_for_state("consent", timeout=45)
    # The window opened only after the proposal had played out of the real speaker.
    assert not call.speaker.playing
    played = speaker_recording.stop()
    assert active_seconds(played) > 1.0  # the assistant's speech reached the speaker sink

    await talk(call, speak, "ano")
    decided = await recorder.wait_for(lambda u: isinstance(u, VoiceDecided))
    assert decided.decision.method == "voice"
    assert [d["method"] for d in decisions(client, action.id)] == ["voice"]

    assert call.thread_id is not None and call.session is not None
    history = await client.thread(call.thread_id)
    said = [m.content for m in history.messages if m.role == "user"]
    assert said[:2] == ["Kdo je Petr Novák?", "Pošli mu nabídku."]
    assert any(m.role == "assistant" and m.content for m in history.messages)
    await call.hang_up()
    report = server_test_endpoint(client, f"voice/sessions/{call.session.voice_session_id}")
    assert len(report["usageReports"]) >= 2 and report["usageReports"][-1]["final"] is True
    assert {c["name"] for c in report["toolCalls"]} >= {"search_contacts", "send_offer_email"}


async def test_ano_spoken_while_the_assistant_still_speaks_does_not_confirm(
    call_parts: Any,
) -> None:
    client, call, recorder, speak = call_parts
    await call.start()
    action = await until_action(call, recorder, speak)
    await recorder.wait_for_state("assistant_speaking", since=recorder.mark())
    await talk(call, speak, "ano")
    heard = await recorder.wait_for(lambda u: isinstance(u, ConsentHeard))
    assert heard.heard.ignored == "not_in_window"
    await asyncio.sleep(1.0)
    assert decisions(client, action.id) == []
    assert (await client.action(action.id)).status == "pending"
