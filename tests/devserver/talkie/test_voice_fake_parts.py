"""The fake voice provider's parts without a call: hearing, speaking, scripts, the session lock,
and the loopback ICE switch."""

from __future__ import annotations

import io
import json
import shutil
import struct
import wave
from pathlib import Path
from typing import Any

import aioice.ice
import numpy as np
import pytest

from talkie_tui.devserver.talkie.fake_voice import audio
from talkie_tui.devserver.talkie.fake_voice.call import (
    _UNCHANGED,
    DEFAULT_TURN_DETECTION,
    SessionLocked,
    _wanted_turn_detection,
)
from talkie_tui.devserver.talkie.fake_voice.provider import FakeRealtimeProvider
from talkie_tui.devserver.talkie.fake_voice.responses import speakable
from talkie_tui.devserver.talkie.fake_voice.script import (
    DEMO_LINES,
    FALLBACK,
    Line,
    Script,
    ScriptError,
    default_lines,
    load_script_file,
    parse_lines,
)
from talkie_tui.devserver.talkie.voice import VoiceGrant
from talkie_tui.voice.ice import loopback_ice


def _wav(samples: np.ndarray, rate: int, channels: int = 1, *, piped: bool = False) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(channels)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(samples.astype("<i2").tobytes())
    data = buffer.getvalue()
    if piped:  # what espeak-ng writes to a pipe: sizes it could not fill in
        data = (
            data[:4] + struct.pack("<I", 0x7FFFFFFF) + data[8:40] + b"\xff\xff\xff\x7f" + data[44:]
        )
    return data


def test_speakable_text() -> None:
    text = (
        "**Alfa s.r.o.** is a *client* – see [the record](/crm/a) or `N-2026-014`.\n\n- one\n- two"
    )
    assert speakable(text) == "Alfa s.r.o. is a client – see the record or N-2026-014. one two"
    long = " ".join(f"Sentence number {index} is here." for index in range(40))
    cut = speakable(long, limit=100)
    assert len(cut) <= 100 and cut.endswith("here.")


def test_speech_detector_start_hangover_and_stop() -> None:
    detector = audio.SpeechDetector(silence_ms=100, min_speech_ms=60)
    assert [detector.feed(True, 20) for _ in range(3)] == [None, None, "started"]
    # Short pauses inside speech are bridged (the hangover).
    assert [detector.feed(False, 20) for _ in range(4)] == [None] * 4
    assert detector.feed(True, 20) is None
    assert [detector.feed(False, 20) for _ in range(5)][-1] == "stopped"
    # Scattered clicks never add up to speech.
    assert {detector.feed(index % 2 == 0, 20) for index in range(20)} == {None}


def test_levels() -> None:
    assert audio.rms(np.full(960, 1000, dtype=np.int16)) == pytest.approx(1000)
    assert audio.rms(np.zeros(0, dtype=np.int16)) == 0
    assert audio.rms_threshold(0.5) == pytest.approx(327.68, rel=0.01)  # -40 dBFS
    assert audio.rms_threshold(0.0) < audio.rms_threshold(0.5) < audio.rms_threshold(1.0)


@pytest.mark.parametrize("piped", [False, True])
def test_parse_wav(piped: bool) -> None:
    stereo = np.array([[100, 300], [-100, -300], [0, 0]], dtype=np.int16)
    rate, samples = audio.parse_wav(_wav(stereo.reshape(-1), 22050, 2, piped=piped))
    assert rate == 22050
    assert samples.tolist() == [200, -200, 0]
    with pytest.raises(ValueError):
        audio.parse_wav(b"not a wav file at all")


def test_resample() -> None:
    tone = (np.sin(np.arange(22050) / 10) * 10000).astype(np.int16)
    resampled = audio.resample(tone, 22050, 48000)
    assert len(resampled) == 48000 and resampled.dtype == np.int16
    assert audio.rms(resampled) == pytest.approx(audio.rms(tone), rel=0.02)


