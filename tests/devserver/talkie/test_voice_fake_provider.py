"""The fake realtime provider over real WebRTC on 127.0.0.1: signalling, hearing, tool calls,
speaking and barge-in, with a real aiortc client peer fed by a generated audio track."""

from __future__ import annotations

import asyncio
import fractions
import json
import math
import re
import time
from collections.abc import AsyncIterator, Callable
from contextlib import ExitStack, asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import av
import httpx
import numpy as np
import pytest
from aiortc import RTCPeerConnection, RTCSessionDescription
from aiortc.mediastreams import MediaStreamError, MediaStreamTrack

from talkie_tui.devserver.talkie.config import ServerConfig
from talkie_tui.devserver.talkie.runner import serve_in_thread
from talkie_tui.voice.ice import loopback_ice, rtc_configuration
from tests.helpers import AUTH, TEST_TOKEN

pytestmark = pytest.mark.voice

WAIT = 10.0  # generous: a loaded CI machine may be slow to set up DTLS
RATE = 48_000
FRAME = 960
LOUD = 500.0  # RMS of s16 audio that is clearly not silence
# Audio still on its way when an event arrives: the receiver's jitter buffer (~80 ms) and
# decoding, with room for a busy machine: loud frames (20 ms each) that may arrive after a
# stop, 0.4 s of audio (a few arrive here; a voice that went on would bring dozens).
IN_FLIGHT = 20
CANDIDATE = re.compile(r"^a=candidate:\S+ \d+ udp \d+ (\S+) \d+ typ host", re.MULTILINE)


class ToneMic(MediaStreamTrack):
    """A microphone without a sound card: paced 20 ms frames, silence unless a burst is queued."""

    kind = "audio"

    def __init__(self) -> None:
        super().__init__()
        self._start: float | None = None
        self._pts = 0
        self._burst_frames = 0
        self._noise = np.random.default_rng(7)

    def burst(self, seconds: float) -> None:
        """Say something: a tone with a little noise for `seconds`."""
        self._burst_frames += round(seconds / 0.02)

    async def recv(self) -> av.AudioFrame:
        if self._start is None:
            self._start = time.monotonic()
        else:
            self._pts += FRAME
            wait = self._start + self._pts / RATE - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
        samples = np.zeros(FRAME, dtype=np.int16)
        if self._burst_frames > 0:
            self._burst_frames -= 1
            t = (np.arange(FRAME) + self._pts) / RATE
            tone = 6000 * np.sin(2 * np.pi * 330 * t) + self._noise.normal(0, 800, FRAME)
            samples = tone.astype(np.int16)
        frame = av.AudioFrame.from_ndarray(samples.reshape(1, -1), format="s16", layout="mono")
        frame.sample_rate, frame.pts = RATE, self._pts
        frame.time_base = fractions.Fraction(1, RATE)
        return frame


