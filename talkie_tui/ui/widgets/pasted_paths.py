"""Paths as a person pastes or types them: quoted, escaped, or a file:// URL.

The composer recognises a pasted path of a file here and tells the screen by a message
(`Composer.PathPasted`); the attachments (`ui/chat/attaching.py`) read `/attach PATH` with the
same unquoting.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from urllib.parse import unquote, urlsplit

__all__ = ["pasted_path", "unquote_path"]


def unquote_path(text: str) -> str:
    """A path as a shell or a file manager writes it: quoted, escaped, or a file:// URL."""
    if text.startswith("file://"):
        return unquote(urlsplit(text).path)
    try:
        words = shlex.split(text)
    except ValueError:
        return text
    return words[0] if len(words) == 1 else text


def pasted_path(text: str) -> Path | None:
    """The file a paste names, when the whole paste is the path of an existing file."""
    candidate = text.strip()
    if not candidate or "\n" in candidate or len(candidate) > 4096:
        return None
    path = Path(unquote_path(candidate)).expanduser()
    try:
        return path if path.is_absolute() and path.is_file() else None
    except OSError:
        return None