async def test_speaks_in_tones_without_espeak(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(audio, "espeak_available", lambda: False)
    pcm = await audio.synthesize("three short words", "en")
    assert pcm.dtype == np.int16
    assert len(pcm) == pytest.approx(3 * 0.22 * audio.SAMPLE_RATE, rel=0.01)
    assert audio.rms(pcm) > 1000


async def test_speaks_with_espeak() -> None:
    if shutil.which("espeak-ng") is None:
        pytest.skip("needs espeak-ng (scripts/install-system-deps.sh installs it)")
    pcm = await audio.synthesize("Dobrý den, nabídka je připravená.", "cs")
    seconds = len(pcm) / audio.SAMPLE_RATE
    assert 1.0 < seconds < 5.0
    assert audio.rms(pcm) > 500


async def test_output_track_plays_then_falls_silent() -> None:
    track = audio.OutputTrack()
    playback = track.play(np.full(2000, 5000, dtype=np.int16))  # 2.08 frames -> 3 frames
    assert playback.total == 3
    levels = [audio.rms((await track.recv()).to_ndarray()) for _ in range(4)]
    assert levels[0] == levels[1] == pytest.approx(5000) and levels[3] == 0
    assert playback.finished.result() is True
    cut = track.play(np.full(96000, 5000, dtype=np.int16))
    await track.recv()
    assert track.clear() is True and cut.finished.result() is False
    assert audio.rms((await track.recv()).to_ndarray()) == 0
    track.stop()


def test_script_lines(tmp_path: Path) -> None:
    find = {"user": "Find Alfa", "tool": "search_contacts", "arguments": {"query": "Alfa"}}
    lines = parse_lines(["Hello.", find])
    assert lines == [
        Line("Hello."),
        Line("Find Alfa", "search_contacts", {"query": "Alfa"}),
    ]
    bad_scripts: list[Any] = [
        "text", [5], [{"user": ""}], [{"user": "x", "arguments": []}], [{"user": "x", "tool": 1}],
    ]  # fmt: skip
    for bad in bad_scripts:
        with pytest.raises(ScriptError):
            parse_lines(bad)
    script = Script([Line("one")], "cs")
    assert script.next_line() == Line("one")
    assert script.next_line() == FALLBACK["cs"]  # it ran out
    script.replace([Line("two")])
    assert len(script) == 1 and script.next_line() == Line("two")

    path = tmp_path / "script.json"
    path.write_text(json.dumps({"utterances": ["Hi."]}))
    assert load_script_file(path) == {"*": [Line("Hi.")]}
    path.write_text(json.dumps({"cs": ["Ahoj."], "en": ["Hi."]}))
    per_locale = load_script_file(path)
    assert default_lines(per_locale, "cs") == [Line("Ahoj.")]
    assert default_lines(None, "cs") == DEMO_LINES["cs"]
    assert default_lines(None, "de") == DEMO_LINES["en"]
    path.write_text("{broken")
    with pytest.raises(ScriptError, match="cannot read"):
        load_script_file(path)


def test_demo_script_confirms_with_the_actions_keyword() -> None:
    # §10.4: a short sentence with a confirm word and the keyword of the send action.
    for locale, (confirm, keyword) in {"cs": ("ano", "odeslat"), "en": ("yes", "send")}.items():
        consent = DEMO_LINES[locale][2].user.lower()
        assert confirm in consent and keyword in consent and len(consent.split()) <= 6


def test_each_session_has_its_own_script() -> None:
    provider = FakeRealtimeProvider(lambda secret: None, script={"*": [Line("Hi.")]})

    def grant(session_id: str, locale: str = "en") -> VoiceGrant:
        return VoiceGrant(session_id, "u1", "t1", locale, "")

    first = provider.script_for(grant("v_1"))
    assert provider.script_for(grant("v_1")) is first
    assert first.next_line() == Line("Hi.")
    assert provider.script_for(grant("v_2")).next_line() == Line("Hi.")


SESSION: dict[str, Any] = {
    "type": "realtime",
    "instructions": "Be brief.",
    "audio": {"input": {"turn_detection": DEFAULT_TURN_DETECTION, "transcription": {"model": "m"}}},
}


@pytest.mark.parametrize(
    ("update", "wanted"),
    [
        ({"type": "realtime", "audio": {"input": {"turn_detection": None}}}, None),
        ({"turn_detection": {"type": "server_vad"}}, {"type": "server_vad"}),
        ({"type": "realtime"}, _UNCHANGED),
        # Repeating a value unchanged is harmless.
        ({"instructions": "Be brief.", "audio": {"input": {"turn_detection": None}}}, None),
    ],
)
def test_session_update_may_change_turn_detection(update: dict[str, Any], wanted: Any) -> None:
    assert _wanted_turn_detection(update, SESSION) == wanted


@pytest.mark.parametrize(
    "update",
    [
        {"instructions": "Obey me."},
        {"tools": []},
        {"audio": {"input": {"transcription": {"model": "other"}}}},
        {"audio": {"output": {"voice": "verse"}}},
        {"type": "transcription"},
        {"turn_detection": {"type": "magic"}},
        {"turn_detection": {"type": "server_vad", "threshold": 3}},
        {"turn_detection": {"type": "server_vad", "volume": 11}},
    ],
)
def test_session_update_cannot_change_anything_else(update: dict[str, Any]) -> None:
    with pytest.raises(SessionLocked):
        _wanted_turn_detection(update, SESSION)


def test_loopback_ice_is_scoped() -> None:
    with loopback_ice():
        assert aioice.ice.get_host_addresses(True, True) == ["127.0.0.1"]
        assert aioice.ice.get_host_addresses(False, True) == []
    # Outside the block aioice behaves as usual (it never lists loopback itself).
    assert "127.0.0.1" not in aioice.ice.get_host_addresses(True, False)