class RealtimeClient:
    """A minimal openai-realtime/1 client: events in arrival order, remote audio levels."""

    def __init__(self) -> None:
        self.pc = RTCPeerConnection(configuration=rtc_configuration())
        self.mic = ToneMic()
        self.pc.addTrack(self.mic)
        self.channel = self.pc.createDataChannel("oai-events")
        self.channel.on("message", self._on_message)
        self.pc.on("track", self._on_track)
        self.events: list[tuple[float, dict[str, Any]]] = []
        self.levels: list[tuple[float, float]] = []  # (arrival time, RMS) per remote frame
        self._cursor = 0
        self._changed = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self.offer = ""
        self.answer = ""

    def _on_message(self, message: str | bytes) -> None:
        self.events.append((time.monotonic(), json.loads(message)))
        self._changed.set()

    def _on_track(self, track: MediaStreamTrack) -> None:
        task = asyncio.ensure_future(self._drain(track))
        self._tasks.add(task)

    async def _drain(self, track: MediaStreamTrack) -> None:
        while True:
            try:
                frame = await track.recv()
            except MediaStreamError:
                return
            samples = frame.to_ndarray().astype(np.float64)
            self.levels.append((time.monotonic(), float(np.sqrt(np.mean(samples * samples)))))

    async def connect(self, url: str, secret: str) -> httpx.Response:
        """Offer (ICE on 127.0.0.1 only) and apply the answer when the provider gives one."""
        with loopback_ice():
            await self.pc.setLocalDescription(await self.pc.createOffer())
        self.offer = self.pc.localDescription.sdp
        async with httpx.AsyncClient(timeout=WAIT) as http:
            response = await http.post(
                url,
                content=self.offer,
                headers={"Authorization": f"Bearer {secret}", "Content-Type": "application/sdp"},
            )
        if response.status_code == 201:
            self.answer = response.text
            await self.pc.setRemoteDescription(
                RTCSessionDescription(sdp=response.text, type="answer")
            )
        return response

    def send(self, event: dict[str, Any]) -> None:
        """Send a client event."""
        self.channel.send(json.dumps(event))

    async def expect(self, kind: str, timeout: float = WAIT) -> dict[str, Any]:
        """The next event of this type after the previous expectation (events are ordered)."""
        return (await self.expect_at(kind, timeout))[1]

    async def expect_at(self, kind: str, timeout: float = WAIT) -> tuple[float, dict[str, Any]]:
        """Like `expect`, with the event's arrival time."""
        deadline = time.monotonic() + timeout
        while True:
            for index in range(self._cursor, len(self.events)):
                arrived, event = self.events[index]
                if event["type"] == kind:
                    self._cursor = index + 1
                    return arrived, event
            left = deadline - time.monotonic()
            if left <= 0:
                seen = [event["type"] for _, event in self.events[self._cursor :]]
                raise AssertionError(f"no {kind} within {timeout} s; since then: {seen}")
            self._changed.clear()
            with suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), left)

    def types_between(self, first: dict[str, Any], last: dict[str, Any]) -> list[str]:
        """Event types from `first` to `last` (both included)."""
        events = [event for _, event in self.events]
        return [e["type"] for e in events[events.index(first) : events.index(last) + 1]]

    def types_after(self, event: dict[str, Any]) -> list[str]:
        """Event types that arrived after `event`."""
        index = next(i for i, (_, seen) in enumerate(self.events) if seen is event)
        return [seen["type"] for _, seen in self.events[index + 1 :]]

    def loud_frames(self, start: float, end: float) -> int:
        """Remote frames with audible content that arrived in [start, end]."""
        return sum(1 for at, level in self.levels if start <= at <= end and level > LOUD)

    async def close(self) -> None:
        """Hang up and stop the drain task."""
        await self.pc.close()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


@pytest.fixture
def voice_server(devserver: Callable[..., str]) -> str:
    """A test-mode reference server with the fake voice provider."""
    return devserver(test_mode=True, dev_token=TEST_TOKEN, fake_voice=True, demo_delay=0.0)


async def _new_session(http: httpx.AsyncClient, url: str, **body: Any) -> dict[str, Any]:
    response = await http.post(f"{url}/api/talkie/voice/sessions", json=body, headers=AUTH)
    assert response.status_code == 201, response.text
    session: dict[str, Any] = response.json()
    return session


async def _script(http: httpx.AsyncClient, session: dict[str, Any], *lines: Any) -> None:
    control = httpx.URL(session["signaling"]["url"]).copy_with(path="/fake-voice/script")
    body = {"voiceSessionId": session["voiceSessionId"], "utterances": list(lines)}
    response = await http.post(str(control), json=body)
    assert response.status_code == 200, response.text


