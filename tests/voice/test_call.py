"""VoiceCall against the reference server's fake provider: real WebRTC (aiortc) on 127.0.0.1.

The microphone and speaker are the in-memory ones of `voice/audio.py` (real-time paced), and
the "speech" is a tone; the end-to-end test with PulseAudio, PortAudio and espeak-ng speech is
`test_voice_e2e.py`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from talkie_tui.core.tokens import StaticToken
from talkie_tui.protocol.talkie.client import TalkieClient
from talkie_tui.voice.call import VoiceCall
from talkie_tui.voice.call_updates import CallEnded, ConsentHeard, UserSaid, VoiceDecided
from talkie_tui.voice.memory_audio import RecordingSpeaker, ScriptedMicrophone
from tests.helpers import TEST_TOKEN
from tests.voice.call_helpers import (
    Recorder,
    decisions,
    server_test_endpoint,
    talk,
    tone,
    until_action,
)

pytestmark = [pytest.mark.voice, pytest.mark.slow]


@pytest.fixture
async def voice_client(devserver: Callable[..., str]) -> Any:
    url = devserver(test_mode=True, fake_voice=True, dev_token=TEST_TOKEN, demo_delay=0)
    client = await TalkieClient.connect(url, tokens=StaticToken(TEST_TOKEN))
    yield client
    await client.aclose()


async def _call(client: TalkieClient, recorder: Recorder) -> tuple[VoiceCall, Any]:
    microphone = ScriptedMicrophone()
    call = VoiceCall(
        client,
        microphone=microphone,
        speaker=RecordingSpeaker(),
        listener=recorder,
        locale="cs",
        allow_http_signaling=True,
        usage_interval=1.0,
    )
    await call.start()

    async def speak(words: str) -> None:
        microphone.say(tone())
        await microphone.said()

    return call, speak


async def test_a_spoken_yes_after_the_proposal_was_read_out_confirms_it(voice_client) -> None:
    recorder = Recorder()
    call, speak = await _call(voice_client, recorder)
    try:
        action = await until_action(call, recorder, speak)
        # The proposal is read out; only when its audio has played here does the window open.
        await recorder.wait_for_state("consent")
        assert "assistant_speaking" in recorder.states()
        assert not call.speaker.playing
        await talk(call, speak, "Ano, odeslat.")
        decided = await recorder.wait_for(lambda u: isinstance(u, VoiceDecided))
        assert decided.decision.method == "voice" and decided.decision.outcome == "confirm"
        assert decided.result.action.status in ("running", "done")
        assert [d["method"] for d in decisions(voice_client, action.id)] == ["voice"]
        said = [u.text for u in recorder.updates if isinstance(u, UserSaid)]
        assert said[-1] == "Ano, odeslat."
        history = await voice_client.thread(call.thread_id or "")
        texts = " ".join(m.content for m in history.messages)
        assert "Kdo je Petr Novák?" in texts and "Ano, odeslat." in texts
    finally:
        await call.hang_up()
    assert isinstance(recorder.updates[-1], CallEnded)
    assert call.session is not None
    report = server_test_endpoint(voice_client, f"voice/sessions/{call.session.voice_session_id}")
    assert report["usageReports"] and report["usageReports"][-1]["final"] is True


async def test_a_yes_spoken_while_the_assistant_still_speaks_does_not_confirm(voice_client) -> None:
    recorder = Recorder()
    call, speak = await _call(voice_client, recorder)
    try:
        action = await until_action(call, recorder, speak)
        await recorder.wait_for_state("assistant_speaking", since=recorder.mark())
        await talk(call, speak, "Ano, odeslat.")  # over the assistant reading the proposal
        heard = await recorder.wait_for(lambda u: isinstance(u, ConsentHeard))
        assert heard.heard.ignored == "not_in_window"
        await asyncio.sleep(1.0)
        assert not any(isinstance(u, VoiceDecided) for u in recorder.updates)
        assert decisions(voice_client, action.id) == []
        assert (await voice_client.action(action.id)).status == "pending"
    finally:
        await call.hang_up()
