"""One set of attachment rules: the composer's check and the wire client's agree on every file."""

from __future__ import annotations

import typing
from pathlib import Path

import pytest

from talkie_tui.backends import base
from talkie_tui.chat.attachments import AttachmentRefused, check_file
from talkie_tui.core.attachments import (
    ATTACHMENT_KINDS,
    LIMITS,
    AttachmentKind,
    MiB,
    detect_kind,
)
from talkie_tui.protocol.minara import files
from talkie_tui.protocol.minara.files import FileRefused, probe_file

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 40
SAMPLES = [
    ("chart.png", PNG),
    ("scan.png", b"%PDF-1.4\n"),
    ("budget.xlsx", b"PK\x03\x04" + b"\x00" * 26),
    ("archive.zip", b"PK\x03\x04" + b"\x00" * 26),
    ("old.doc", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 8),
    ("data.csv", b"a,b\n1,2\n"),
    ("script.py", b"print('hi')\n"),
    ("notes.markdown", b"# Notes\n"),
    ("drawing.svg", b"<svg xmlns='http://www.w3.org/2000/svg'/>"),
    ("tool", b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 50),
]


@pytest.mark.parametrize(("name", "content"), SAMPLES)
def test_the_composer_and_the_wire_client_see_the_same_kind(
    tmp_path: Path, name: str, content: bytes
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    expected = detect_kind(name, content)
    try:
        checked = check_file(path)
    except AttachmentRefused:
        composer = None
    else:
        composer = (checked.kind, checked.media_type)
    try:
        probed = probe_file(path)
    except FileRefused:
        wire = None
    else:
        wire = (probed.kind, probed.media_type)
    assert composer == wire == (None if expected is None else (expected.kind, expected.media_type))


def test_svg_is_refused_although_it_is_text() -> None:
    assert detect_kind("drawing.svg", b"<svg/>") is None
    assert detect_kind("drawing.txt", b"<svg/>") is not None  # the name, not the words, refuses


def test_the_limits_are_one_set_of_data() -> None:
    assert (LIMITS.per_message, LIMITS.image_bytes, LIMITS.other_bytes) == (8, 5 * MiB, 20 * MiB)
    assert LIMITS.per_message == files.MAX_ATTACHMENTS
    assert LIMITS.max_bytes("image") == files.MAX_IMAGE_BYTES
    assert LIMITS.max_bytes("pdf") == files.MAX_OTHER_BYTES
    with pytest.raises(FileRefused, match="at most 8"):
        files.check_count(LIMITS.per_message + 1)
    files.check_count(LIMITS.per_message)


def test_the_backend_names_the_same_kinds() -> None:
    assert base.AttachmentKind is AttachmentKind
    assert typing.get_args(AttachmentKind) == ATTACHMENT_KINDS
