"""The person's threads in the chat screen's list (§9): loaded from the server, deleted on request.

The screen routes the list's `DeleteRequested`, Ctrl+R and the moments a thread may have come
or changed (a sent message, a call, a new sign-in) here; opening a thread stays the screen's.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Protocol

from talkie_tui.backends.base import Searches
from talkie_tui.core.errors import TalkieError
from talkie_tui.i18n import _
from talkie_tui.ui.chat.host import ChatHost
from talkie_tui.ui.screens.confirm import ConfirmScreen

if TYPE_CHECKING:
    from collections.abc import Callable

    from talkie_tui.backends.base import Backend
    from talkie_tui.ui.widgets.thread_list import ThreadList

__all__ = ["Threads", "ThreadsHost"]


class ThreadsHost(ChatHost, Protocol):
    """What the thread list needs of the screen it is on; `ChatScreen` is one."""

    def action_new_thread(self) -> None:
        """Start a new thread (the one on screen was deleted)."""


class Threads:
    """The thread list of one chat screen, and the deletion of a thread."""

    def __init__(
        self, host: ThreadsHost, backend: Backend, thread_list: Callable[[], ThreadList]
    ) -> None:
        self._host = host
        self._backend = backend
        self._list = thread_list  # a getter: the screen composes the widget after this is made

    def refresh(self, highlight: str | None = None) -> None:
        """Reload the thread list; `highlight` a thread that a call made or renamed."""
        self._host.run_worker(
            self._load, name="refresh_threads", group="threads", exclusive=True, exit_on_error=False
        )
        if highlight is not None:
            self._list().highlight_thread(highlight)

    async def _load(self) -> None:
        try:
            threads = await self._backend.threads()
        except TalkieError as error:
            if self._host.sign_in_needed(error):
                return
            self._host.notify(
                _("Threads could not be loaded: {error}").format(error=error.message),
                severity="warning",
                markup=False,
            )
            return
        thread_list = self._list()
        thread_list.set_threads(threads)
        # The thread on screen is the highlighted row once it is listed (a hub's conversation
        # chosen by the first message, a new thread that got its id), not "New thread".
        open_id = self._host.session.thread_id
        if open_id is not None and any(thread.id == open_id for thread in threads):
            thread_list.highlight_thread(open_id)
            thread_list.seen(open_id)

    def seen(self, thread_id: str) -> None:
        """The thread on screen is being read: its unread count leaves the list."""
        self._list().seen(thread_id)

    def search(self, query: str) -> None:
        """Ask the server for messages matching `query`; the list shows what it finds."""
        if not isinstance(self._backend, Searches):
            return
        self._host.run_worker(
            partial(self._search, self._backend, query),
            name="search_threads",
            group="threads-search",
            exclusive=True,  # a newer query replaces the one still on its way
            exit_on_error=False,
        )

    async def _search(self, backend: Searches, query: str) -> None:
        try:
            hits = await backend.search(query)
        except TalkieError as error:
            if self._host.sign_in_needed(error):
                return
            reason = _("The server could not search: {error}").format(error=error.message)
            self._list().show_hits(query, reason)
            return
        self._list().show_hits(query, hits)

    def delete(self, thread_id: str) -> None:
        """Delete a thread after the person confirms."""
        self._host.run_worker(
            partial(self._delete, thread_id),
            name="delete_thread",
            group="threads-delete",
            exit_on_error=False,
        )

    async def _delete(self, thread_id: str) -> None:
        host = self._host
        confirmed = await host.app.push_screen_wait(
            ConfirmScreen(
                _("Delete this thread?"),
                _(
                    "The thread and its messages are deleted on the server. "
                    "Actions still waiting for a decision are cancelled."
                ),
                confirm_label=_("Delete"),
            )
        )
        if not confirmed:
            return
        try:
            await self._backend.delete_thread(thread_id)
        except TalkieError as error:
            if host.sign_in_needed(error):
                return
            host.notify(
                _("Not deleted: {error} {hint}").format(error=error.message, hint=error.retry_hint),
                severity="error",
                markup=False,
            )
            return
        if host.session.thread_id == thread_id:
            host.action_new_thread()
        host.notify(_("Thread deleted."), markup=False)
        self.refresh()
