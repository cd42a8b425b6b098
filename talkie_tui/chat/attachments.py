"""Files sent with a message: whether one may be attached, in words for a person.

Protocol-neutral and pure (no network, no UI): the composer checks a file here before any
upload. What kind a file is and the limits of one message are the rules of
`talkie_tui.core.attachments` (the wire client checks by the same rules before it uploads);
`AttachmentLimits()` are the Minara gateway's, so a protocol with other limits passes its own.
A file that cannot go is refused with the reason (`AttachmentRefused`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from talkie_tui.core.attachments import (
    HEAD_BYTES,
    MAX_ATTACHMENTS,
    MAX_FILE_BYTES,
    MAX_IMAGE_BYTES,
    AttachmentKind,
    AttachmentLimits,
    FileKind,
    MiB,
    detect_kind,
)
from talkie_tui.core.errors import TalkieError
from talkie_tui.i18n import _

__all__ = [
    "HEAD_BYTES",
    "MAX_ATTACHMENTS",
    "MAX_FILE_BYTES",
    "MAX_IMAGE_BYTES",
    "AttachmentKind",
    "AttachmentLimits",
    "AttachmentRefused",
    "CheckedFile",
    "FileKind",
    "check_file",
    "detect_kind",
    "limit_problem",
]


@dataclass(frozen=True, slots=True)
class CheckedFile:
    """A file that may be attached: where it is, its name, size and kind."""

    path: Path
    filename: str
    size: int
    kind: AttachmentKind
    media_type: str


class AttachmentRefused(TalkieError):
    """A file cannot be attached; the message says why (before anything was uploaded)."""


def limit_problem(
    kind: AttachmentKind, size: int, already: int, limits: AttachmentLimits | None = None
) -> str | None:
    """Why a file of `kind` and `size` cannot join `already` attached ones; None when it can."""
    limits = limits or AttachmentLimits()
    if already >= limits.per_message:
        return _("A message takes at most {count} files.").format(count=limits.per_message)
    largest = limits.max_bytes(kind)
    if size > largest:
        if kind == "image":
            return _("An image may be at most {limit}; this one is {size}.").format(
                limit=_mib(largest), size=_mib(size)
            )
        return _("A file may be at most {limit}; this one is {size}.").format(
            limit=_mib(largest), size=_mib(size)
        )
    if size == 0:
        return _("The file is empty.")
    return None


def _mib(size: int) -> str:
    """Sizes near a limit in the binary unit the limit is written in (5 MiB, 6.2 MiB)."""
    value = size / MiB
    text = f"{value:.0f}" if value == int(value) else f"{value:.1f}"
    return _("{count} MiB").format(count=text)


def check_file(path: Path, already: int = 0, limits: AttachmentLimits | None = None) -> CheckedFile:
    """Check a file before any upload: it exists, is readable, of a kind and within the limits.

    Raises `AttachmentRefused` with the reason. Reads only the first `HEAD_BYTES`.
    """
    path = path.expanduser()
    name = path.name
    try:
        if not path.is_file():
            reason = _("no such file") if not path.exists() else _("not a file")
            raise AttachmentRefused(_("{name}: {reason}.").format(name=str(path), reason=reason))
        size = path.stat().st_size
        with path.open("rb") as file:
            head = file.read(HEAD_BYTES)
    except OSError as error:
        reason = os.strerror(error.errno) if error.errno else str(error)
        raise AttachmentRefused(
            _("{name} cannot be read: {reason}.").format(name=name, reason=reason)
        ) from error
    found = detect_kind(name, head)
    if found is None:
        raise AttachmentRefused(
            _(
                "{name} is not a file this server takes "
                "(images, PDFs, spreadsheets, text and office documents)."
            ).format(name=name)
        )
    problem = limit_problem(found.kind, size, already, limits)
    if problem is not None:
        raise AttachmentRefused(
            _("{name} is not attached: {problem}").format(name=name, problem=problem)
        )
    return CheckedFile(path.resolve(), name, size, found.kind, found.media_type)
