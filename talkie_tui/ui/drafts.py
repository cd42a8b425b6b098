"""Composer drafts that survive a crash, a quit and a restart (issue 6, "Nothing lost").

One small JSON file in the state folder (`drafts.json`, 0600, replaced atomically) holds the
unsent text of each thread, keyed by server id and thread id (`NEW` for a thread not yet
created). `ComposerDrafts` ties the chat screen's composer to it: the text goes in on every
change and is saved shortly after the last keystroke (debounced), at once on a thread switch, on
send and on quit.

A missing, unreadable or corrupt file is an empty store: drafts are a comfort, never a crash.
Saving merges with what is on disk, so two talkie processes do not erase each other's drafts.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.css.query import NoMatches

from talkie_tui.config import state_dir, write_private_file

if TYPE_CHECKING:
    from textual.timer import Timer
    from textual.widget import Widget
    from textual.widgets import TextArea

__all__ = [
    "DRAFTS_FILE",
    "DRAFT_SAVE_DELAY",
    "MAX_DRAFTS",
    "MAX_DRAFT_CHARS",
    "NEW",
    "ComposerDrafts",
    "DraftStore",
    "drafts_path",
]

DRAFTS_FILE = "drafts.json"
DRAFT_SAVE_DELAY = 0.4  # the draft is saved this long after the last keystroke
NEW = "new"  # the key of the "new thread" composer
MAX_DRAFT_CHARS = 100_000  # a longer text is kept cut to this length
MAX_DRAFTS = 200  # the newest ones are kept
MAX_FILE_BYTES = 32 * 1024 * 1024  # a bigger file is not ours to read: start empty
_VERSION = 1

Key = tuple[str, str]


def drafts_path() -> Path:
    """The drafts file in the state folder."""
    return state_dir() / DRAFTS_FILE


class DraftStore:
    """Drafts by (server id, thread id or `NEW`); `put` in memory, `save` to disk."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or drafts_path()
        self._drafts: dict[Key, tuple[str, float]] = _read(self.path)
        self._changed: set[Key] = set()

    def get(self, server_id: str, thread: str | None) -> str:
        """The draft of a thread ("" when there is none)."""
        entry = self._drafts.get((server_id, thread or NEW))
        return entry[0] if entry else ""

    def put(self, server_id: str, thread: str | None, text: str) -> None:
        """Remember `text` as the draft of a thread (empty or blank text forgets it)."""
        key = (server_id, thread or NEW)
        text = text[:MAX_DRAFT_CHARS] if text.strip() else ""
        if self.get(*key) == text:
            return
        if text:
            self._drafts[key] = (text, time.time())
        else:
            self._drafts.pop(key, None)
        self._changed.add(key)

    @property
    def dirty(self) -> bool:
        """True when some draft changed since the last save."""
        return bool(self._changed)

    def save(self) -> None:
        """Write the changed drafts, merged into what is on disk; errors are swallowed."""
        if not self._changed:
            return
        merged = _read(self.path)
        for key in self._changed:
            if key in self._drafts:
                merged[key] = self._drafts[key]
            else:
                merged.pop(key, None)
        newest = sorted(merged.items(), key=lambda item: item[1][1], reverse=True)[:MAX_DRAFTS]
        servers: dict[str, dict[str, dict[str, Any]]] = {}
        for (server_id, thread), (text, at) in newest:
            servers.setdefault(server_id, {})[thread] = {"text": text, "at": at}
        payload = json.dumps({"version": _VERSION, "drafts": servers}, ensure_ascii=False)
        try:
            write_private_file(self.path, payload)
        except OSError:
            return  # kept in memory: the next save tries again
        self._changed.clear()


class ComposerDrafts:
    """Whose draft the composer holds (a thread id or `NEW`), kept and saved as it changes."""

    def __init__(
        self,
        owner: Widget,
        composer: Callable[[], TextArea],
        server_id: str,
        thread: str | None,
        path: Path | None = None,
    ) -> None:
        self._owner = owner  # its timer debounces the saving
        self._composer = composer
        self._server_id = server_id
        self._store = DraftStore(path)  # the state folder's, unless `path` (a demo's own)
        self.key = thread or NEW
        self._timer: Timer | None = None

    def restore(self) -> None:
        """Put the draft of the thread the composer now belongs to back into it."""
        composer = self._composer()
        composer.load_text(self._store.get(self._server_id, self.key))
        composer.move_cursor(composer.document.end)

    def switch(self, key: str, *, restore: bool = True) -> None:
        """The composer now belongs to thread `key`: save the old draft at once.

        With `restore` the composer shows `key`'s draft; without, its text moves to `key`
        (a new thread got its id from the server).
        """
        if key == self.key:
            return
        text = self._composer().text
        self._store.put(self._server_id, self.key, text if restore else "")
        self.key = key
        if restore:
            self.restore()
        else:
            self._store.put(self._server_id, key, text)
        self.save()

    def put(self, text: str) -> None:
        """The composer's text now; saved at once by `save`, else soon after the last change."""
        self._store.put(self._server_id, self.key, text)

    def changed(self, text: str) -> None:
        """The person typed: keep the text, and save it once the typing pauses."""
        self.put(text)
        if self._timer is not None:
            self._timer.stop()
        self._timer = self._owner.set_timer(DRAFT_SAVE_DELAY, self.save)

    def save(self) -> None:
        """Write changed drafts now (a few kilobytes, atomically: fine on the event loop)."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self._store.save()

    def preserve(self) -> None:
        """Save the composer's text now: talkie is failing (see `CrashGuard`)."""
        with contextlib.suppress(NoMatches):  # a screen that failed before it was composed
            self.put(self._composer().text)
        self.save()


def _read(path: Path) -> dict[Key, tuple[str, float]]:
    """The drafts in `path`; anything missing, too big or malformed reads as nothing."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return {}
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    servers = data.get("drafts") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        return {}
    drafts: dict[Key, tuple[str, float]] = {}
    for server_id, threads in servers.items():
        if not isinstance(threads, dict):
            continue
        for thread, entry in threads.items():
            if not isinstance(entry, dict):
                continue
            text, at = entry.get("text"), entry.get("at", 0.0)
            if isinstance(text, str) and text.strip() and isinstance(at, int | float):
                drafts[(str(server_id), str(thread))] = (text[:MAX_DRAFT_CHARS], float(at))
    return drafts
