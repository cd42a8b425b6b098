"""The thread list beside the chat screen's transcript: shown or hidden.

Narrow terminals give the transcript the room, until the person asks for the threads; Ctrl+B
goes to the list (shown if hidden) and, from it, hides it and goes back to the composer. The
person's own toggle wins over the width from then on.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.css.query import NoMatches

from talkie_tui.ui.widgets.header import WIDE

if TYPE_CHECKING:
    from talkie_tui.ui.widgets.composer import Composer
    from talkie_tui.ui.widgets.thread_list import ThreadList

__all__ = ["Sidebar"]


class Sidebar:
    """Whether the thread list of one chat screen shows."""

    def __init__(
        self, thread_list: Callable[[], ThreadList], composer: Callable[[], Composer], shown: bool
    ) -> None:
        self._list = thread_list
        self._composer = composer
        self._shown = shown  # asked for (a setting), where the width allows
        self._chosen: bool | None = None  # the person's own toggle

    def mounted(self) -> None:
        """The list as asked for, before any width is known."""
        self._list().display = self._shown

    def resized(self, width: int) -> None:
        """Shown where the terminal is wide enough, unless the person chose."""
        if self._chosen is None:
            # A resize may arrive before compose: no list yet is no error.
            with contextlib.suppress(NoMatches):
                self._list().display = self._shown and width >= WIDE

    def toggle(self) -> None:
        """Ctrl+B: to the thread list (shown if hidden); from it, hide it, back to the box."""
        sidebar = self._list()
        if sidebar.display and sidebar.has_focus_within:
            sidebar.display = self._chosen = False
            self._composer().focus()
            return
        sidebar.display = self._chosen = True
        sidebar.options.focus()