@asynccontextmanager
async def _call(
    url: str, *lines: Any, locale: str = "en"
) -> AsyncIterator[tuple[RealtimeClient, dict[str, Any], httpx.AsyncClient]]:
    """A voice session with this script, connected and past session.created."""
    async with httpx.AsyncClient(timeout=WAIT) as http:
        session = await _new_session(http, url, locale=locale)
        if lines:
            await _script(http, session, *lines)
        client = RealtimeClient()
        try:
            response = await client.connect(session["signaling"]["url"], session["clientSecret"])
            assert response.status_code == 201, response.text
            await client.expect("session.created")
            yield client, session, http
        finally:
            await client.close()


def _turn_detection(settings: dict[str, Any] | None) -> dict[str, Any]:
    """A GA session.update that changes turn detection only."""
    audio = {"input": {"turn_detection": settings}}
    return {"type": "session.update", "session": {"type": "realtime", "audio": audio}}


async def _push_to_talk(client: RealtimeClient, seconds: float = 0.5) -> None:
    """Turn detection off, then a press: clear, speak, a short tail, commit."""
    client.send(_turn_detection(None))
    updated = await client.expect("session.updated")
    assert updated["session"]["audio"]["input"]["turn_detection"] is None
    client.send({"type": "input_audio_buffer.clear"})
    await client.expect("input_audio_buffer.cleared")
    client.mic.burst(seconds)
    # The release tail: the commit must not overtake the last RTP packets (notes §1.5).
    await asyncio.sleep(seconds + 0.35)
    client.send({"type": "input_audio_buffer.commit"})


async def test_signalling_secret_and_loopback_ice(voice_server: str) -> None:
    async with httpx.AsyncClient(timeout=WAIT) as http:
        session = await _new_session(http, voice_server)
        url = session["signaling"]["url"]
        wrong = RealtimeClient()
        try:
            refused = await wrong.connect(url, "ek_not-the-secret")
            assert refused.status_code == 401
            assert refused.json()["error"]["code"] == "invalid_api_key"
        finally:
            await wrong.close()
        client = RealtimeClient()
        try:
            response = await client.connect(url, session["clientSecret"])
            assert response.status_code == 201, response.text
            assert response.headers["content-type"].startswith("application/sdp")
            assert re.fullmatch(r"/v1/realtime/calls/rtc_[0-9a-f]+", response.headers["location"])
            # Both peers offer host candidates on 127.0.0.1 and nothing else.
            for sdp in (client.offer, client.answer):
                assert set(CANDIDATE.findall(sdp)) == {"127.0.0.1"}
            created = await client.expect("session.created")
            config = created["session"]
            assert config["type"] == "realtime"
            assert config["audio"]["input"]["turn_detection"]["type"] == "server_vad"
            assert "search_contacts" in [tool["name"] for tool in config["tools"]]
            # The secret opened one call; it opens no second one.
            again = RealtimeClient()
            try:
                assert (await again.connect(url, session["clientSecret"])).status_code == 401
            finally:
                await again.close()
        finally:
            await client.close()


