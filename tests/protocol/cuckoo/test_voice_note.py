"""A voice note made for a hub: the WAV, its length and its 64-value waveform; and the hub's
record of one read leniently (a waveform out of shape is mended, not a reason to drop the file)."""

from __future__ import annotations

import io
import struct
import wave

from talkie_tui.protocol.cuckoo.models import Attachment
from talkie_tui.protocol.cuckoo.voice_note import MAX_SECONDS, VoiceNote, waveform


def pcm(*levels: int, each: int = 1600) -> bytes:
    """Square-ish PCM whose loudness steps through `levels`."""
    return b"".join(
        struct.pack("<h", level if i % 2 else -level) for level in levels for i in range(each)
    )


def test_the_waveform_is_64_levels_scaled_to_the_loudest() -> None:
    values = waveform(pcm(*([1000] * 32 + [4000] * 32)))
    assert len(values) == 64
    assert values[:32] == [25] * 32 and values[32:] == [100] * 32
    assert waveform(b"") == [0] * 64 and waveform(bytes(3200)) == [0] * 64  # silence


def test_a_note_is_a_16_khz_mono_wav_with_its_length() -> None:
    note = VoiceNote.from_pcm(pcm(3000, each=16_000 * 2))  # 2 s
    with wave.open(io.BytesIO(note.wav)) as file:
        assert (file.getnchannels(), file.getsampwidth(), file.getframerate()) == (1, 2, 16_000)
        assert file.getnframes() == 32_000
    assert note.duration_ms == 2000
    assert note.upload_params() == {
        "kind": "audio",
        "duration_ms": "2000",
        "waveform": ",".join(["100"] * 64),
    }


def test_a_note_longer_than_16_mib_holds_is_cut_there() -> None:
    note = VoiceNote.from_pcm(bytes(2 * 16_000 * (MAX_SECONDS + 3)))
    assert note.duration_ms == MAX_SECONDS * 1000 and len(note.wav) <= 16 * 1024 * 1024


def test_a_wav_from_elsewhere_is_measured_at_its_rate() -> None:
    out = io.BytesIO()
    with wave.open(out, "wb") as file:
        file.setnchannels(1)
        file.setsampwidth(2)
        file.setframerate(22_050)
        file.writeframes(bytes(2 * 22_050 * 3))
    assert VoiceNote.from_wav(out.getvalue()).duration_ms == 3000


def test_the_hubs_waveform_is_read_leniently() -> None:
    base = {"media_id": "med_1", "kind": "audio", "duration_ms": 7000}
    assert Attachment.model_validate({**base, "waveform": [3, 9, 40]}).waveform == (3, 9, 40)
    mended = Attachment.model_validate({**base, "waveform": [-5, 250, "x", 7.6, True] + [1] * 70})
    assert mended.waveform[:3] == (0, 100, 8) and len(mended.waveform) == 64
    assert Attachment.model_validate({**base, "waveform": "3,9"}).waveform == ()
    assert Attachment.model_validate(base).waveform == ()
