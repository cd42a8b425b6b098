"""The WebRTC peer to the speech provider (aiortc): microphone out, assistant audio in, events.

The SDP offer goes to the session's signaling URL with the client secret, and nowhere else
(§10.1); redirects are not followed. The microphone track is paced by the sound card (aiortc
sends as fast as `recv` returns). Remote audio is drained continuously into the speaker, so the
jitter buffer never fills. Everything is torn down on hang-up, on errors and on exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import fractions
import json
import math
import time
from collections.abc import Callable
from typing import Any

import av
import httpx
import numpy as np
from aiortc import (
    MediaStreamTrack,
    RTCDataChannel,
    RTCPeerConnection,
    RTCSessionDescription,
)
from aiortc import rtp as aiortc_rtp
from aiortc.mediastreams import MediaStreamError

from talkie_tui.core.sanitize import clean_text
from talkie_tui.core.urls import is_loopback_host
from talkie_tui.core.waiting import wait_within
from talkie_tui.i18n import _
from talkie_tui.protocol.net.failures import describe_transport_error
from talkie_tui.protocol.net.http import make_http_client
from talkie_tui.protocol.talkie.voice_models import VoiceSession
from talkie_tui.voice.audio import AudioSink, AudioSource
from talkie_tui.voice.ice import loopback_ice, rtc_configuration
from talkie_tui.voice.realtime import (
    ProviderError,
    RealtimeEvent,
    SessionReady,
    encode,
    parse_server_event,
)
from talkie_tui.voice.sound import FRAME_SAMPLES, SAMPLE_RATE, AudioStopped
from talkie_tui.voice.tracks import audio_frames

__all__ = ["MicrophoneTrack", "RealtimePeer", "VoiceConnectionError", "audio_level_dbov"]

EVENTS_CHANNEL = "oai-events"
_SIGNALING_TIMEOUT = httpx.Timeout(20.0, connect=10.0)
_MAX_ANSWER_BYTES = 256 * 1024
_SILENCE_PEAK = 32  # int16; about -60 dBFS
_MIN_AUDIO_LEVEL = -127
_SILENT_FRAMES_KEPT = 10  # 200 ms: pauses inside speech are kept as they are


def audio_level_dbov(frame: av.AudioFrame) -> int:
    """RFC 6465 audio level of a frame, like `aiortc.rtp.compute_audio_level_dbov`, vectorised.

    aiortc computes it for every outgoing packet with a Python loop over the samples, which
    was about a tenth of the client's CPU in a call (benchmarks/voice_call.py).
    """
    samples = np.frombuffer(bytes(frame.planes[0]), dtype=np.int16).astype(np.float64)
    if samples.size == 0 or frame.samples == 0:
        return _MIN_AUDIO_LEVEL
    rms = math.sqrt(float(samples @ samples) / (frame.samples * 32767 * 32767))
    if rms <= 0:
        return _MIN_AUDIO_LEVEL
    return round(min(max(20 * math.log10(rms), _MIN_AUDIO_LEVEL), 0))


# Same result, without the per-sample Python loop; aiortc looks it up on its module per packet.
aiortc_rtp.compute_audio_level_dbov = audio_level_dbov


class VoiceConnectionError(Exception):
    """The call could not be set up or broke; `message` says why in plain words."""

    def __init__(self, message: str, *, retryable: bool = True) -> None:
        super().__init__(message)
        self.message = message
        self.retryable = retryable


class MicrophoneTrack(MediaStreamTrack):
    """The outgoing audio: 20 ms frames of 48 kHz mono s16, paced by the microphone."""

    kind = "audio"

    def __init__(self, source: AudioSource) -> None:
        super().__init__()
        self._source = source
        self._pts = 0
        self.sent_at: float | None = None
        """When the last frame left for the encoder (monotonic), for latency measurements."""

    async def recv(self) -> av.AudioFrame:
        """The next microphone frame (zeros while muted)."""
        if self.readyState != "live":
            raise MediaStreamError
        try:
            samples = await self._source.read_frame()
        except AudioStopped:
            self.stop()
            raise MediaStreamError from None
        frame = av.AudioFrame.from_ndarray(samples.reshape(1, -1), format="s16", layout="mono")
        frame.sample_rate = SAMPLE_RATE
        frame.pts = self._pts
        frame.time_base = fractions.Fraction(1, SAMPLE_RATE)
        self._pts += FRAME_SAMPLES
        self.sent_at = time.monotonic()
        return frame


EventHandler = Callable[[RealtimeEvent], None]


class RealtimePeer:
    """One call: connect, send events, receive typed events and audio, close."""

    def __init__(
        self,
        session: VoiceSession,
        microphone: AudioSource,
        speaker: AudioSink,
        on_event: EventHandler,
        *,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        self.session = session
        self.microphone = microphone
        self.speaker = speaker
        self._on_event = on_event
        self._http = http
        self._pc: RTCPeerConnection | None = None
        self._channel: RTCDataChannel | None = None
        self._ready = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False
        self.call_id = ""
        self.track: MicrophoneTrack | None = None
        self.failure: str | None = None
        """Why the connection ended by itself (ICE failed, provider closed), if it did."""

    @property
    def connected(self) -> bool:
        """True while the events channel is open."""
        return self._channel is not None and self._channel.readyState == "open"

    async def connect(self, timeout: float = 15.0) -> None:  # noqa: ASYNC109
        """Offer, post it to the provider, apply the answer, wait for the session to be ready."""
        loopback = is_loopback_host(_host_of(self.session.signaling.url))
        # A provider on this machine (the reference server's fake) is reached over 127.0.0.1
        # only; otherwise aioice would offer the other interfaces and traffic would leave lo.
        scope = loopback_ice() if loopback else contextlib.nullcontext()
        try:
            with scope:
                await wait_within(self._negotiate(), timeout)
            await wait_within(self._ready.wait(), timeout)
        except TimeoutError:
            await self.close()
            raise VoiceConnectionError(
                _("The voice provider did not answer in time; check your network and try again.")
            ) from None
        except BaseException:
            await self.close()
            raise

    async def _negotiate(self) -> None:
        pc = self._pc = RTCPeerConnection(rtc_configuration())
        self.track = MicrophoneTrack(self.microphone)
        pc.addTrack(self.track)
        channel = self._channel = pc.createDataChannel(EVENTS_CHANNEL)
        channel.on("message", self._received)
        pc.on("track", self._remote_track)
        pc.on("connectionstatechange", self._state_changed)
        await pc.setLocalDescription(await pc.createOffer())
        # The local description carries the gathered candidates; the bare offer does not.
        answer = await self._post_offer(pc.localDescription.sdp)
        await pc.setRemoteDescription(RTCSessionDescription(sdp=answer, type="answer"))

    async def _post_offer(self, sdp: str) -> str:
        own = self._http is None
        http = self._http or make_http_client()
        url = self.session.signaling.url
        try:
            response = await http.post(
                url,
                content=sdp.encode(),
                headers={
                    "Authorization": f"Bearer {self.session.client_secret}",
                    "Content-Type": "application/sdp",
                },
                timeout=_SIGNALING_TIMEOUT,
                follow_redirects=False,  # the secret goes to this URL and nowhere else
            )
        except httpx.HTTPError as error:
            cause = describe_transport_error(error, _("The voice provider"))
            raise VoiceConnectionError(cause.message, retryable=cause.retryable) from error
        finally:
            if own:
                await http.aclose()
        if response.status_code not in (200, 201) or len(response.content) > _MAX_ANSWER_BYTES:
            raise VoiceConnectionError(
                _("The voice provider refused the call: {reason} (HTTP {status}).").format(
                    reason=_provider_words(response), status=response.status_code
                ),
                retryable=response.status_code >= 500 or response.status_code == 429,
            )
        self.call_id = response.headers.get("location", "").rstrip("/").rsplit("/", 1)[-1]
        return response.text

    def send(self, event: dict[str, Any]) -> bool:
        """Send a client event; False when the channel is not open (the call is ending)."""
        channel = self._channel
        if channel is None or channel.readyState != "open":
            return False
        channel.send(encode(event))
        return True

    def _received(self, message: str | bytes) -> None:
        event = parse_server_event(message)
        if isinstance(event, SessionReady):
            self._ready.set()
        self._on_event(event)

    def _remote_track(self, track: MediaStreamTrack) -> None:
        if track.kind == "audio":
            self._spawn(self._play(track))

    async def _play(self, track: MediaStreamTrack) -> None:
        """Drain the assistant's audio into the speaker for as long as the track lives."""
        silent_run = _SILENT_FRAMES_KEPT  # starts as if after a long silence
        async for frame in audio_frames(track):
            samples = frame.to_ndarray().reshape(-1)
            # The track carries silence between answers too. Queued, it would keep the speaker
            # "playing" for ever and the consent window would never open. After a short run it
            # is dropped: that sounds the same, since the speaker fills gaps with silence.
            silent_run = silent_run + 1 if _is_silent(samples) else 0
            if silent_run > _SILENT_FRAMES_KEPT:
                continue
            self.speaker.write(samples, channels=len(frame.layout.channels))

    async def _state_changed(self) -> None:
        pc = self._pc
        if pc is not None and pc.connectionState in ("failed", "closed") and not self._closed:
            self.failure = (
                _("The connection to the voice provider failed.")
                if pc.connectionState == "failed"
                else _("The voice provider ended the call.")
            )
            self._on_event_ended()

    def _on_event_ended(self) -> None:
        # Reported through the same path as provider errors, so the call can end cleanly.
        self._on_event(ProviderError(self.failure or _("The call ended."), "connection_closed"))

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        """Hang up: close the peer connection and stop draining; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        if self.track is not None:
            self.track.stop()
        for task in list(self._tasks):
            task.cancel()
        pc, self._pc = self._pc, None
        if pc is not None:
            # Shielded: cancelling aiortc's close leaves it half-closed and crashing later.
            with contextlib.suppress(Exception):
                await asyncio.shield(pc.close())
        self._channel = None


def _is_silent(samples: Any) -> bool:
    """True for digital silence (what a decoder outputs between answers), not quiet speech."""
    return bool(samples.size == 0 or int(abs(samples).max()) <= _SILENCE_PEAK)


def _host_of(url: str) -> str:
    try:
        return httpx.URL(url).host
    except httpx.InvalidURL:
        return ""


def _provider_words(response: httpx.Response) -> str:
    """The provider's own error message (OpenAI's `{"error": {"message"}}`), cleaned."""
    try:
        data = json.loads(response.content)
    except (ValueError, UnicodeDecodeError):
        data = None
    if isinstance(data, dict):
        error = data.get("error")
        message = error.get("message") if isinstance(error, dict) else data.get("message")
        if isinstance(message, str) and message.strip():
            return clean_text(message.strip())[:300]
    return _("no reason given")