async def test_push_to_talk_turn_with_a_tool_call_and_speech(voice_server: str) -> None:
    line = {
        "user": "Show me Alfa.",
        "tool": "search_contacts",
        "arguments": {"query": "Alfa"},
        "reply": "Here is Alfa.",
    }
    async with _call(voice_server, line) as (client, session, http):
        await _push_to_talk(client)
        committed = await client.expect("input_audio_buffer.committed")
        heard = await client.expect("conversation.item.input_audio_transcription.completed")
        assert heard["transcript"] == "Show me Alfa."
        assert heard["item_id"] == committed["item_id"]
        assert 0.5 <= heard["usage"]["seconds"] <= 2.0
        assert "input_audio_buffer.speech_started" not in [e["type"] for _, e in client.events]

        client.send({"type": "response.create"})
        created = await client.expect("response.created")
        call = await client.expect("response.function_call_arguments.done")
        assert (call["name"], json.loads(call["arguments"])) == (
            "search_contacts",
            {"query": "Alfa"},
        )
        item = (await client.expect("response.output_item.done"))["item"]
        assert (item["type"], item["call_id"], item["status"]) == (
            "function_call", call["call_id"], "completed",
        )  # fmt: skip
        done = await client.expect("response.done")
        assert done["response"]["id"] == created["response"]["id"]
        assert done["response"]["status"] == "completed"
        assert done["response"]["usage"]["total_tokens"] > 0
        # A tool-call response has no audio.
        assert "output_audio_buffer.started" not in client.types_between(created, done)

        # The client runs the tool at the Talkie server and hands the output to the model.
        tool = await http.post(
            f"{voice_server}/api/talkie/voice/sessions/{session['voiceSessionId']}/tools/"
            f"{call['name']}",
            json={"callId": call["call_id"], "arguments": call["arguments"]},
            headers=AUTH,
        )
        assert tool.status_code == 200, tool.text
        assert "talkie.card" in [e["name"] for e in tool.json()["events"]]
        output = {"type": "function_call_output", "call_id": call["call_id"]}
        client.send({"type": "conversation.item.create", "item": {**output, "output": "ok"}})
        client.send({"type": "response.create"})
        await client.expect("conversation.item.added")
        spoken = await client.expect("response.created")
        started_at, started = await client.expect_at("output_audio_buffer.started")
        transcript = await client.expect("response.output_audio_transcript.done")
        assert transcript["transcript"] == "Here is Alfa."
        done = await client.expect("response.done")
        assert done["response"]["status"] == "completed"
        assert done["response"]["usage"]["output_token_details"]["audio_tokens"] > 0
        stopped_at, stopped = await client.expect_at("output_audio_buffer.stopped")
        assert started["response_id"] == stopped["response_id"] == spoken["response"]["id"]
        deltas = [
            e["delta"]
            for e in [ev for _, ev in client.events]
            if e["type"] == "response.output_audio_transcript.delta"
        ]
        assert "".join(deltas).strip() == "Here is Alfa."
        # The speech really arrived as audio on the remote track, bracketed by the events: most
        # of it between them, after the stop no more than was on its way (counted in frames of
        # 20 ms, the receiver's jitter buffer and a busy loop's backlog, not timed).
        await asyncio.sleep(1.0)
        spoken_frames = client.loud_frames(started_at, stopped_at)
        late_frames = client.loud_frames(stopped_at, math.inf)
        assert spoken_frames >= 10 and late_frames <= IN_FLIGHT, (spoken_frames, late_frames)


async def test_server_vad_hears_speech(voice_server: str) -> None:
    async with _call(voice_server, "Hello there.") as (client, _, _):
        # Keep VAD but let the client decide when to respond (the consent setup, notes §1.6).
        vad = {"type": "server_vad", "create_response": False, "interrupt_response": False}
        client.send(_turn_detection(vad))
        updated = await client.expect("session.updated")
        assert updated["session"]["audio"]["input"]["turn_detection"]["create_response"] is False
        await asyncio.sleep(0.2)
        client.mic.burst(0.5)
        started = await client.expect("input_audio_buffer.speech_started")
        stopped = await client.expect("input_audio_buffer.speech_stopped")
        assert started["item_id"] == stopped["item_id"]
        assert 300 <= stopped["audio_end_ms"] - started["audio_start_ms"] <= 900
        committed = await client.expect("input_audio_buffer.committed")
        assert committed["item_id"] == started["item_id"]
        heard = await client.expect("conversation.item.input_audio_transcription.completed")
        assert heard["transcript"] == "Hello there."
        await asyncio.sleep(0.8)  # silence is not speech, and nothing answers by itself
        later = client.types_after(heard)
        assert "input_audio_buffer.speech_started" not in later
        assert "response.created" not in later


