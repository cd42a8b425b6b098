"""File kinds from bytes and names, and the limits of one message, before any upload."""

from __future__ import annotations

from pathlib import Path

import pytest

from talkie_tui.chat.attachments import (
    MAX_FILE_BYTES,
    MAX_IMAGE_BYTES,
    AttachmentLimits,
    AttachmentRefused,
    check_file,
    detect_kind,
    limit_problem,
)

MiB = 1024 * 1024
ZIP = b"PK\x03\x04" + b"\x00" * 26
OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 8


@pytest.mark.parametrize(
    ("name", "head", "kind", "media_type"),
    [
        ("chart.png", b"\x89PNG\r\n\x1a\n....", "image", "image/png"),
        ("photo.JPG", b"\xff\xd8\xff\xe0", "image", "image/jpeg"),
        ("anim.gif", b"GIF89a...", "image", "image/gif"),
        ("pic.webp", b"RIFF\x00\x00\x00\x00WEBPVP8 ", "image", "image/webp"),
        ("report.pdf", b"%PDF-1.7\n", "pdf", "application/pdf"),
        # The bytes win over the name: a PDF saved as .png is a PDF.
        ("scan.png", b"%PDF-1.4\n", "pdf", "application/pdf"),
        (
            "budget.xlsx",
            ZIP,
            "spreadsheet",
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        ),
        (
            "letter.docx",
            ZIP,
            "office",
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        ),
        ("deck.odp", ZIP, "office", "application/vnd.oasis.opendocument.presentation"),
        ("old.xls", OLE, "spreadsheet", "application/vnd.ms-excel"),
        ("old.doc", OLE, "office", "application/msword"),
        ("data.csv", b"a,b\n1,2\n", "spreadsheet", "text/csv"),
        ("notes.md", "# Poznámky – čeština\n".encode(), "text", "text/markdown"),
        ("config.json", b'{"a": 1}', "text", "application/json"),
        ("README", b"plain words\n", "text", "text/plain"),
        ("script.py", b"print('hi')\n", "text", "text/plain"),
        # A multi-byte character cut at the end of the head is still text.
        ("cut.txt", "žluťoučký".encode()[:-1], "text", "text/plain"),
    ],
)
def test_kinds_from_bytes_and_names(name: str, head: bytes, kind: str, media_type: str) -> None:
    found = detect_kind(name, head)
    assert found is not None
    assert (found.kind, found.media_type) == (kind, media_type)


@pytest.mark.parametrize(
    ("name", "head"),
    [
        ("archive.zip", ZIP),  # a ZIP that is no office file
        ("setup.exe", b"MZ\x90\x00\x03\x00"),
        ("blob.bin", b"\x00\x01\x02\xff"),
        ("latin1.txt", "café".encode("latin-1") + b"\x00"),
        ("fake.docx", OLE),  # old Office bytes under a new Office name
    ],
)
def test_what_is_no_kind_is_refused(name: str, head: bytes) -> None:
    assert detect_kind(name, head) is None


def test_limits_of_one_message() -> None:
    assert limit_problem("image", MAX_IMAGE_BYTES, 0) is None
    assert limit_problem("pdf", MAX_FILE_BYTES, 7) is None
    assert limit_problem("text", 10, 8) == "A message takes at most 8 files."
    assert limit_problem("image", 6 * MiB, 0) == "An image may be at most 5 MiB; this one is 6 MiB."
    assert limit_problem("image", MAX_IMAGE_BYTES + 1, 0) == (
        "An image may be at most 5 MiB; this one is 5.0 MiB."
    )
    assert limit_problem("pdf", 21 * MiB, 0) == "A file may be at most 20 MiB; this one is 21 MiB."
    assert limit_problem("spreadsheet", MAX_IMAGE_BYTES * 2, 0) is None  # 10 MiB: not an image
    assert limit_problem("text", 0, 0) == "The file is empty."
    assert limit_problem("text", 5, 1, AttachmentLimits(per_message=1)) is not None


def test_check_file(tmp_path: Path) -> None:
    chart = tmp_path / "chart.png"
    chart.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 100)
    checked = check_file(chart)
    assert (checked.filename, checked.size, checked.kind) == ("chart.png", 108, "image")
    assert checked.path == chart.resolve()
    big = tmp_path / "big.pdf"
    with big.open("wb") as file:
        file.write(b"%PDF-1.7\n")
        file.truncate(21 * MiB)
    with pytest.raises(AttachmentRefused, match=r"big\.pdf is not attached: A file may be at most"):
        check_file(big)
    with pytest.raises(AttachmentRefused, match="no such file"):
        check_file(tmp_path / "missing.pdf")
    with pytest.raises(AttachmentRefused, match="not a file"):
        check_file(tmp_path)
    with pytest.raises(AttachmentRefused, match="at most 8 files"):
        check_file(chart, already=8)
    binary = tmp_path / "tool"
    binary.write_bytes(b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 50)
    with pytest.raises(AttachmentRefused, match="not a file this server takes"):
        check_file(binary)
