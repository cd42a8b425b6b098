"""The actions of the thread list's keys and messages, handed to their controllers.

A mixin of the chat screen, as `CallKeys` is: Textual finds a key's action and a message's
`on_*` handler on the screen, so they are the screen's own; they are written here because each
only hands on to `Threads` (the list), `Sidebar` (where it shows) or `ThreadOpening` (a new
thread). Opening a chosen thread stays the screen's: a call may hold the thread on screen.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from talkie_tui.ui.chat.opening import ThreadOpening
    from talkie_tui.ui.chat.reach import Reach
    from talkie_tui.ui.chat.sidebar import Sidebar
    from talkie_tui.ui.chat.threads import Threads
    from talkie_tui.ui.widgets.thread_list import ThreadList

__all__ = ["ThreadKeys"]


class ThreadKeys:
    """Ctrl+N starts a thread, Ctrl+B goes to the list, Ctrl+R reloads it; search, delete."""

    threads: Threads
    sidebar: Sidebar
    opening: ThreadOpening
    reach: Reach

    def action_new_thread(self) -> None:
        """Start a new thread."""
        self.opening.new()

    def on_thread_list_new_requested(self, event: ThreadList.NewRequested) -> None:
        """The list's "New thread"."""
        self.action_new_thread()

    def on_thread_list_find_agents_requested(self, event: ThreadList.FindAgentsRequested) -> None:
        """The list's "Find agents": the server's catalogue."""
        event.stop()
        self.reach.find_agents()

    def on_thread_list_search_requested(self, event: ThreadList.SearchRequested) -> None:
        """The person searched the messages of their threads."""
        self.threads.search(event.query)

    def on_thread_list_delete_requested(self, event: ThreadList.DeleteRequested) -> None:
        """A thread to delete, once the person confirms."""
        self.threads.delete(event.thread_id)

    def action_toggle_sidebar(self) -> None:
        """Ctrl+B: to the thread list (shown if hidden); from it, hide it, back to the box."""
        self.sidebar.toggle()

    def action_refresh_threads(self) -> None:
        """Reload the thread list."""
        self.refresh_threads()

    def refresh_threads(self) -> None:
        """Reload the thread list (Ctrl+R, and after anything that may have changed it)."""
        self.threads.refresh()

    def threads_changed(self, highlight: str | None = None) -> None:
        """Reload the thread list (a call made or renamed a thread), highlighting `highlight`."""
        self.threads.refresh(highlight)