async def test_cancel_stops_speech(voice_server: str) -> None:
    long_reply = "This answer is long on purpose, so that there is time to interrupt it. " * 3
    async with _call(voice_server, {"user": "Talk to me.", "reply": long_reply}) as (client, _, _):
        await _push_to_talk(client, 0.3)
        await client.expect("conversation.item.input_audio_transcription.completed")
        client.send({"type": "response.create"})
        created = await client.expect("response.created")
        await client.expect("output_audio_buffer.started")
        await client.expect("response.output_audio_transcript.delta")
        await asyncio.sleep(0.3)
        client.send({"type": "response.cancel"})
        cleared_at, cleared = await client.expect_at("output_audio_buffer.cleared")
        assert cleared["response_id"] == created["response"]["id"]
        done = await client.expect("response.done")
        assert done["response"]["status"] == "cancelled"
        # The voice stops (allowing for what was on its way, counted in frames, not timed), and
        # no stop is reported.
        await asyncio.sleep(1.0)
        assert client.loud_frames(cleared_at, math.inf) <= IN_FLIGHT
        types = [e["type"] for _, e in client.events]
        assert "output_audio_buffer.stopped" not in types
        assert "response.output_audio_transcript.done" not in types
        # Nothing left to cancel: an error; clearing the output buffer is always answered.
        client.send({"type": "response.cancel"})
        error = await client.expect("error")
        assert error["error"]["code"] == "response_cancel_not_active"
        client.send({"type": "output_audio_buffer.clear"})
        await client.expect("output_audio_buffer.cleared")


async def test_the_session_is_locked_except_turn_detection(voice_server: str) -> None:
    async with _call(voice_server) as (client, _, _):
        locked = {"type": "realtime", "instructions": "Obey me."}
        client.send({"type": "session.update", "session": locked})
        error = await client.expect("error")
        assert error["error"]["code"] == "session_locked"
        assert "session.instructions" in error["error"]["message"]
        # The beta shape works for turn detection, and nothing else was changed.
        client.send({"type": "session.update", "session": {"turn_detection": None}})
        updated = await client.expect("session.updated")
        assert updated["session"]["audio"]["input"]["turn_detection"] is None
        assert updated["session"]["instructions"].startswith("You are the voice assistant")
        # A push-to-talk press too short to hold speech is refused like the real API does.
        client.send({"type": "input_audio_buffer.clear"})
        await client.expect("input_audio_buffer.cleared")
        client.send({"type": "input_audio_buffer.commit"})
        error = await client.expect("error")
        assert error["error"]["code"] == "input_audio_buffer_commit_empty"
        client.send({"type": "no.such.event"})
        assert (await client.expect("error"))["error"]["code"] == "unknown_event_type"


async def test_the_final_usage_report_hangs_up(voice_server: str) -> None:
    async with _call(voice_server) as (client, session, http):
        response = await http.post(
            f"{voice_server}/api/talkie/voice/sessions/{session['voiceSessionId']}/usage",
            json={"seconds": 3, "final": True},
            headers=AUTH,
        )
        assert response.json()["ended"] is True
        error = await client.expect("error")
        assert error["error"]["code"] == "session_expired"
        deadline = time.monotonic() + WAIT
        while client.pc.connectionState != "closed" and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert client.pc.connectionState == "closed"


async def test_the_server_stops_promptly_during_a_call(tmp_path: Path) -> None:
    config = ServerConfig(
        test_mode=True, dev_token=TEST_TOKEN, fake_voice=True, db_path=tmp_path / "db.sqlite3"
    )
    with ExitStack() as server:
        url = server.enter_context(serve_in_thread(config))
        async with _call(url) as (client, session, _):
            client.mic.burst(2.0)  # mid-sentence
            await asyncio.sleep(0.3)
            # Stops: a wait (not a measured time) for the close, which cancels the call.
            await asyncio.wait_for(asyncio.to_thread(server.close), 30)
            deadline = time.monotonic() + WAIT
            while client.pc.connectionState != "closed" and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            assert client.pc.connectionState == "closed"
    with pytest.raises(httpx.ConnectError):
        httpx.post(session["signaling"]["url"], content="v=0")
