"""The pure parts of the composer's extras: the /attach command, pasted paths, path completion,
the WAV a dictation becomes, and how a model choice reads."""

from __future__ import annotations

import io
import wave
from pathlib import Path

import numpy as np

from talkie_tui.backends.base import ModelChoice
from talkie_tui.chat.turns import AttachmentPart
from talkie_tui.ui.chat.attaching import attach_command, attachment_file_block
from talkie_tui.ui.chat.model_choice import describe_pick
from talkie_tui.ui.chat.recording import WAV_RATE, Recording, encode_wav
from talkie_tui.ui.screens.attach_prompt import complete_path
from talkie_tui.ui.screens.model_picker import ModelPick
from talkie_tui.ui.widgets.pasted_paths import pasted_path


def test_attach_command() -> None:
    assert attach_command("/attach ~/report.pdf") == "~/report.pdf"
    assert attach_command("  /attach '/tmp/my file.pdf'  ") == "/tmp/my file.pdf"
    assert attach_command("/attach /tmp/my\\ file.pdf") == "/tmp/my file.pdf"
    assert attach_command("/attach file:///tmp/a%20b.png") == "/tmp/a b.png"
    assert attach_command("/attach") == ""
    assert attach_command("/attachment is a word") is None
    assert attach_command("please /attach x") is None
    assert attach_command("/attach x\nand more text") is None  # a message that starts so


def test_pasted_path(tmp_path: Path) -> None:
    report = tmp_path / "my report.pdf"
    report.write_bytes(b"%PDF-1.7")
    assert pasted_path(str(report)) == report
    assert pasted_path(f"'{report}'\n") == report
    assert pasted_path(report.as_uri()) == report
    assert pasted_path(str(tmp_path)) is None  # a folder
    assert pasted_path(str(tmp_path / "missing.pdf")) is None
    assert pasted_path("my report.pdf") is None  # relative: just words
    assert pasted_path(f"{report}\n{report}") is None


def test_complete_path(tmp_path: Path) -> None:
    (tmp_path / "report.pdf").write_bytes(b"x")
    (tmp_path / "reports").mkdir()
    (tmp_path / ".hidden").write_bytes(b"x")
    base = f"{tmp_path}/"
    assert complete_path(base + "rep") == base + "report.pdf"
    assert complete_path(base + "reports") == base + "reports/"
    assert complete_path(base) == base + "report.pdf"  # hidden entries are not offered
    assert complete_path(base + ".h") == base + ".hidden"
    assert complete_path(base + "zzz") is None
    assert complete_path(base + "report.pdf") is None  # complete already
    assert complete_path("") is None


def test_a_recording_becomes_a_16_khz_wav() -> None:
    recording = Recording()
    frame = np.arange(960, dtype=np.int16)  # one 20 ms frame at 48 kHz
    for _ in range(50):
        recording.add(frame)
    assert recording.seconds == 1.0
    with wave.open(io.BytesIO(recording.wav())) as file:
        assert (file.getnchannels(), file.getsampwidth(), file.getframerate()) == (1, 2, WAV_RATE)
        samples = np.frombuffer(file.readframes(file.getnframes()), "<i2")
    assert len(samples) == WAV_RATE
    assert list(samples[:3]) == [1, 4, 7]  # each three samples averaged
    assert encode_wav(b"")[:4] == b"RIFF"


def test_a_model_choice_reads() -> None:
    pro = ModelChoice("minara-pro", "Minara Pro", reasoning=True)
    assert describe_pick(ModelPick(pro, "high")) == "Minara Pro · high effort"
    assert describe_pick(ModelPick(pro)) == "Minara Pro"
    assert describe_pick(ModelPick(ModelChoice("x", "\x1b[31mRed"))) == "Red"
    assert describe_pick(ModelPick(None)) == ""


def test_a_history_attachment_downloads_from_the_server() -> None:
    part = AttachmentPart("k", "chart.png", "image/png", 48213, "image", "/v1/files/k")
    block = attachment_file_block(part, lambda url: "https://gw.example" + url)
    assert block is not None
    assert (block.name, block.url, block.size) == (
        "chart.png",
        "https://gw.example/v1/files/k",
        48213,
    )
    assert attachment_file_block(AttachmentPart("k", "a", "t", 1, "text"), str) is None
