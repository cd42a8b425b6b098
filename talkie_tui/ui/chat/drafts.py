"""Composer drafts that survive a crash, a quit and a restart (issue 6, "Nothing lost").

One small JSON file in the state folder (`drafts.json`, 0600, replaced atomically) holds the
unsent text of each thread, keyed by server id and thread id (`NEW` for a thread not yet
created), and each message sent that the server has not taken yet (see `ui/outbox.py`), keyed
by server id and message id. `ComposerDrafts` ties the chat screen's composer to it: the text
goes in on every change and is saved shortly after the last keystroke (debounced), at once on a
thread switch, on send and on quit.

A missing, unreadable or corrupt file is an empty store: drafts are a comfort, never a crash.
Saving merges with what is on disk, so two talkie processes do not erase each other's drafts.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

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
    "Unsent",
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


class Unsent(NamedTuple):
    """A message sent that the server has not taken yet: its thread (or `NEW`) and text."""

    message_id: str
    thread: str
    text: str
    at: float


def drafts_path() -> Path:
    """The drafts file in the state folder."""
    return state_dir() / DRAFTS_FILE


class DraftStore:
    """Drafts by (server id, thread id or `NEW`); `put` in memory, `save` to disk."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or drafts_path()
        self._drafts, self._unsent = _read(self.path)
        self._changed: set[Key] = set()
        self._unsent_changed: set[Key] = set()

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

    def hold(self, server_id: str, thread: str | None, message_id: str, text: str) -> None:
        """Keep a message sent until the server takes it (`taken`)."""
        key = (server_id, message_id)
        self._unsent[key] = Unsent(message_id, thread or NEW, text[:MAX_DRAFT_CHARS], time.time())
        self._unsent_changed.add(key)

    def taken(self, server_id: str, message_id: str) -> None:
        """The server has the message: it is kept no more."""
        key = (server_id, message_id)
        if self._unsent.pop(key, None) is not None:
            self._unsent_changed.add(key)

    def unsent(self, server_id: str, thread: str | None) -> list[Unsent]:
        """The messages of a thread the server has not taken, oldest first."""
        key = thread or NEW
        held = [u for (server, _id), u in self._unsent.items() if server == server_id]
        return sorted((u for u in held if u.thread == key), key=lambda u: u.at)

    @property
    def dirty(self) -> bool:
        """True when some draft or unsent message changed since the last save."""
        return bool(self._changed or self._unsent_changed)

    def save(self) -> None:
        """Write what changed, merged into what is on disk; errors are swallowed."""
        if not self.dirty:
            return
        drafts, unsent = _read(self.path)
        _merge(drafts, self._drafts, self._changed)
        _merge(unsent, self._unsent, self._unsent_changed)
        newest = sorted(drafts.items(), key=lambda item: item[1][1], reverse=True)[:MAX_DRAFTS]
        servers: dict[str, dict[str, dict[str, Any]]] = {}
        for (server_id, thread), (text, at) in newest:
            servers.setdefault(server_id, {})[thread] = {"text": text, "at": at}
        held: dict[str, dict[str, dict[str, Any]]] = {}
        for (server_id, message_id), message in unsent.items():
            entry = {"thread": message.thread, "text": message.text, "at": message.at}
            held.setdefault(server_id, {})[message_id] = entry
        document = {"version": _VERSION, "drafts": servers, "unsent": held}
        try:
            write_private_file(self.path, json.dumps(document, ensure_ascii=False))
        except OSError:
            return  # kept in memory: the next save tries again
        self._changed.clear()
        self._unsent_changed.clear()


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
        self.store = DraftStore(path)  # the state folder's, unless `path` (a demo's own)
        self.key = thread or NEW
        self._timer: Timer | None = None

    def restore(self) -> None:
        """Put the draft of the thread the composer now belongs to back into it."""
        composer = self._composer()
        composer.load_text(self.store.get(self._server_id, self.key))
        composer.move_cursor(composer.document.end)

    def switch(self, key: str, *, restore: bool = True) -> None:
        """The composer now belongs to thread `key`: save the old draft at once.

        With `restore` the composer shows `key`'s draft; without, its text moves to `key`
        (a new thread got its id from the server).
        """
        if key == self.key:
            return
        text = self._composer().text
        self.store.put(self._server_id, self.key, text if restore else "")
        self.key = key
        if restore:
            self.restore()
        else:
            self.store.put(self._server_id, key, text)
        self.save()

    def put(self, text: str) -> None:
        """The composer's text now; saved at once by `save`, else soon after the last change."""
        self.store.put(self._server_id, self.key, text)

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
        self.store.save()

    def preserve(self) -> None:
        """Save the composer's text now: talkie is failing (see `CrashGuard`)."""
        with contextlib.suppress(NoMatches):  # a screen that failed before it was composed
            self.put(self._composer().text)
        self.save()


def _merge(on_disk: dict[Key, Any], mine: dict[Key, Any], changed: set[Key]) -> None:
    """Put this process's changes into what another process may have saved meanwhile."""
    for key in changed:
        if key in mine:
            on_disk[key] = mine[key]
        else:
            on_disk.pop(key, None)


def _read(path: Path) -> tuple[dict[Key, tuple[str, float]], dict[Key, Unsent]]:
    """The drafts and unsent messages in `path`; anything missing, too big or malformed reads
    as nothing."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return {}, {}
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}, {}
    if not isinstance(data, dict):
        return {}, {}
    drafts: dict[Key, tuple[str, float]] = {}
    for (server_id, thread), entry in _entries(data.get("drafts")):
        text, at = entry.get("text"), entry.get("at", 0.0)
        if isinstance(text, str) and text.strip() and isinstance(at, int | float):
            drafts[(server_id, thread)] = (text[:MAX_DRAFT_CHARS], float(at))
    unsent: dict[Key, Unsent] = {}
    for (server_id, message_id), entry in _entries(data.get("unsent")):
        owner, said, when = entry.get("thread"), entry.get("text"), entry.get("at", 0.0)
        if isinstance(owner, str) and isinstance(said, str) and isinstance(when, int | float):
            unsent[(server_id, message_id)] = Unsent(
                message_id, owner, said[:MAX_DRAFT_CHARS], float(when)
            )
    return drafts, unsent


def _entries(servers: object) -> Iterator[tuple[Key, dict[str, Any]]]:
    """The (server, key) → object entries of a section, skipping whatever is malformed."""
    if not isinstance(servers, dict):
        return
    for server_id, entries in servers.items():
        if not isinstance(entries, dict):
            continue
        for key, entry in entries.items():
            if isinstance(entry, dict):
                yield (str(server_id), str(key)), entry
