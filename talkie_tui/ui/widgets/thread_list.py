"""The thread list (§9): a filter box over a fast list of threads, newest first (its rows are
`thread_rows`')."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import suppress
from datetime import UTC, datetime, tzinfo
from functools import partial
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.message import Message
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Button, Input, OptionList
from textual.widgets.option_list import Option, OptionDoesNotExist

from talkie_tui.backends.base import SearchHit
from talkie_tui.backends.parts.threads import MarkedThread
from talkie_tui.chat.vocabulary import Thread
from talkie_tui.i18n import N_, _
from talkie_tui.ui.widgets.thread_rows import (
    HitRow,
    SplitRow,
    ThreadRow,
    fold_text,
    one_line,
)

# `SplitRow` and `one_line` are the rows' (`thread_rows`), named here too for the screens
# that draw their own lists with them.
__all__ = ["SplitRow", "ThreadList", "one_line"]

_THREAD_PREFIX = "thread:"  # option ids: a thread apart from a search result
_HIT_PREFIX = "hit:"  # a server search result: its index in the hits shown
SEARCH_DELAY = 0.35  # seconds of no typing before the server is asked (one search per pause)
MIN_SEARCH_CHARS = 2


class _Entry:
    """A thread, its folded title for the filter, and its option once built."""

    __slots__ = ("key", "option", "thread")

    def __init__(self, thread: Thread) -> None:
        self.thread = thread
        self.key = fold_text(thread.title)
        self.option: Option | None = None


class _ThreadMessage(Message):
    """A message about one thread of a ThreadList."""

    def __init__(
        self, thread_list: ThreadList, thread_id: str, message_id: str | None = None
    ) -> None:
        super().__init__()
        self.thread_list = thread_list
        self.thread_id = thread_id
        self.message_id = message_id  # the message a search found in it, to be shown

    @property
    def control(self) -> ThreadList:
        """The list that posted the message."""
        return self.thread_list


class _ListMessage(Message):
    """A message about the list as a whole (a button of its header)."""

    def __init__(self, thread_list: ThreadList) -> None:
        super().__init__()
        self.thread_list = thread_list

    @property
    def control(self) -> ThreadList:
        """The list that posted the message."""
        return self.thread_list


class ThreadList(Widget):
    """A filter box and a "+ New thread" button above an `OptionList` of threads (only
    threads and search results are rows, so ↓ from the filter reaches the first result); posts
    messages, never calls HTTP."""

    HELP_GROUP = N_("Thread list")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "new_thread", N_("New thread")),
        Binding("f", "find_agents", N_("Find agents")),
        Binding("delete", "delete_thread", N_("Delete thread")),
        Binding("slash", "focus_filter", N_("Filter threads")),
        Binding("down", "focus_list", N_("From the filter to the list"), show=False),
        Binding("escape", "clear_filter", N_("Empty the filter"), show=False),
    ]

    class Selected(_ThreadMessage):
        """The user opened a thread."""

    class DeleteRequested(_ThreadMessage):
        """The user asked to delete a thread (the screen confirms first)."""

    class SearchRequested(_ListMessage):
        """The filter stayed still long enough: the server is to search the messages."""

        def __init__(self, thread_list: ThreadList, query: str) -> None:
            super().__init__(thread_list)
            self.query = query

    class NewRequested(_ListMessage):
        """The user asked for a new thread."""

    class FindAgentsRequested(_ListMessage):
        """The user asked for the server's catalogue of agents ("Find agents")."""

    def __init__(
        self,
        threads: Sequence[Thread] = (),
        *,
        now: Callable[[], datetime] | None = None,
        tz: tzinfo | None = None,
        searchable: bool = False,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._now = now or (lambda: datetime.now(UTC))
        self._tz = tz
        self._entries: list[_Entry] = [_Entry(t) for t in threads]
        self._highlighted_id: str | None = None
        self.searchable = searchable
        """The server searches messages too: the filter asks it when the typing pauses."""
        self._hits: tuple[str, Sequence[SearchHit] | str] | None = None  # query, hits or error
        self._search_timer: Timer | None = None
        self.filter_input = Input(
            placeholder=_("Search threads  /") if searchable else _("Filter threads  /"),
            id="thread-filter",
            compact=True,
        )
        self.options = OptionList(markup=False, id="thread-options")

    @property
    def finds_agents(self) -> bool:
        """The server lists agents to add (a hub's catalogue): "Find agents" is shown."""
        return self.has_class("-finds-agents")

    @finds_agents.setter
    def finds_agents(self, offered: bool) -> None:
        self.set_class(offered, "-finds-agents")

    def compose(self) -> ComposeResult:
        """The filter box, the new-thread and find-agents buttons, then the list."""
        yield self.filter_input
        yield Button(Content(_("+ New thread")), id="thread-new", compact=True)
        yield Button(Content(_("@ Find agents")), id="thread-find", compact=True)
        yield self.options

    def on_mount(self) -> None:
        """Fill the list and keep the ages current."""
        self._rebuild()
        self.set_interval(60, partial(self._rebuild, fresh=True))

    # --- public API --------------------------------------------------------------------

    @property
    def threads(self) -> list[Thread]:
        """Every thread, in the order given (newest first)."""
        return [entry.thread for entry in self._entries]

    @property
    def visible_thread_ids(self) -> list[str]:
        """The ids of the threads the filter lets through, in order."""
        return [entry.thread.id for entry in self._matching()]

    @property
    def highlighted_thread_id(self) -> str | None:
        """The id of the highlighted thread, if a thread (not "New thread") is highlighted."""
        option = self.options.highlighted_option
        if option is None or option.id is None or not option.id.startswith(_THREAD_PREFIX):
            return None
        return option.id.removeprefix(_THREAD_PREFIX)

    def set_threads(self, threads: Sequence[Thread]) -> None:
        """Replace the threads, keeping the highlighted thread where it still exists."""
        self._entries = [_Entry(t) for t in threads]
        if self.is_mounted:
            self._rebuild()

    def seen(self, thread_id: str) -> None:
        """The person is reading `thread_id`: its unread count leaves the list."""
        for entry in self._entries:
            thread = entry.thread
            if thread.id == thread_id and isinstance(thread, MarkedThread) and thread.unread:
                entry.thread = thread.model_copy(update={"unread": 0})
                entry.option = None  # drawn again with the count gone
                if self.is_mounted:
                    self._rebuild()

    @property
    def hits(self) -> list[SearchHit]:
        """The server's matches shown for the filter's current words."""
        if self._hits is None or isinstance(self._hits[1], str):
            return []
        return list(self._hits[1])

    def show_hits(self, query: str, hits: Sequence[SearchHit] | str) -> None:
        """Show what the server found for `query` (or why it could not search), unless the
        filter has moved on since."""
        if query != self._query():
            return
        self._hits = (query, hits)
        if self.is_mounted:
            self._rebuild()

    def highlight_thread(self, thread_id: str) -> None:
        """Move the highlight to a thread, if it is shown."""
        option_id = _THREAD_PREFIX + thread_id
        self._highlighted_id = option_id
        if self.is_mounted:
            with suppress(OptionDoesNotExist):  # filtered out: the highlight waits for it
                self.options.highlighted = self.options.get_option_index(option_id)

    # --- building the list -------------------------------------------------------------

    def _matching(self) -> list[_Entry]:
        words = fold_text(self.filter_input.value).split()
        if not words:
            return self._entries
        return [e for e in self._entries if all(word in e.key for word in words)]

    def _query(self) -> str:
        return one_line(self.filter_input.value)

    def _hit_options(self) -> list[Option | None]:
        """The server's matches under the titles: a rule, then one row per match."""
        query = self._query()
        if not self.searchable or len(query) < MIN_SEARCH_CHARS:
            return []
        options: list[Option | None] = [None]
        if self._hits is None or self._hits[0] != query:
            text = Content.styled(_("Searching the messages…"), "$text-muted")
            return [*options, Option(text, id="search-state", disabled=True)]
        found = self._hits[1]
        if isinstance(found, str):
            text = Content.styled(found, "$text-warning")
            return [*options, Option(text, id="search-state", disabled=True)]
        if not found:
            text = Content.styled(_("No messages match."), "$text-muted")
            return [*options, Option(text, id="search-state", disabled=True)]
        for index, hit in enumerate(found):
            options.append(Option(HitRow(hit), id=f"{_HIT_PREFIX}{index}"))
        return options

    def _rebuild(self, fresh: bool = False) -> None:
        """Show the threads that match the filter; `fresh` recomputes every row (ages)."""
        now = self._now()
        options: list[Option | None] = []
        seen: set[str] = set()
        for entry in self._matching():
            thread_id = entry.thread.id
            if thread_id in seen:  # a duplicate id would make OptionList raise
                continue
            seen.add(thread_id)
            if entry.option is None or fresh:
                row = ThreadRow(entry.thread, now, self._tz)
                entry.option = Option(row, id=_THREAD_PREFIX + thread_id)
            options.append(entry.option)
        hit_options = self._hit_options()
        if not seen and not hit_options:
            text = (
                _("No threads match the filter.")
                if self.filter_input.value
                else _("No threads yet.")
            )
            options.append(Option(Content(text), id="no-threads", disabled=True))
        options.extend(hit_options)
        keep = self._highlighted_id
        self.options.set_options(options)
        # Default to the newest (or best matching) thread: opening one is the common move.
        index = 0 if seen or hit_options else None
        if keep is not None:
            with suppress(OptionDoesNotExist):
                index = self.options.get_option_index(keep)
        self.options.highlighted = index
        self._highlighted_id = keep

    # --- events and actions ------------------------------------------------------------

    @on(Input.Changed, "#thread-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        event.stop()
        if self._search_timer is not None:
            self._search_timer.stop()
            self._search_timer = None
        query = self._query()
        if self.searchable and len(query) >= MIN_SEARCH_CHARS:
            self._search_timer = self.set_timer(SEARCH_DELAY, partial(self._ask_server, query))
        self._rebuild()

    def _ask_server(self, query: str) -> None:
        self._search_timer = None
        if query == self._query():
            self.post_message(self.SearchRequested(self, query))

    @on(Input.Submitted, "#thread-filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        matching = self._matching()
        if matching:
            self.highlight_thread(matching[0].thread.id)
            self.post_message(self.Selected(self, matching[0].thread.id))
        elif hits := self.hits:  # no title matches: the best match in the messages
            self.post_message(self.Selected(self, hits[0].thread_id, hits[0].message_id))

    @on(OptionList.OptionHighlighted, "#thread-options")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        if event.option.id and event.option.id != "no-threads":
            self._highlighted_id = event.option.id

    @on(OptionList.OptionSelected, "#thread-options")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        option_id = event.option.id or ""
        if option_id.startswith(_HIT_PREFIX):
            hits = self.hits
            index = int(option_id.removeprefix(_HIT_PREFIX))
            if index < len(hits):
                hit = hits[index]
                self.post_message(self.Selected(self, hit.thread_id, hit.message_id))
        elif option_id.startswith(_THREAD_PREFIX):
            self.post_message(self.Selected(self, option_id.removeprefix(_THREAD_PREFIX)))

    @on(Button.Pressed, "#thread-new")
    def _new_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.post_message(self.NewRequested(self))

    @on(Button.Pressed, "#thread-find")
    def _find_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.post_message(self.FindAgentsRequested(self))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Let Esc and Down pass on unless the filter box has something to do with them."""
        if action == "find_agents":
            return self.finds_agents
        if action == "clear_filter":
            return self.filter_input.has_focus and bool(self.filter_input.value)
        if action == "focus_list":
            return self.filter_input.has_focus
        if action == "delete_thread":
            return self.highlighted_thread_id is not None
        return True

    def action_new_thread(self) -> None:
        """Ask for a new thread."""
        self.post_message(self.NewRequested(self))

    def action_find_agents(self) -> None:
        """Ask for the catalogue of agents."""
        self.post_message(self.FindAgentsRequested(self))

    def action_delete_thread(self) -> None:
        """Ask to delete the highlighted thread."""
        thread_id = self.highlighted_thread_id
        if thread_id is not None:
            self.post_message(self.DeleteRequested(self, thread_id))

    def action_focus_filter(self) -> None:
        """Put the cursor in the filter box."""
        self.filter_input.focus()

    def action_focus_list(self) -> None:
        """Move from the filter box to the first result (a thread, or a message found)."""
        options = self.options
        options.focus()
        first = next(
            (i for i in range(options.option_count) if not options.get_option_at_index(i).disabled),
            None,
        )
        if first is not None:
            options.highlighted = first

    def action_clear_filter(self) -> None:
        """Empty the filter box."""
        self.filter_input.value = ""
