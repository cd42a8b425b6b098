"""Type-ahead: what the person types before the chat's composer exists goes into it, in order.

`talkie connect URL` and `talkie demo` open straight into a chat, and a person starts typing as
soon as the window appears, before the server has answered. Until the chat screen says its
composer is ready, the app holds every typed key (text, Enter, Backspace, a new line) that would
otherwise reach a screen that is only passing by: the default screen, a connect screen that is
connecting, a chat screen still mounting. Then the keys go to the composer in the order they
were typed. A screen that asks the person something (a sign-in, a connect screen showing an
error) takes its keys as usual; what was held before waits for the composer.

A key typed before talkie put the terminal in raw mode was read by the terminal's line
discipline, which turns Enter into a line feed: such a key arrives as Ctrl+J. Typed ahead, a
Ctrl+J is taken for the Enter it almost always was (a new line is Ctrl+J only once the screen is
up).
"""

from __future__ import annotations

from textual import events
from textual.widget import Widget

__all__ = ["TYPED_KEYS", "TypeAhead"]

TYPED_KEYS = frozenset({"enter", "backspace", "ctrl+j", "shift+enter"})
"""Keys kept besides printable characters: they edit or send the message being typed."""
COOKED_ENTER = "ctrl+j"
"""Enter as a terminal not yet in raw mode hands it on (a line feed)."""


class TypeAhead:
    """The keys typed before the composer exists (inactive for an app that opens a picker)."""

    def __init__(self, active: bool) -> None:
        self._held: list[events.Key] = []
        self.waiting = active
        """True until the composer took the keys held for it."""

    @staticmethod
    def is_typed(event: events.Key) -> bool:
        """True for a key that types or sends text (not a command like Ctrl+Q or Esc)."""
        return event.is_printable or event.key in TYPED_KEYS

    def hold(self, event: events.Key) -> bool:
        """Keep `event` for the composer; True when it was kept (the caller drops it)."""
        if not self.waiting or not self.is_typed(event):
            return False
        if event.key == COOKED_ENTER:
            self._held.append(events.Key("enter", "\r"))
        else:
            self._held.append(events.Key(event.key, event.character))
        return True

    @property
    def held(self) -> int:
        """How many keys wait for the composer."""
        return len(self._held)

    def release(self, composer: Widget) -> None:
        """Hand every held key to `composer`, in order; later keys go to it directly."""
        held, self._held, self.waiting = self._held, [], False
        for event in held:
            composer.post_message(event)
