"""The rows of the thread list (§9): a thread with its marks and age, a search result with its
snippet around the match; and the folding and times they are written with."""

from __future__ import annotations

import unicodedata
from datetime import UTC, datetime, tzinfo

from rich.cells import cell_len
from textual.content import Content

from talkie_tui.backends.base import SearchHit
from talkie_tui.backends.parts.threads import MarkedThread
from talkie_tui.chat.vocabulary import Thread
from talkie_tui.i18n import _, ngettext, pgettext
from talkie_tui.ui.widgets.split_row import SplitRow, one_line

__all__ = [
    "HitRow",
    "SplitRow",
    "ThreadRow",
    "fold_text",
    "near_match",
    "one_line",
    "relative_time",
    "snippet_content",
]

HIT_LEAD = 10  # characters kept before a match that a narrow row moves into view
_MARKERS = {"chat": ("●", "$text-muted"), "voice": ("♪", "$accent")}
_OTHER_MARKER = ("·", "$text-muted")
_PINNED = ("▲", "$accent")
# Letters that NFKD does not split into a base letter and a mark.
_UNSPLIT = str.maketrans({"ł": "l", "Ł": "L", "ø": "o", "Ø": "O", "đ": "d", "Đ": "D", "ı": "i"})


def fold_text(text: str) -> str:
    """Lower-case `text` and drop diacritics, so "Novák" and "novak" compare equal."""
    decomposed = unicodedata.normalize("NFKD", text.translate(_UNSPLIT))
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def _weekday(when: datetime) -> str:
    """The short name of the day of the week, in the UI's language (not the C locale's)."""
    names = (
        pgettext("weekday", "Mon"),
        pgettext("weekday", "Tue"),
        pgettext("weekday", "Wed"),
        pgettext("weekday", "Thu"),
        pgettext("weekday", "Fri"),
        pgettext("weekday", "Sat"),
        pgettext("weekday", "Sun"),
    )
    return names[when.weekday()]


def _day_and_month(when: datetime) -> str:
    """The day and the short month name ("12 Mar"), in the UI's language."""
    months = (
        pgettext("month", "Jan"),
        pgettext("month", "Feb"),
        pgettext("month", "Mar"),
        pgettext("month", "Apr"),
        pgettext("month", "May"),
        pgettext("month", "Jun"),
        pgettext("month", "Jul"),
        pgettext("month", "Aug"),
        pgettext("month", "Sep"),
        pgettext("month", "Oct"),
        pgettext("month", "Nov"),
        pgettext("month", "Dec"),
    )
    return _("{day} {month}").format(day=when.day, month=months[when.month - 1])


def relative_time(when: datetime | None, now: datetime, tz: tzinfo | None = None) -> str:
    """A short age such as "now", "3 min", "5 h", "yesterday", "Mon", "12 Mar" or "2024"."""
    if when is None:
        return ""
    if when.tzinfo is None:  # the wire should carry an offset; assume UTC when it does not
        when = when.replace(tzinfo=UTC)
    when, now = when.astimezone(tz), now.astimezone(tz)
    seconds = (now - when).total_seconds()
    if seconds < 60:
        return _("now")  # also for a clock slightly ahead of ours
    if seconds < 3600:
        minutes = int(seconds // 60)
        return ngettext("{count} min", "{count} min", minutes).format(count=minutes)
    days = (now.date() - when.date()).days
    if days == 0:
        hours = int(seconds // 3600)
        return ngettext("{count} h", "{count} h", hours).format(count=hours)
    if days == 1:
        return _("yesterday")
    if days < 7:
        return _weekday(when)
    if when.year == now.year:
        return _day_and_month(when)
    return str(when.year)


def _hub_marks(thread: Thread) -> list[str | tuple[str, str]]:
    """After a hub conversation's title: its unread count (none while muted), muted, and
    blocked (what a `MarkedThread` says of its agent)."""
    marks: list[str | tuple[str, str]] = []
    if not isinstance(thread, MarkedThread):
        return marks
    if thread.unread and not thread.muted:
        marks.append((f" ({thread.unread})", "bold $accent"))
    if thread.muted:
        marks.append((" " + _("muted"), "$text-muted"))
    if thread.blocked:
        marks.append((" " + _("blocked"), "$text-warning"))
    return marks


class ThreadRow(SplitRow):
    """A thread: channel marker and title on the left, its age on the right.

    The text is built on first render, so only rows that scroll into view cost anything.
    """

    def __init__(self, thread: Thread, now: datetime, tz: tzinfo | None = None) -> None:
        self.thread = thread
        self._now = now
        self._tz = tz
        self._parts = None

    def parts(self) -> tuple[Content, str]:
        """Marker and title; age."""
        if self._parts is None:
            thread = self.thread
            marker = _MARKERS.get(str(thread.channel), _OTHER_MARKER)
            if isinstance(thread, MarkedThread) and thread.pinned:  # a contact pinned on top
                marker = _PINNED
            # Server text: cleaned of control characters already; never markup, one line only.
            title = one_line(thread.title) or _("(untitled)")
            age = relative_time(thread.updated_at or thread.created_at, self._now, self._tz)
            self._parts = (Content.assemble(marker, " ", title, *_hub_marks(thread)), age)
        return self._parts


def snippet_content(snippet: str) -> Content:
    """A search snippet on one line, the matches the server put between « and » in bold."""
    parts: list[Content | tuple[str, str]] = []
    rest = one_line(snippet)
    while "«" in rest:
        before, _mark, after = rest.partition("«")
        match, closed, rest = after.partition("»")
        parts.append(Content(before))
        parts.append((match, "bold $text-accent"))
        if not closed:
            break
    parts.append(Content(rest))
    return Content.assemble(*parts)


def near_match(snippet: str, room: int) -> str:
    """`snippet` (one line) with its head cut ("…") when its first match would end past `room`
    cells, so that the match is seen: a few characters before it are kept when they fit."""
    start = snippet.find("«")
    if start < 0 or room <= 0:
        return snippet
    end = snippet.find("»", start)
    end = len(snippet) if end < 0 else end
    match = cell_len(snippet[start + 1 : end])
    if cell_len(snippet[:start]) + match <= room:
        return snippet
    lead = max(0, min(HIT_LEAD, room - 2 - match))  # "…", what is kept, the match, "…"
    return "…" + snippet[start - min(lead, start) :]


class HitRow(SplitRow):
    """A match of the server's search: the thread's title, then the words around the match
    (moved into view when the row is too narrow for the words before it)."""

    def __init__(self, hit: SearchHit) -> None:
        title = one_line(hit.title) or _("(untitled)")
        self._title = Content.assemble(("⌕ ", "$text-muted"), (title, "bold"), " ")
        self._snippet = one_line(hit.snippet)
        super().__init__(Content.assemble(self._title, snippet_content(self._snippet)))

    def _content(self, width: int) -> Content:
        snippet = near_match(self._snippet, width - self._title.cell_length)
        left = Content.assemble(self._title, snippet_content(snippet))
        return left.truncate(width, ellipsis=True, pad=True)
