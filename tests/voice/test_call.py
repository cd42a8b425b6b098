"""VoiceCall against the reference server's fake provider: real WebRTC (aiortc) on 127.0.0.1.

The microphone and speaker are the in-memory ones of `voice/audio.py` (real-time paced); the
end-to-end test with PulseAudio, PortAudio and espeak-ng speech is `test_voice_e2e.py`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx
import numpy as np
import pytest

from talkie_tui.protocol.client import StaticToken, TalkieClient
from talkie_tui.protocol.events import ActionProposed, CardReceived
from talkie_tui.voice.audio import SAMPLE_RATE, RecordingSpeaker, ScriptedMicrophone
from talkie_tui.voice.call import (
    AssistantSaid,
    CallEnded,
    CallStatus,
    CallUpdate,
    ConsentHeard,
    ToolFinished,
    UserSaid,
    VoiceCall,
    VoiceDecided,
)
from tests.helpers import TEST_TOKEN

pytestmark = [pytest.mark.voice, pytest.mark.slow]


def tone(seconds: float = 0.8, level: float = 0.3) -> np.ndarray:
    """A loud 440 Hz tone: the fake provider hears energy, and takes its words from a script."""
    t = np.arange(int(seconds * SAMPLE_RATE)) / SAMPLE_RATE
    return (np.sin(2 * np.pi * 440 * t) * level * 32767).astype(np.int16)


class Recorder:
    """Collects a call's updates and lets a test wait for one."""

    def __init__(self) -> None:
        self.updates: list[CallUpdate] = []
        self._changed = asyncio.Event()

    def __call__(self, update: CallUpdate) -> None:
        self.updates.append(update)
        self._changed.set()

    def mark(self) -> int:
        """A point in the updates: `wait_for(..., since=mark)` looks only at later ones."""
        return len(self.updates)

    async def wait_for(
        self, test: Callable[[CallUpdate], bool], timeout: float = 30, since: int = 0
    ) -> Any:
        async with asyncio.timeout(timeout):
            seen = since
            while True:
                for update in self.updates[seen:]:
                    if test(update):
                        return update
                seen = len(self.updates)
                self._changed.clear()
                await self._changed.wait()

    def states(self) -> list[str]:
        return [u.state for u in self.updates if isinstance(u, CallStatus)]


@pytest.fixture
async def voice_client(devserver: Callable[..., str]) -> Any:
    url = devserver(test_mode=True, fake_voice=True, dev_token=TEST_TOKEN, demo_delay=0)
    client = await TalkieClient.connect(url, tokens=StaticToken(TEST_TOKEN))
    yield client
    await client.aclose()


async def _say(call: VoiceCall, microphone: ScriptedMicrophone, audio: np.ndarray) -> None:
    call.press()
    microphone.say(audio)
    await microphone.said()
    call.release()


def _decisions(client: TalkieClient, action_id: str) -> list[dict[str, Any]]:
    url = f"{client.server.origin}/api/talkie/_test/decisions"
    answer = httpx.get(
        url, params={"actionId": action_id}, headers={"Authorization": f"Bearer {TEST_TOKEN}"}
    )
    return answer.json()["decisions"]


async def _call(client: TalkieClient, recorder: Recorder) -> tuple[VoiceCall, ScriptedMicrophone]:
    speaker = RecordingSpeaker()
    microphone = ScriptedMicrophone()
    call = VoiceCall(
        client,
        microphone=microphone,
        speaker=speaker,
        listener=recorder,
        locale="cs",
        allow_http_signaling=True,
        usage_interval=1.0,
    )
    await call.start()
    return call, microphone


async def _until_action(call: VoiceCall, microphone: ScriptedMicrophone, recorder: Recorder):
    await _say(call, microphone, tone())  # "Kdo je Petr Novák?" → a card
    card = await recorder.wait_for(
        lambda u: isinstance(u, ToolFinished) and any(isinstance(e, CardReceived) for e in u.events)
    )
    assert card.error is None
    # The assistant reads the card out; the next sentence waits until it is done.
    await recorder.wait_for(lambda u: isinstance(u, AssistantSaid), since=recorder.mark())
    await recorder.wait_for(
        lambda u: isinstance(u, CallStatus) and u.state == "listening", since=recorder.mark()
    )
    mark = recorder.mark()
    await _say(call, microphone, tone())  # "Pošli mu nabídku." → an action to confirm by voice
    finished = await recorder.wait_for(
        lambda u: (
            isinstance(u, ToolFinished) and any(isinstance(e, ActionProposed) for e in u.events)
        ),
        since=mark,
    )
    action = next(e.action for e in finished.events if isinstance(e, ActionProposed))
    assert "voice" in action.confirm.methods
    return action


async def test_a_spoken_yes_after_the_proposal_was_read_out_confirms_it(voice_client) -> None:
    recorder = Recorder()
    call, microphone = await _call(voice_client, recorder)
    try:
        action = await _until_action(call, microphone, recorder)
        # The proposal is read out; only when its audio has played here does the window open.
        await recorder.wait_for(lambda u: isinstance(u, CallStatus) and u.state == "consent")
        assert "assistant_speaking" in recorder.states()
        assert not call.speaker.playing
        await _say(call, microphone, tone())  # "Ano, odeslat."
        decided = await recorder.wait_for(lambda u: isinstance(u, VoiceDecided))
        assert decided.decision.method == "voice" and decided.decision.outcome == "confirm"
        assert decided.result.action.status in ("running", "done")
        assert [d["method"] for d in _decisions(voice_client, action.id)] == ["voice"]
        said = [u.text for u in recorder.updates if isinstance(u, UserSaid)]
        assert said[-1] == "Ano, odeslat."
        history = await voice_client.thread(call.thread_id or "")
        texts = " ".join(m.content for m in history.messages)
        assert "Kdo je Petr Novák?" in texts and "Ano, odeslat." in texts
    finally:
        await call.hang_up()
    assert isinstance(recorder.updates[-1], CallEnded)
    report = httpx.get(
        f"{voice_client.server.origin}/api/talkie/_test/voice/sessions/{call.session.voice_session_id}",
        headers={"Authorization": f"Bearer {TEST_TOKEN}"},
    ).json()
    assert report["usageReports"] and report["usageReports"][-1]["final"] is True


async def test_a_yes_spoken_while_the_assistant_still_speaks_does_not_confirm(voice_client) -> None:
    recorder = Recorder()
    call, microphone = await _call(voice_client, recorder)
    try:
        action = await _until_action(call, microphone, recorder)
        await recorder.wait_for(
            lambda u: isinstance(u, CallStatus) and u.state == "assistant_speaking"
        )
        await _say(call, microphone, tone())  # "Ano, odeslat." over the assistant
        heard = await recorder.wait_for(lambda u: isinstance(u, ConsentHeard))
        assert heard.heard.ignored == "not_in_window"
        await asyncio.sleep(1.0)
        assert not any(isinstance(u, VoiceDecided) for u in recorder.updates)
        assert _decisions(voice_client, action.id) == []
        assert (await voice_client.action(action.id)).status == "pending"
    finally:
        await call.hang_up()
